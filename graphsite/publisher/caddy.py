"""The Caddyfile of a page's service: static files from /srv on the overlay port, behind the edge, with the
page's security headers; a private page asks for the same bcrypt credentials as its route, so no container on
the overlay network reads it without the password."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

SITE_ROOT = "/srv"
CADDYFILE_PATH = "/etc/caddy/Caddyfile"
COMMAND = ("caddy", "run", "--config", CADDYFILE_PATH, "--adapter", "caddyfile")
# Caddy needs a writable home for its data and autosaved config; tmpfs keeps the image read-only.
ENV = (("HOME", "/data"), ("XDG_DATA_HOME", "/data"), ("XDG_CONFIG_HOME", "/config"))
TMPFS = ("/data", "/config")
# A report's subdomain is often its only secret (a random name): no Referer carries it to the sites it cites.
REFERRER_POLICY = "no-referrer"
# An htpasswd line becomes two tokens of the Caddyfile. A user of these characters and a bcrypt hash can neither
# open nor close a block, start a comment, quote, or name a placeholder ({…}) or an environment variable ({$…}),
# which Caddy substitutes even inside quotes.
_USER = re.compile(r"[A-Za-z0-9._@+-]{1,64}")
_BCRYPT = re.compile(r"\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}")
_SHORT_SHA = re.compile(r"[0-9a-f]{12}")
# A header value becomes one Caddyfile token. In double quotes Caddy has no escape for a backslash before the closing
# quote and substitutes placeholders ({…}) even inside quotes, so a value is written only when it holds none of
# these: printable ASCII without " \ ` { } (a CSP graphsite writes never does; one that does was written by hand).
_SAFE_VALUE = re.compile(r"[ !#-\[\]-_a-z|~]*")
SAFE_VALUE_CHARACTERS = "printable ASCII without \" \\ ` { }"
USER_CHARACTERS = "letters, digits and . _ @ + - (at most 64)"


@dataclass(frozen=True)
class Server:
    """What the page's Caddy is told: its port, the page's CSP, whether robots may index it, who may read it."""

    port: int
    csp: str = ""
    indexing: bool = False
    users: tuple[str, ...] = ()  # htpasswd lines `user:bcrypt-hash`, the route's own (none: public)
    # the kept versions served under /v/<short sha>/, each with its own page's CSP (none: no /v/ route)
    versions: tuple[tuple[str, str], ...] = ()


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
    end = html.lower().find("</head")  # a meta CSP counts in the head only: the body (most of a page) is not read
    parser.feed(html if end < 0 else html[:end])
    return parser.csp or ""


def security_headers(csp: str, indexing: bool) -> dict[str, str]:
    """Return the headers the page's server sends with every answer (verify checks the same)."""
    headers = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": REFERRER_POLICY,
               "X-Robots-Tag": "all" if indexing else "noindex, nofollow"}
    if csp:
        headers["Content-Security-Policy"] = csp
    return headers


def csp_refusal(csp: str) -> str | None:
    """Return why the CSP `csp` cannot be written into a Caddyfile as it is, None when it can."""
    return None if _SAFE_VALUE.fullmatch(csp) else f"its Content-Security-Policy holds characters outside " \
        f"{SAFE_VALUE_CHARACTERS}"


def _quoted(value: str) -> str:
    """Return `value` as one Caddyfile token in backticks, taken verbatim; raise ValueError for a value that
    could not be (csp_refusal)."""
    if not _SAFE_VALUE.fullmatch(value):
        raise ValueError(f"a header value holds characters outside {SAFE_VALUE_CHARACTERS}")
    return f"`{value}`"


def account(line: str) -> tuple[str, str]:
    """Return (user, bcrypt hash) of an htpasswd line; raise ValueError saying why it cannot be written into a
    Caddyfile."""
    user, colon, hashed = line.partition(":")
    if not colon or not _BCRYPT.fullmatch(hashed):
        raise ValueError("expected user:bcrypt-hash")
    if not _USER.fullmatch(user):
        raise ValueError(f"user {user!r}: only {USER_CHARACTERS}")
    return user, hashed


