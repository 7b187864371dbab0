"""graphsite: a decision-ready Markdown report as one page, published on Swarm + Traefik + Cloudflare."""

__version__ = "0.2.0"
