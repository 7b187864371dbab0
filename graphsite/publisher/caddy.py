"""The Caddyfile of a page's service: static files from /srv on the overlay port, behind the edge."""

from __future__ import annotations

SITE_ROOT = "/srv"
CADDYFILE_PATH = "/etc/caddy/Caddyfile"
COMMAND = ("caddy", "run", "--config", CADDYFILE_PATH, "--adapter", "caddyfile")
# Caddy needs a writable home for its data and autosaved config; tmpfs keeps the image read-only.
ENV = (("HOME", "/data"), ("XDG_DATA_HOME", "/data"), ("XDG_CONFIG_HOME", "/config"))
TMPFS = ("/data", "/config")


def caddyfile(port: int) -> str:
    """Return the Caddyfile serving /srv on `port`: no admin API, no automatic https (the edge does TLS)."""
    return (
        "{\n"
        "\tadmin off\n"
        "\tauto_https off\n"
        "}\n"
        "\n"
        f":{port} {{\n"
        f"\troot * {SITE_ROOT}\n"
        "\tencode zstd gzip\n"
        "\tfile_server\n"
        "}\n"
    )