def caddyfile(server: Server) -> str:
    """Return the Caddyfile serving /srv on the server's port: no admin API, no automatic https (the edge does
    TLS), the security headers (the CSP as a header too: a meta CSP cannot set frame-ancestors or report-to),
    and for a private page `basic_auth` with the route's users. With versions, no dot file is served (a bind
    directory's markers, a killed write's temporaries). Raise ValueError for a user or hash that cannot be one Caddyfile
    token, or a CSP that cannot be written as it is (csp_refusal)."""
    accounts = [account(line) for line in server.users]
    auth = "".join(["\tbasic_auth {\n", *(f"\t\t{user} {hashed}\n" for user, hashed in accounts), "\t}\n"]) \
        if accounts else ""
    served = _served(security_headers(server.csp, server.indexing), hidden=bool(server.versions))
    if server.versions:
        served = _versions(server.versions) + "\thandle {\n" + _indented(served) + "\t}\n"
    return (
        "{\n"
        "\tadmin off\n"
        "\tauto_https off\n"
        "}\n"
        "\n"
        f":{server.port} {{\n"
        f"\troot * {SITE_ROOT}\n"
        f"{auth}"
        "\tencode zstd gzip\n"
        f"{served}"
        "}\n"
    )


def _served(headers: dict[str, str], hidden: bool = True) -> str:
    """Return the directives serving the files with `headers`, dot files `hidden` (they answer 404). A plan
    without versions is the Caddyfile of 0.1, byte for byte (the same config a redeploy of its page keeps);
    every deploy of this release keeps versions, so none serves a dot file."""
    lines = "".join(f"\t\t{name} {_quoted(value)}\n" for name, value in headers.items())
    server = "\tfile_server {\n\t\thide .*\n\t}\n" if hidden else "\tfile_server\n"
    return "\theader {\n" f"{lines}" "\t}\n" f"{server}"


def _indented(block: str) -> str:
    return "".join(f"\t{line}\n" for line in block.splitlines())


def _versions(versions: tuple[tuple[str, str], ...]) -> str:
    """Return one `handle /v/<sha12>/*` block per kept version, with its own page's CSP and noindex whatever
    deploy.indexing says (a reviewer's copy is never a search result), then `handle /v/*` answering 404: nothing
    else under /v/ is served (a version a deploy failed to drop, one another deployment wrote, a leftover)."""
    blocks = []
    for sha, csp in versions:
        if not _SHORT_SHA.fullmatch(sha):
            raise ValueError(f"version {sha!r}: expected 12 hex digits")
        blocks.append(f"\thandle /v/{sha}/* {{\n" + _indented(_served(security_headers(csp, False))) + "\t}\n")
    return "".join(blocks) + "\thandle /v/* {\n\t\trespond 404\n\t}\n"


def header_findings(headers: dict[str, str], body: bytes, indexing: bool) -> list[str]:
    """Return what is missing or wrong among the security headers of an answer carrying the page `body`, each
    in a few words (header names case-insensitive; the CSP must equal the page's own, and a policy is long:
    it is named, never quoted)."""
    received = {name.lower(): value for name, value in headers.items()}
    wanted = security_headers(page_csp(body.decode("utf-8", errors="replace")), indexing)
    missing = [name for name in wanted if name.lower() not in received]
    findings = [f"missing {', '.join(missing)}"] if missing else []
    for name, value in wanted.items():
        got = received.get(name.lower())
        if got is None or got == value:
            continue
        findings.append(f"{name} is not the page's own" if name == "Content-Security-Policy"
                        else f"{name} {_brief(got)!r}, want {_brief(value)!r}")
    return findings


def _brief(value: str, limit: int = 40) -> str:
    return value if len(value) <= limit else value[:limit - 1] + "…"
