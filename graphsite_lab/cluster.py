"""A multi-node lab on one machine: N-1 workers, each a dockerd of its own in a network namespace the lab
creates, joined to the swarm of the lab's daemon (the manager) over a bridge the lab creates.

    host (manager)  gsl<tag>b  10.213.<k>.1/24
      veth gsl<tag>v<i>  <->  eth0 in netns gsl<tag>w<i>  10.213.<k>.<i+1>  (dockerd of worker i)

Addresses are private and exist only on that bridge. The plan is pure (`cluster_plan`); the effects take it.
Every step looks first and says what it did; `remove_worker` undoes one worker completely (its swarm node, its
daemon and every process started under it, its namespace and link, its directory).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graphsite_lab import LabError, background, processes
from graphsite_lab.docker import apt_install, docker, dockerd_path
from graphsite_lab.instance import LabInstance
from graphsite_lab.leftovers import kill_leftovers, link_exists, mounts_under, netns_exists

MAX_NODES = 9
SWARM_PORT = 2377
# Exec roots (sockets, containerd's state) live here: a unix socket path holds 107 bytes, and containerd's
# `<exec root>/containerd/containerd.sock.ttrpc` under a deep lab directory (a pytest tmp_path) would not fit.
RUN_ROOT = Path("/run/gslab")


@dataclass(frozen=True)
class Worker:
    """One worker node: where its namespace, link, daemon and files are."""

    index: int  # 1-based; node 0 is the manager
    netns: str
    veth: str
    address: str  # on the lab bridge, without prefix length
    hostname: str
    root: Path  # data root and log, under the lab directory
    run: Path  # exec root, socket and pidfile, under RUN_ROOT

    @property
    def socket(self) -> str:
        return f"unix://{self.run / 'docker.sock'}"

    @property
    def markers(self) -> tuple[str, str]:
        """What the worker's dockerd command line holds (a recycled pid never matches)."""
        return dockerd_path() or "dockerd", f"--data-root {self.root / 'data'}"


@dataclass(frozen=True)
class ClusterPlan:
    bridge: str
    host_address: str  # the manager's address on the bridge: the swarm's advertise address
    prefix: int
    workers: tuple[Worker, ...]


def lab_tag(lab: LabInstance) -> str:
    """Return 5 hex digits naming this lab's interfaces and namespaces (interface names hold 15 characters)."""
    return hashlib.sha256(str(lab.root).encode()).hexdigest()[:5]


def cluster_plan(lab: LabInstance, nodes: int) -> ClusterPlan:
    """Return the bridge, addresses and workers of a lab of `nodes` nodes (the manager is one of them)."""
    if not 1 <= nodes <= MAX_NODES:
        raise LabError(f"--nodes: expected 1-{MAX_NODES}, got {nodes}", hint="LAB_NODES sets it too; 3 is what CI uses")
    tag = lab_tag(lab)
    subnet = 1 + int(tag, 16) % 250  # 10.213.<1-250>.0/24: one per lab directory
    workers = tuple(Worker(index=i, netns=f"gsl{tag}w{i}", veth=f"gsl{tag}v{i}", address=f"10.213.{subnet}.{i + 1}",
                           hostname=f"gslab-{lab.suffix or tag}-w{i}", root=lab.path(f"nodes/w{i}"),
                           run=RUN_ROOT / f"{tag}w{i}")
                    for i in range(1, nodes))
    return ClusterPlan(bridge=f"gsl{tag}b", host_address=f"10.213.{subnet}.1", prefix=24, workers=workers)


def _run(*argv: str, check: bool = True, timeout: float = 60,
         unless: Callable[[], bool] | None = None) -> subprocess.CompletedProcess[str]:
    """Return the finished command `argv`; with `check`, a failure is an error unless `unless()` then holds (what
    the command was to do came about by itself)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise LabError(f"`{argv[0]}` is not installed", hint="a multi-node lab needs iproute2 and util-linux") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"`{' '.join(argv[:4])}` did not finish in {timeout:.0f} s") from None
    if check and done.returncode != 0 and not (unless is not None and unless()):
        raise LabError(f"`{' '.join(argv[:6])}` failed: {done.stderr.strip() or done.stdout.strip()}")
    return done


def ensure_bridge(plan: ClusterPlan) -> str:
    """Create the lab bridge with the manager's address on it; return 'present' or 'created'."""
    if os.geteuid() != 0:
        raise LabError("a multi-node lab needs root: it creates network namespaces, a bridge and daemons",
                       hint="run `scripts/lab up --nodes N` as root, or use --nodes 1")
    if not shutil.which("ip") and not shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin:/bin"):
        apt_install("iproute2")  # docker.io does not depend on it; a minimal machine may lack it
    cidr = f"{plan.host_address}/{plan.prefix}"
    if link_exists(plan.bridge):
        if cidr not in _run("ip", "-o", "addr", "show", "dev", plan.bridge).stdout:
            _run("ip", "addr", "add", cidr, "dev", plan.bridge)
        return "present"
    _run("ip", "link", "add", plan.bridge, "type", "bridge")
    _run("ip", "addr", "add", cidr, "dev", plan.bridge)
    _run("ip", "link", "set", plan.bridge, "up")
    return "created"


