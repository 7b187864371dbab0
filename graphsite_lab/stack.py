"""The lab's verbs: `up` (ensure every part, say what changed), `down` (remove what up made, by id), `status`.

`.lab/state.json` records what *this lab* started or created (dockerd pid, swarm, network id, image id, edge id,
fake Cloudflare pid); `down` removes exactly that and nothing it merely found running.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from graphsite.atomic import write_atomic
from graphsite_lab import LabError, cluster, docker, leftovers, processes
from graphsite_lab.edge import CA_ROOT, edge_config, edge_fingerprint, edge_run_args
from graphsite_lab.instance import LabInstance, render_config, render_middlewares

UNCHANGED = ("present", "running")


@dataclass
class UpReport:
    steps: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return any(action not in UNCHANGED for _, action in self.steps)


def load_state(lab: LabInstance) -> dict:
    try:
        return json.loads(lab.path("state.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _save_state(lab: LabInstance, state: dict) -> None:
    write_atomic(lab.path("state.json"), json.dumps(state, indent=2, sort_keys=True) + "\n")


def _write(path: Path, text: str, mode: int = 0o644) -> str:
    """Write `text` unless the file already holds it; return 'present', 'created' or 'updated'."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return "present"
    action = "updated" if path.exists() else "created"
    write_atomic(path, text, mode=mode)
    return action


def _ensure_token(lab: LabInstance) -> str:
    path = lab.path("cf-token")
    if path.is_file() and path.read_text(encoding="utf-8").strip():
        path.chmod(0o600)
        return "present"
    write_atomic(path, secrets.token_urlsafe(30) + "\n", mode=0o600)
    return "created"


def _ensure_daemon(lab: LabInstance, state: dict) -> str:
    docker.ensure_installed()
    if docker.daemon_answers():
        return "running"
    state["dockerd_pid"] = docker.start_daemon(lab.path("dockerd.log"))
    state["dockerd_path"] = docker.dockerd_path() or "dockerd"
    return "started"


def _ensure_image(lab: LabInstance, state: dict) -> str:
    if docker.image_id(lab.image):
        return "present"
    state["image_id"] = docker.build_image(lab.image, lab.path("build"))
    return "built"


def _ensure_edge(lab: LabInstance, state: dict) -> list[tuple[str, str]]:
    edge = lab.path("edge")
    for sub in ("data", "config"):
        (edge / sub).mkdir(parents=True, exist_ok=True)
    config = edge_config()
    _write(edge / "caddy.json", config)
    fingerprint = edge_fingerprint(lab, config)
    action, ident = docker.ensure_edge(lab, edge_run_args(lab, os.getuid(), os.getgid(), fingerprint), fingerprint)
    state["edge_id"] = ident
    return [("edge", action), ("CA", _export_ca(lab))]


def _export_ca(lab: LabInstance, wait: float = 30) -> str:
    """Copy the edge's root certificate to ca.pem once Caddy has made it."""
    root = lab.path("edge") / "data" / CA_ROOT
    deadline = time.monotonic() + wait
    while not root.is_file():
        if time.monotonic() > deadline:
            raise LabError(f"the edge made no root certificate at {root} within {wait:.0f} s",
                                  hint=f"`docker logs {lab.edge_name}` tells why")
        time.sleep(0.2)
    return _write(lab.path("ca.pem"), root.read_text(encoding="utf-8"))


def _ensure_process(state: dict, key: str, markers: tuple[str, str], health: Callable[[], dict | None],
                    start: Callable[[], int]) -> str:
    """Keep a lab process of this lab running from the checkout's code: start it, or restart a stale one
    (the fake Cloudflare's records are in cloudflare-state.json, the routes are the directory: both survive)."""
    pid = state.get(key)
    ours = processes.is_ours(pid, *markers)
    action = processes.process_action(ours, health() if ours else None, processes.lab_code())
    if action == "running":
        return action
    if action == "restart" and pid:
        processes.stop(pid, *markers)
    state[key] = start()
    return "restarted (its code changed)" if action == "restart" else "started"


