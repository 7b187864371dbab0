"""The Caddyfile of a page's service: static files from /srv on the overlay port, behind the edge, with the
page's security headers."""

from __future__ import annotations

from html.parser import HTMLParser

SITE_ROOT = "/srv"
CADDYFILE_PATH = "/etc/caddy/Caddyfile"
COMMAND = ("caddy", "run", "--config", CADDYFILE_PATH, "--adapter", "caddyfile")
# Caddy needs a writable home for its data and autosaved config; tmpfs keeps the image read-only.
ENV = (("HOME", "/data"), ("XDG_DATA_HOME", "/data"), ("XDG_CONFIG_HOME", "/config"))
TMPFS = ("/data", "/config")
# A report's subdomain is often its only secret (a random name): no Referer carries it to the sites it cites.
REFERRER_POLICY = "no-referrer"


class _MetaCsp(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.csp: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if (tag == "meta" and self.csp is None
                and (values.get("http-equiv") or "").lower() == "content-security-policy"):
            self.csp = values.get("content") or ""


def page_csp(html: str) -> str:
    """Return the Content-Security-Policy the page declares in its <meta http-equiv> (empty: none)."""
    parser = _MetaCsp()
    parser.feed(html)
    return parser.csp or ""


def security_headers(csp: str, indexing: bool) -> dict[str, str]:
    """Return the headers the page's server sends with every answer (verify checks the same)."""
    headers = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": REFERRER_POLICY,
               "X-Robots-Tag": "all" if indexing else "noindex, nofollow"}
    if csp:
        headers["Content-Security-Policy"] = csp
    return headers


def _quoted(value: str) -> str:
    """Return `value` as one Caddyfile token: in backticks (taken verbatim), else in double quotes."""
    return f"`{value}`" if "`" not in value else '"' + value.replace('"', '\\"') + '"'


def caddyfile(port: int, *, csp: str = "", indexing: bool = False) -> str:
    """Return the Caddyfile serving /srv on `port`: no admin API, no automatic https (the edge does TLS), and
    the security headers (the CSP as a header too: a meta CSP cannot set frame-ancestors or report-to)."""
    header_lines = "".join(f"\t\t{name} {_quoted(value)}\n" for name, value in security_headers(csp, indexing).items())
    return (
        "{\n"
        "\tadmin off\n"
        "\tauto_https off\n"
        "}\n"
        "\n"
        f":{port} {{\n"
        f"\troot * {SITE_ROOT}\n"
        "\tencode zstd gzip\n"
        "\theader {\n"
        f"{header_lines}"
        "\t}\n"
        "\tfile_server\n"
        "}\n"
    )


def header_findings(headers: dict[str, str], body: bytes, indexing: bool) -> list[str]:
    """Return what is missing or wrong among the security headers of an answer carrying the page `body`
    (header names case-insensitive; the CSP must equal the page's own)."""
    received = {name.lower(): value for name, value in headers.items()}
    wanted = security_headers(page_csp(body.decode("utf-8", errors="replace")), indexing)
    return [f"{name}: {received.get(name.lower())!r}, want {value!r}" for name, value in wanted.items()
            if received.get(name.lower()) != value]
