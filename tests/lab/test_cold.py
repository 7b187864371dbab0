"""A cold `scripts/lab up` from nothing, then `down`, in private mount and network namespaces: the lab starts a
dockerd of its own, initialises a swarm, creates the network, builds the image, and `down` stops and removes
every one of them. This is the path CI takes on a fresh machine, proven without touching the shared daemon."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from graphsite_lab.instance import CHECKOUT
from graphsite_lab.processes import is_ours

pytestmark = pytest.mark.lab


@pytest.fixture
def cold_run(tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        message = "the cold lab test needs root and unshare (private mount and network namespaces)"
        if os.environ.get("GRAPHSITE_LAB_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    script = Path(__file__).with_name("cold_lab.sh")
    done = subprocess.run(["unshare", "--mount", "--net", "--fork", str(script), str(CHECKOUT), str(tmp_path)],
                          capture_output=True, text=True, timeout=240, check=False)
    yield done, tmp_path
    subprocess.run(["rm", "-rf", str(tmp_path / "docker")], check=False)


def test_cold_up_creates_everything_and_down_removes_everything(cold_run):
    done, work = cold_run
    markers = dict(re.findall(r"^@@(\S+) (\d+)$", done.stdout, re.MULTILINE))
    assert markers.get("up") == "0", done.stdout + done.stderr
    print(re.search(r"Lab ready in .*", done.stderr).group(0))  # the cold time, for the record
    assert markers["up-again"] == "0" and "Nothing changed" in done.stderr
    assert markers["status"] == "0", done.stdout
    state = json.loads((work / "state-after-up.json").read_text())
    assert state["swarm_initialized"] is True
    assert state["dockerd_pid"] and state["network_id"] and state["image_id"] and state["edge_id"]
    assert markers["down"] == "0", done.stderr
    for part in ("fake Cloudflare", "edge", "network", "swarm", "docker daemon"):
        assert re.search(rf"^\s+{part}\s+(stopped|removed|left)$", done.stderr, re.MULTILINE), (part, done.stderr)
    assert markers["daemon-after-down"] != "0"
    assert not is_ours(state["dockerd_pid"], state["dockerd_path"])
    assert not is_ours(state["cloudflare_pid"], "graphsite_lab.cfserver")
    assert list((work / "docker" / "containers").iterdir()) == []
    assert not (work / "docker" / "swarm" / "state.json").exists()
