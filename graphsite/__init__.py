"""graphsite: a decision-ready Markdown report as one page, published on Swarm + Traefik + Cloudflare."""

__version__ = "0.2.0"
VERSION_MESSAGE = "graphsite, version {}"  # what `graphsite --version` prints (graphsite/entry.py, cli.py)
