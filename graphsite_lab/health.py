"""`scripts/lab status`: each part of the lab and whether it answers, from the systems themselves."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass

from graphsite.errors import GraphsiteError
from graphsite_lab import docker, probe, processes
from graphsite_lab.instance import LabInstance


@dataclass(frozen=True)
class Part:
    name: str
    ok: bool
    detail: str


def _check(name: str, test: Callable[[], tuple[bool, str]]) -> Part:
    try:
        ok, detail = test()
    except (GraphsiteError, OSError, ssl.SSLError, ValueError) as exc:
        ok, detail = False, str(exc).splitlines()[0]
    return Part(name, ok, detail)


def _daemon() -> tuple[bool, str]:
    if not docker.daemon_answers():
        return False, "does not answer (scripts/lab up starts it)"
    return True, "docker " + docker.docker("version", "--format", "{{.Server.Version}}").stdout.strip()


def _swarm() -> tuple[bool, str]:
    state, manager = docker.swarm_state()
    return state == "active" and manager, f"{state}, {'manager' if manager else 'not a manager'}"


def _edge(lab: LabInstance) -> tuple[bool, str]:
    found = docker.container(lab.edge_name)
    if not found:
        return False, f"no container {lab.edge_name}"
    if found["state"] != "running":
        return False, f"{lab.edge_name} is {found['state']}"
    answer = probe.fetch(f"status-probe.{lab.domain}", lab.https_port, ca=None, insecure=True)
    # No router matches status-probe: the edge itself answers Traefik's 404 (with its default certificate).
    return answer.status == 404, f"{lab.edge_name} answers https on 127.0.0.1:{lab.https_port} (HTTP {answer.status})"


def _ca(lab: LabInstance) -> tuple[bool, str]:
    path = lab.path("ca.pem")
    if not path.is_file():
        return False, f"{path} missing"
    ssl.create_default_context(cafile=str(path))
    return True, str(path)


def _cloudflare(lab: LabInstance) -> tuple[bool, str]:
    health = processes.cloudflare_health(lab)
    if not health:
        return False, f"nothing answers on {lab.cf_base}"
    stale = "" if health.get("code") == processes.lab_code() else "; stale code: `scripts/lab up` restarts it"
    return True, f"{lab.cf_base}/client/v4 (pid {health.get('pid')}, zone {health.get('zone_id')}{stale})"


def _routes(lab: LabInstance) -> tuple[bool, str]:
    """The Traefik stand-in: running, and the dynamic directory loaded (or the file and key that block it)."""
    status = processes.routes_health(lab)
    if status is None:
        return False, f"no routes watcher writes {lab.path('edge-routes.json')} (scripts/lab up starts it)"
    stale = "" if status.get("code") == processes.lab_code() else "; stale code: `scripts/lab up` restarts it"
    rejected = status.get("rejected") or []
    if rejected:
        first = rejected[0]
        where = f"{first['file']}: {first['key']}: " if first.get("key") else f"{first['file']}: "
        more = f" (and {len(rejected) - 1} more)" if len(rejected) > 1 else ""
        return False, (f"REJECTED {where}{first['message']}{more}; the edge keeps the previous configuration "
                       f"(pid {status.get('pid')}{stale})")
    applied = status.get("applied") or {}
    if not applied:
        return False, f"nothing loaded into the edge yet: {status.get('edge')}"
    errors = applied.get("router_errors") or []
    noted = f"; {len(errors)} router errors, first: {errors[0]}" if errors else ""
    return True, (f"{len(applied.get('served') or [])} router entries from {len(applied.get('files') or [])} files "
                  f"(pid {status.get('pid')}{stale}{noted})")


def _config(lab: LabInstance) -> tuple[bool, str]:
    from graphsite.config import load_config

    path = lab.path("graphsite.toml")
    if not path.is_file():
        return False, f"{path} missing"
    load_config(path, environ={})
    return True, str(path)


def _nodes(lab: LabInstance) -> list[Part]:
    """One part per worker this lab started (its daemon answers, its swarm node is Ready), and the swarm's
    node list."""
    from graphsite_lab import cluster
    from graphsite_lab.stack import load_state

    records = load_state(lab).get("workers") or {}
    if not records:
        return []
    table = {row["id"]: row for row in cluster.nodes_table()}
    plan = cluster.cluster_plan(lab, max(int(key) for key in records) + 1)
    parts = []
    for worker in plan.workers:
        node = table.get(records.get(str(worker.index), {}).get("node_id", ""), {})

        def test(worker=worker, node=node) -> tuple[bool, str]:
            answers = cluster.worker_answers(worker)
            ok = answers and node.get("status") == "Ready"
            return ok, (f"{worker.hostname} {worker.address}: dockerd {'answers' if answers else 'does not answer'}, "
                        f"node {node.get('status', 'not in the swarm')}, {node.get('availability', '-')}")
        parts.append(_check(f"worker {worker.index}", test))
    return parts


def status(lab: LabInstance) -> list[Part]:
    """Return every part with whether it answers; later parts are skipped when the daemon is down."""
    parts = [_check("docker daemon", _daemon)]
    if parts[0].ok:
        parts += [
            _check("swarm", _swarm),
            _check(f"network {lab.network}", lambda: (docker.network_id(lab.network) is not None, lab.network)),
            _check(f"image {lab.image}", lambda: (docker.image_id(lab.image) is not None, lab.image)),
            _check("edge", lambda: _edge(lab)),
            _check("routes (Traefik stand-in)", lambda: _routes(lab)),
            *_nodes(lab),
        ]
    parts += [_check("CA", lambda: _ca(lab)), _check("fake Cloudflare", lambda: _cloudflare(lab)),
              _check("config", lambda: _config(lab))]
    return parts
