"""Fixtures of the lab's own tests: a fake Cloudflare of their own (in a temporary directory, on a free port),
and helpers that run `scripts/lab` for an isolated lab instance."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from graphsite_lab.client import LabCloudflare
from graphsite_lab.instance import CHECKOUT, LabInstance

ZONE = "lab.graphsite.test"
ZONE_ID = "0123456789abcdef0123456789abcdef"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class FakeCloudflareProcess:
    """A fake Cloudflare server in its own process, restartable on the same directory and port."""

    zone, zone_id = ZONE, ZONE_ID

    def __init__(self, lab_dir: Path) -> None:
        self.lab_dir, self.port = lab_dir, free_port()
        self.token = secrets.token_urlsafe(24)
        (lab_dir / "cf-token").write_text(self.token + "\n")
        self.process: subprocess.Popen | None = None
        self.log_from = 0  # where the current test's part of cloudflare.log begins

    @property
    def log_path(self) -> Path:
        return self.lab_dir / "cloudflare.log"

    def log(self) -> str:
        """Return the lines of cloudflare.log written since the current test began."""
        with self.log_path.open("rb") as handle:
            handle.seek(self.log_from)
            return handle.read().decode()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/client/v4"

    @property
    def control(self) -> LabCloudflare:
        return LabCloudflare(f"http://127.0.0.1:{self.port}")

    def start(self) -> None:
        argv = [sys.executable, "-m", "graphsite_lab.cfserver", "--lab-dir", str(self.lab_dir),
                "--port", str(self.port), "--zone", ZONE, "--zone-id", ZONE_ID]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(150):
            try:
                self.control.health()
                return
            except httpx.HTTPError:
                assert self.process.poll() is None, self.process.stderr.read().decode()
                time.sleep(0.1)
        raise AssertionError("the fake Cloudflare did not answer")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def unstarted_cf(tmp_path):
    """A fake Cloudflare not started yet (a test writes its state first), stopped at the end."""
    server = FakeCloudflareProcess(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def fake_cf(unstarted_cf):
    unstarted_cf.start()
    return unstarted_cf


@pytest.fixture(scope="module")
def _module_cf(tmp_path_factory):
    server = FakeCloudflareProcess(tmp_path_factory.mktemp("cloudflare"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def module_cf(_module_cf):
    """The module's fake Cloudflare (a process costs about a second to start and warm up), reset through the
    control API of this private instance before each test: no record, fault, latency or logged request of an
    earlier test reaches this one, and `log()` reads only the lines written since."""
    control = _module_cf.control
    control.reset()
    assert control.records() == [] and control.requests() == [], "the reset of the module's fake did not take"
    _module_cf.log_from = _module_cf.log_path.stat().st_size
    return _module_cf


@pytest.fixture
def run_lab():
    """Return a function running `scripts/lab <command>` for an instance (the finished process)."""

    def run(command: str, instance: LabInstance) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **instance.env(), "NO_COLOR": "1"}
        return subprocess.run([str(CHECKOUT / "scripts" / "lab"), command], capture_output=True, text=True,
                              env=env, timeout=240, check=False)

    return run


@pytest.fixture
def isolated_instance(tmp_path):
    """Return a second lab instance (own dir, free ports, own edge name) sharing daemon, swarm and image."""
    return LabInstance(root=tmp_path / "lab", https_port=free_port(), http_port=free_port(),
                       cf_port=free_port(), suffix=f"test-{secrets.token_hex(3)}")