def _ensure_cloudflare(lab: LabInstance, state: dict) -> str:
    return _ensure_process(state, "cloudflare_pid", processes.cloudflare_markers(lab),
                           lambda: processes.cloudflare_health(lab), lambda: processes.start_cloudflare(lab))


def _ensure_routes(lab: LabInstance, state: dict) -> str:
    subnet = docker.network_subnet(lab.network)  # the per-task route's (a lab aid for verify, not Traefik's)

    def health() -> dict | None:
        found = processes.routes_health(lab)
        if found and found.get("task_subnet", "") != subnet:  # the overlay was made again: a stale watcher
            return {**found, "code": ""}
        return found
    return _ensure_process(state, "routes_pid", processes.routes_markers(lab), health,
                           lambda: processes.start_routes(lab, subnet))


def _check_advertised(plan: cluster.ClusterPlan) -> None:
    """Refuse a multi-node lab on a swarm that workers cannot reach (advertised on another address)."""
    advertised = cluster.swarm_advertise_address()
    if advertised != plan.host_address:
        raise LabError(f"the swarm advertises {advertised}, which workers in their own network namespaces cannot "
                       f"reach; a multi-node lab needs a swarm advertised on the lab bridge ({plan.host_address})",
                       hint="a swarm's advertise address cannot change without leaving it: where `scripts/lab up "
                            "--nodes N` starts the swarm itself (a fresh machine, CI) it advertises the bridge; on a "
                            "machine whose swarm others use, run tests/lab/test_cluster.py (a three-node lab in "
                            "private namespaces) or use --nodes 1")


def _ensure_workers(lab: LabInstance, plan: cluster.ClusterPlan, state: dict) -> list[tuple[str, str]]:
    """Start the plan's workers, remove the ones a bigger lab had; return what each did."""
    records, steps = state.setdefault("workers", {}), []
    wanted = {str(w.index) for w in plan.workers}
    for key in sorted(set(records) - wanted):
        extra = cluster.cluster_plan(lab, int(key) + 1).workers[-1]
        steps.append((f"worker {key}", cluster.remove_worker(plan, extra, records.pop(key))))
    # Workers are independent (their own namespace, daemon, record): they come up side by side, and a failure of
    # one is raised once every other has finished (nothing is left half-started behind the error).
    with ThreadPoolExecutor(max_workers=max(1, len(plan.workers))) as pool:
        futures = [(worker, pool.submit(cluster.ensure_worker, plan, worker, lab.image,
                                        records.setdefault(str(worker.index), {})))
                   for worker in plan.workers]
    steps.extend((f"worker {worker.index} ({worker.hostname})", future.result()) for worker, future in futures)
    return steps


def up(lab: LabInstance, nodes: int = 1) -> UpReport:
    """Bring every part of the lab up, with `nodes` swarm nodes; return what each step did (present/running:
    nothing changed)."""
    plan = cluster.cluster_plan(lab, nodes)
    started, report = time.monotonic(), UpReport()
    for directory in ("", "traefik/dynamic", "srv", "locks"):
        lab.path(directory).mkdir(parents=True, exist_ok=True)
    state = load_state(lab)
    steps = report.steps
    try:
        steps.append(("cloudflare token", _ensure_token(lab)))
        steps.append(("docker daemon", _ensure_daemon(lab, state)))
        if plan.workers and docker.swarm_state()[0] == "active":
            _check_advertised(plan)  # before anything is created for workers that could never join
        if plan.workers or state.get("bridge_created"):
            bridge = cluster.ensure_bridge(plan)
            state["bridge_created"] = state.get("bridge_created", False) or bridge == "created"
            steps.append((f"lab bridge {plan.bridge}", bridge))
        swarm = docker.ensure_swarm(plan.host_address if plan.workers else "127.0.0.1")
        if plan.workers:
            _check_advertised(plan)
        state["swarm_initialized"] = state.get("swarm_initialized", False) or swarm == "created"
        steps.append(("swarm", swarm))
        network, state_network = docker.ensure_network(lab.network)
        if network == "created":
            state["network_id"] = state_network
        steps.append((f"network {lab.network}", network))
        steps.append((f"image {lab.image}", _ensure_image(lab, state)))
        if plan.workers or state.get("workers"):
            steps.extend(_ensure_workers(lab, plan, state))
        steps.extend(_ensure_edge(lab, state))
        steps.append(("redirect-to-https middleware",
                      _write(lab.path("traefik/dynamic/middlewares.yml"), render_middlewares())))
        steps.append(("routes (Traefik stand-in)", _ensure_routes(lab, state)))
        steps.append(("fake Cloudflare", _ensure_cloudflare(lab, state)))
        steps.append(("config", _write(lab.path("graphsite.toml"), render_config(lab))))
    finally:
        _save_state(lab, state)
    report.seconds = time.monotonic() - started
    return report


