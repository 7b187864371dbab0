"""What of a lab worker can outlive its daemon, found from the kernel's own tables: processes (dockerd,
containerd, the shims and every container process under them), mounts, namespaces, links, directories, swarm
nodes. `remove_worker` kills and unmounts what is found; `residue` is the proof that nothing is left."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite_lab import processes
from graphsite_lab.docker import docker

if TYPE_CHECKING:
    from graphsite_lab.cluster import ClusterPlan, Worker


def link_exists(name: str) -> bool:
    done = subprocess.run(["ip", "link", "show", "dev", name], capture_output=True, timeout=30, check=False)
    return done.returncode == 0


def netns_exists(name: str) -> bool:
    return Path("/run/netns", name).exists()


def mounts_under(root: Path) -> list[str]:
    """Return the mount points at or under `root`, deepest first."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == str(root) or point.startswith(f"{root}/"):
            found.append(point)
    return sorted(found, key=len, reverse=True)


def leftover_pids(worker: Worker) -> list[int]:
    """Return live processes of the worker: those whose command line names its directories (dockerd, containerd,
    the shims) and every descendant of those (the containers' processes, which a killed daemon leaves running)."""
    markers, parents, found = (f"{worker.root}/", f"{worker.run}/"), {}, set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if any(marker in part for part in processes.command_line(pid) for marker in markers):
            found.add(pid)
        try:
            parents[pid] = int(next(line.split()[1] for line in (entry / "status").read_text().splitlines()
                                    if line.startswith("PPid:")))
        except (OSError, StopIteration, ValueError):
            continue
    for pid in parents:  # descendants: walk up from every process until a found one or the top
        chain, cursor = [], pid
        while cursor in parents and cursor not in found and cursor not in chain:
            chain.append(cursor)
            cursor = parents[cursor]
        if cursor in found:
            found.update(chain)
    return sorted(found)


def kill_leftovers(worker: Worker, wait: float = 10) -> None:
    """SIGKILL what a killed dockerd left behind (containerd, shims): they name the worker's directory."""
    for pid in leftover_pids(worker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    while leftover_pids(worker) and time.monotonic() < deadline:
        time.sleep(0.1)


def residue(plan: ClusterPlan, node_ids: list[str]) -> list[str]:
    """Return what of the cluster is still there (empty: nothing): processes, namespaces, links, directories,
    swarm nodes."""
    found = [f"process {pid}" for worker in plan.workers for pid in leftover_pids(worker)]
    found += [f"namespace {w.netns}" for w in plan.workers if netns_exists(w.netns)]
    found += [f"link {name}" for name in [plan.bridge, *(w.veth for w in plan.workers)] if link_exists(name)]
    found += [f"directory {d}" for w in plan.workers for d in (w.root, w.run) if d.exists()]
    found += [f"mount {point}" for w in plan.workers for d in (w.root, w.run) for point in mounts_under(d)]
    listed = docker("node", "ls", "--quiet", check=False).stdout.split()
    found += [f"swarm node {ident}" for ident in node_ids if ident and any(ident.startswith(n) for n in listed)]
    return found