def remove_bridge(plan: ClusterPlan) -> str:
    if not link_exists(plan.bridge):
        return "absent"
    _run("ip", "link", "del", plan.bridge)
    return "removed"


def worker_docker(worker: Worker, *args: str, check: bool = True, timeout: float = 60):
    return docker("-H", worker.socket, *args, check=check, timeout=timeout)


def worker_answers(worker: Worker, timeout: float = 10) -> bool:
    """True when the worker's daemon answers (a daemon still initialising holds requests: that is not yet)."""
    if not (worker.run / "docker.sock").exists():
        return False
    try:
        done = worker_docker(worker, "version", "--format", "{{.Server.Version}}", check=False, timeout=timeout)
    except LabError:
        return False
    return done.returncode == 0


def _ensure_netns(plan: ClusterPlan, worker: Worker) -> None:
    if not netns_exists(worker.netns):
        _run("ip", "netns", "add", worker.netns)
    inside = ("ip", "-n", worker.netns)
    if not link_exists(worker.veth):
        _run("ip", "link", "add", worker.veth, "type", "veth", "peer", "name", "eth0", "netns", worker.netns)
        _run(*inside, "addr", "add", f"{worker.address}/{plan.prefix}", "dev", "eth0")
        _run(*inside, "link", "set", "eth0", "up")
        _run(*inside, "link", "set", "lo", "up")
        _run("ip", "link", "set", worker.veth, "master", plan.bridge, "up")


def start_worker_daemon(worker: Worker, wait: float = 120) -> int:
    """Start the worker's dockerd inside its namespace (its own hostname, data and exec roots, socket, pidfile,
    containerd); return its pid once it answers. `nsenter --net` keeps /sys, so the daemon sees the cgroups."""
    (worker.root / "data").mkdir(parents=True, exist_ok=True)
    worker.run.mkdir(parents=True, exist_ok=True)
    argv = ["nsenter", f"--net=/run/netns/{worker.netns}", "unshare", "--uts", "--",
            "sh", "-c", 'hostname "$0" && exec "$@"', worker.hostname,  # the script is fixed; values are arguments
            dockerd_path() or "dockerd", "--data-root", str(worker.root / "data"),
            "--exec-root", str(worker.run / "exec"), "-H", worker.socket,
            "--pidfile", str(worker.run / "docker.pid")]
    # nsenter, unshare and sh exec: the pid is dockerd's
    return background.start(argv, worker.root / "dockerd.log", what=f"the dockerd of worker {worker.index}",
                            ready=lambda _: worker_answers(worker), wait=wait, poll=0.3,
                            late=f"the dockerd of worker {worker.index} did not answer within {wait:.0f} s")


def _join(plan: ClusterPlan, worker: Worker) -> str:
    """Join the worker to the manager's swarm unless it is in one; return its swarm node id."""
    state = worker_docker(worker, "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.NodeID}}").stdout.split()
    if state and state[0] == "active" and len(state) > 1:
        if docker("node", "inspect", state[1], "--format", "{{.ID}}", check=False).returncode == 0:
            return state[1]
        worker_docker(worker, "swarm", "leave", "--force")  # a swarm of an earlier manager, gone since
    token = docker("swarm", "join-token", "--quiet", "worker").stdout.strip()
    worker_docker(worker, "swarm", "join", "--token", token, "--advertise-addr", worker.address,
                   f"{plan.host_address}:{SWARM_PORT}")
    return worker_docker(worker, "info", "--format", "{{.Swarm.NodeID}}").stdout.strip()