def down(lab: LabInstance, purge_image: bool = False) -> list[tuple[str, str]]:
    """Remove what `up` of this lab made (by recorded id/pid); return what happened to each."""
    state, results, failure = load_state(lab), [], None
    try:
        results.extend(_remove_cluster(lab, state))
    except (LabError, OSError) as exc:  # the rest still comes down; the workers' records stay for another `down`
        failure = exc if isinstance(exc, LabError) else LabError(f"cannot remove the lab's workers: {exc}")
    if state.get("routes_pid"):
        results.append(("routes (Traefik stand-in)", processes.stop(state.pop("routes_pid"),
                                                                    *processes.routes_markers(lab))))
    if state.get("cloudflare_pid"):
        results.append(("fake Cloudflare", processes.stop(state.pop("cloudflare_pid"),
                                                          *processes.cloudflare_markers(lab))))
    lab.path("cloudflare-state.json").unlink(missing_ok=True)
    daemon = docker.daemon_answers()
    if state.get("edge_id") and daemon:
        results.append(("edge", docker.remove_container(state.pop("edge_id"))))
    if state.get("image_id") and purge_image and daemon:
        results.append(("image", docker.remove_image(state.pop("image_id"))))
    if state.get("network_id") and daemon:
        results.append(("network", docker.remove_network(state.pop("network_id"))))
    if state.pop("swarm_initialized", False) and daemon:
        docker.docker("swarm", "leave", "--force")
        results.append(("swarm", "left"))
    if state.get("dockerd_pid"):
        marker = state.pop("dockerd_path", "dockerd")
        results.append(("docker daemon", processes.stop(int(state.pop("dockerd_pid")), marker, wait=30)))
    if lab.root.is_dir():
        _save_state(lab, state)
    if failure is not None:
        raise failure
    return results


def _remove_cluster(lab: LabInstance, state: dict) -> list[tuple[str, str]]:
    """Remove every worker and the lab bridge, then prove nothing of them is left."""
    records = state.get("workers") or {}
    if not records and not state.get("bridge_created"):
        return []
    plan = cluster.cluster_plan(lab, max((int(key) for key in records), default=0) + 1)
    results = []
    for worker in plan.workers:
        results.append((f"worker {worker.index}", cluster.remove_worker(plan, worker, records.get(str(worker.index),
                                                                                                 {}))))
    if state.get("bridge_created"):
        results.append((f"lab bridge {plan.bridge}", cluster.remove_bridge(plan)))
    left = leftovers.residue(plan, [r.get("node_id", "") for r in records.values()])
    if left:
        raise LabError("the lab's workers left something behind: " + ", ".join(left),
                       hint="remove it by hand; `ip netns list`, `ip link`, `docker node ls` show what")
    state.pop("workers", None)
    state.pop("bridge_created", None)
    if lab.path("nodes").is_dir():
        lab.path("nodes").rmdir()
    results.append(("workers' residue", "none"))
    return results
