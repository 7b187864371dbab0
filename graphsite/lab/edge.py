"""The edge that stands in for Traefik and its wildcard certificate: a Caddy container on the overlay network,
as pure renderers (its Caddyfile, its `docker run` arguments)."""

from __future__ import annotations

import hashlib
import ipaddress

from graphsite.lab.instance import PAGE_PORT, LabInstance

# The header by which `verify` asks the edge for one task by its overlay address (the lab's edge only).
TASK_HEADER = "X-Graphsite-Task"
# Ports inside the edge container: unprivileged, so the edge runs as the lab directory's owner.
INSIDE_HTTPS, INSIDE_HTTP = 8443, 8080
CA_ROOT = "caddy/pki/authorities/local/root.crt"  # under the edge's data directory


def task_pattern(subnet: str) -> str:
    """Return the regular expression of the IPv4 addresses in `subnet` (whole octets of its prefix fixed), so that
    the per-task route reaches the lab's overlay and nothing else; with no subnet, no address matches."""
    if not subnet:
        return "^$"
    network = ipaddress.IPv4Network(subnet, strict=False)
    fixed = str(network.network_address).split(".")[: network.prefixlen // 8]
    return "^" + r"\.".join(fixed + ["[0-9]{1,3}"] * (4 - len(fixed))) + "$"


def edge_caddyfile(domain: str, overlay_subnet: str = "") -> str:
    """Return the edge's Caddyfile: `*.<domain>` over TLS from Caddy's internal CA, proxied to
    `<first label>:20128`; http redirected permanently to https, as Dokploy's redirect-to-https does.
    A request with TASK_HEADER holding an address of the overlay `overlay_subnet` goes to that address on the page
    port instead: `verify` reaches each replica of a service through it (a lab convenience; Traefik has no such
    route)."""
    first_label = len(domain.split("."))  # {labels.0} is the last label: the first is one past the domain's
    return f"""{{
	https_port {INSIDE_HTTPS}
	http_port {INSIDE_HTTP}
	auto_https disable_redirects
	skip_install_trust
	admin off
	pki {{
		ca local {{
			intermediate_lifetime 180d
		}}
	}}
}}

*.{domain} {{
	tls {{
		issuer internal {{
			lifetime 90d
		}}
	}}
	@task header_regexp {TASK_HEADER} {task_pattern(overlay_subnet)}
	handle @task {{
		reverse_proxy {{header.{TASK_HEADER}}}:{PAGE_PORT}
	}}
	handle {{
		reverse_proxy {{labels.{first_label}}}:{PAGE_PORT}
	}}
}}

http://*.{domain} {{
	redir https://{{host}}{{uri}} permanent
}}
"""


def edge_fingerprint(lab: LabInstance, caddyfile: str) -> str:
    """Return a short hash of everything the edge container is made from (a change means re-create)."""
    made_of = "\n".join([caddyfile, lab.image, lab.network, str(lab.https_port), str(lab.http_port)])
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
        "--mount", f"type=bind,source={edge / 'Caddyfile'},target=/etc/caddy/Caddyfile,readonly",
        "--env", "HOME=/data", "--env", "XDG_DATA_HOME=/data", "--env", "XDG_CONFIG_HOME=/config",
        "--label", "graphsite.lab=edge", "--label", f"graphsite.lab.dir={lab.root}",
        "--label", f"graphsite.lab.fingerprint={fingerprint}",
        lab.image, "caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile",
    ]