def _load_image(worker: Worker, image: str) -> str:
    """Copy the page image onto the worker (no registry: docker save | docker load); 'present' or 'loaded'."""
    if worker_docker(worker, "image", "inspect", image, check=False).returncode == 0:
        return "present"
    save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        load = subprocess.run(["docker", "-H", worker.socket, "load", "--quiet"], stdin=save.stdout,
                              capture_output=True, text=True, timeout=180, check=False)
    finally:
        if save.stdout:
            save.stdout.close()
        save.wait(60)
    if load.returncode != 0 or save.returncode != 0:
        raise LabError(f"cannot load {image} onto worker {worker.index}: {load.stderr.strip()}")
    return "loaded"


def ensure_worker(plan: ClusterPlan, worker: Worker, image: str, record: dict) -> str:
    """Bring one worker up (namespace, daemon, swarm membership, image); fill `record`; return what it did."""
    actions = []
    if not netns_exists(worker.netns) or not link_exists(worker.veth):
        actions.append("namespace")
    _ensure_netns(plan, worker)
    if not worker_answers(worker):
        record["pid"] = start_worker_daemon(worker)
        actions.append("dockerd")
    node = _join(plan, worker)
    if record.get("node_id") != node:
        actions.append("joined")
    record["node_id"] = node
    if _load_image(worker, image) == "loaded":
        actions.append("image")
    _wait_ready(worker, node)
    return "started (" + ", ".join(actions) + ")" if actions else "running"


def _wait_ready(worker: Worker, node: str, wait: float = 60) -> None:
    """Wait until the manager sees the worker's node Ready (the scheduler places tasks only on Ready nodes)."""
    deadline = time.monotonic() + wait
    while True:
        done = docker("node", "inspect", node, "--format", "{{.Status.State}}", check=False)
        if done.stdout.strip() == "ready":
            return
        if time.monotonic() > deadline:
            raise LabError(f"worker {worker.index} ({worker.hostname}) is not Ready after {wait:.0f} s: "
                           f"{done.stdout.strip() or done.stderr.strip()}", hint=f"read {worker.root / 'dockerd.log'}")
        time.sleep(0.3)


def remove_worker(plan: ClusterPlan, worker: Worker, record: dict) -> str:
    """Remove everything of one worker: its node from the swarm, its daemon and what runs under it, its
    namespace and link, its directory; return 'removed' or 'absent'."""
    found = bool(record) or netns_exists(worker.netns) or worker.root.exists() or worker.run.exists()
    if worker_answers(worker):
        worker_docker(worker, "swarm", "leave", "--force", check=False, timeout=60)
    if record.get("pid"):
        processes.stop(record["pid"], *worker.markers, wait=30)
    kill_leftovers(worker)
    if record.get("node_id"):
        docker("node", "rm", "--force", record["node_id"], check=False)
    if netns_exists(worker.netns):
        _run("ip", "netns", "del", worker.netns)
    if link_exists(worker.veth):
        # removing the namespace takes the pair's other end with it, and the kernel may take this end too while
        # this runs: a link gone by itself is removed; one still there is an error
        _run("ip", "link", "del", worker.veth, unless=lambda: not link_exists(worker.veth))
    for directory in (worker.root, worker.run):
        for mountpoint in mounts_under(directory):  # overlay2 layers and sandbox namespaces the daemon left
            _run("umount", "--lazy", mountpoint, check=False)
        if directory.exists():
            try:
                shutil.rmtree(directory)
            except OSError as exc:
                raise LabError(f"cannot remove {directory}: {exc.strerror}",
                               hint=f"`grep {directory} /proc/self/mountinfo` shows what is still mounted") from None
    with contextlib.suppress(OSError):  # shared by every lab: removed once empty
        RUN_ROOT.rmdir()
    return "removed" if found else "absent"


def swarm_advertise_address() -> str:
    return docker("info", "--format", "{{.Swarm.NodeAddr}}").stdout.strip()


def nodes_table() -> list[dict[str, str]]:
    """Return every swarm node: id, hostname, status, availability, role."""
    fmt = "{{.ID}}|{{.Hostname}}|{{.Status}}|{{.Availability}}|{{.ManagerStatus}}"
    rows = docker("node", "ls", "--format", fmt, check=False).stdout.splitlines()
    keys = ("id", "hostname", "status", "availability", "manager")
    return [dict(zip(keys, row.split("|"), strict=False)) for row in rows if row]
