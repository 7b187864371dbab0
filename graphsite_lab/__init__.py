"""The lab: a disposable copy of the production stack on one machine (Docker Swarm, an edge Caddy with an
internal CA standing in for Traefik and its wildcard certificate, a fake Cloudflare API).

`scripts/lab up | down | status` runs `graphsite_lab.__main__`; tests attach with `graphsite_lab.client.attach()`.
"""

from graphsite.errors import GraphsiteError


class LabError(GraphsiteError):
    """A part of the lab cannot be brought up, inspected or taken down."""
