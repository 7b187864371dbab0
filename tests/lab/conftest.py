"""Fixtures of the lab's own tests: a fake Cloudflare of their own (in a temporary directory, on a free port),
and helpers that run `scripts/lab` for an isolated lab instance."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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


class ClusterRun:
    """tests/lab/cluster_lab.sh (a three-node lab in private mount and network namespaces: its own dockerds, swarm,
    bridge, edge and fake Cloudflare; nothing of the shared lab) started in the background as soon as its test is
    selected (under xdist: when its worker starts the lab's tests), so its ~100 s of daemons starting and swarm
    converging overlap the tests before it (tests/conftest.py runs it last). Output goes to files (a pipe nobody reads
    could fill and stall it)."""

    SCRIPT = Path(__file__).with_name("cluster_lab.sh")
    TIMEOUT = 570.0

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="graphsite-cluster-"))
        self.started = time.monotonic()
        with (self.work / "stdout").open("wb") as out, (self.work / "stderr").open("wb") as err:
            self.process = subprocess.Popen(
                ["unshare", "--mount", "--net", "--fork", str(self.SCRIPT), str(CHECKOUT), str(self.work),
                 "tests/publisher/cluster", "-q"],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True,
                env={**os.environ, "LAB_NODES": "3"})

    def result(self) -> subprocess.CompletedProcess[str]:
        """Wait for the run (within TIMEOUT of its start) and return what it printed."""
        try:
            self.process.wait(max(1.0, self.TIMEOUT - (time.monotonic() - self.started)))
        except subprocess.TimeoutExpired:
            self.stop()
        return subprocess.CompletedProcess(self.process.args, self.process.returncode,
                                           (self.work / "stdout").read_text(errors="replace"),
                                           (self.work / "stderr").read_text(errors="replace"))

    def stop(self) -> None:
        """Stop a run still going (the session ended first): INT to its process group ends the inner pytest (a
        deploy in it undoes itself) and lets the script's trap take its lab down (~15 s); KILL what is left after
        two minutes."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(30)

    def remove(self) -> None:
        self.stop()
        subprocess.run(["rm", "-rf", str(self.work)], check=False)  # root-owned overlay files: not shutil


_cluster_runs: list[ClusterRun] = []


def cluster_lab_possible() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or not cluster_lab_possible():
        return
    if any("cluster_run" in getattr(item, "fixturenames", ()) for item in session.items):
        starts = getattr(session.config, "lab_unit_starts", None)  # tests/conftest.py's, when it is loaded
        if os.environ.get("PYTEST_XDIST_WORKER") and starts is not None:  # every worker collects it; the one
            starts.append(lambda: _cluster_runs.append(ClusterRun()))  # that runs its unit starts it
        else:
            _cluster_runs.append(ClusterRun())


def pytest_sessionfinish(session: pytest.Session) -> None:
    while _cluster_runs:
        _cluster_runs.pop().remove()


@pytest.fixture
def cluster_run():
    """The background cluster run's output and work directory (started here when collection did not start it)."""
    if not cluster_lab_possible():
        message = "the cluster lab test needs root and unshare (private mount and network namespaces)"
        if os.environ.get("GRAPHSITE_LAB_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    if not _cluster_runs:
        _cluster_runs.append(ClusterRun())
    run = _cluster_runs.pop()
    try:
        yield run.result(), run.work
    finally:
        run.remove()
