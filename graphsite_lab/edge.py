"""The edge that stands in for Traefik: a Caddy container on the overlay network, configured through its
admin socket by the routes watcher (`graphsite_lab.traefik`), as pure renderers (its first configuration,
its `docker run` arguments)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from graphsite_lab.instance import LabInstance
from graphsite_lab.traefik.files import Dynamic
from graphsite_lab.traefik.translate import EdgeSettings, caddy_config

# Ports inside the edge container: unprivileged, so the edge runs as the lab directory's owner.
INSIDE_HTTPS, INSIDE_HTTP = 8443, 8080
CA_ROOT = "caddy/pki/authorities/local/root.crt"  # under the edge's data directory
ADMIN_SOCKET = "edge/config/admin.sock"  # under the lab directory; /config/admin.sock inside the container
SETTINGS = EdgeSettings(https_port=INSIDE_HTTPS, http_port=INSIDE_HTTP, admin_listen="unix//config/admin.sock")


def edge_settings(task_subnet: str = "") -> EdgeSettings:
    """Return the edge's settings; with `task_subnet` (the lab overlay's), every router also serves the lab's
    per-task route (translate.task_route: a lab aid for `verify`, not Traefik behaviour)."""
    return replace(SETTINGS, task_subnet=task_subnet)


def edge_config() -> str:
    """Return the edge's first configuration: no route yet (every host gets Traefik's 404), the lab CA and
    the default certificate's CA made at start, the admin API on a socket in its config directory."""
    return json.dumps(caddy_config(Dynamic(), SETTINGS).config, indent=1, sort_keys=True) + "\n"


def edge_fingerprint(lab: LabInstance, config: str) -> str:
    """Return a short hash of everything the edge container is made from (a change means re-create)."""
    made_of = "\n".join([config, lab.image, lab.network, str(lab.https_port), str(lab.http_port)])
    return hashlib.sha256(made_of.encode()).hexdigest()[:16]


def edge_run_args(lab: LabInstance, uid: int, gid: int, fingerprint: str) -> list[str]:
    """Return the `docker run` arguments of the edge (no restart policy: a stale edge never holds the ports)."""
    edge = lab.path("edge")
    return [
        "run", "--detach", "--name", lab.edge_name, "--user", f"{uid}:{gid}",
        "--network", lab.network,
        "--publish", f"127.0.0.1:{lab.https_port}:{INSIDE_HTTPS}",
        "--publish", f"127.0.0.1:{lab.http_port}:{INSIDE_HTTP}",
        "--mount", f"type=bind,source={edge / 'data'},target=/data",
        "--mount", f"type=bind,source={edge / 'config'},target=/config",
        "--mount", f"type=bind,source={edge / 'caddy.json'},target=/etc/caddy/caddy.json,readonly",
        "--env", "HOME=/data", "--env", "XDG_DATA_HOME=/data", "--env", "XDG_CONFIG_HOME=/config",
        "--label", "graphsite.lab=edge", "--label", f"graphsite.lab.dir={lab.root}",
        "--label", f"graphsite.lab.fingerprint={fingerprint}",
        lab.image, "caddy", "run", "--config", "/etc/caddy/caddy.json",
    ]
