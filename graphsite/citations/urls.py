"""What is wrong with a URL on a public page, decided offline from the text alone (pure)."""

from __future__ import annotations

import contextlib
import ipaddress
import re
from urllib.parse import parse_qsl, urlsplit

# Holes an author leaves to fill in later: `...`, `…`, `<id>`, `{id}`, and their percent-encoded forms.
_HOLE = re.compile(r"\.\.\.|…|%E2%80%A6|<[^>]*>|%3C.*?%3E|\{[^}]*\}|%7B.*?%7D", re.IGNORECASE)
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$", re.IGNORECASE)
_NOT_PUBLIC_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".test", ".invalid")


def normalize(url: str) -> str:
    """Return `url` with scheme and host lower-cased, an IDN host in ASCII and a default port dropped."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    host = (parts.hostname or "").lower()
    if not host.isascii():  # an IDN host in its ASCII (punycode) form; an invalid one is left for malformed()
        with contextlib.suppress(UnicodeError):
            host = host.encode("idna").decode("ascii")
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    netloc = host if port is None or port == default else f"{host}:{port}"
    if parts.username or parts.password:
        netloc = parts.netloc.rpartition("@")[0] + "@" + netloc
    return parts._replace(scheme=parts.scheme.lower(), netloc=netloc).geturl()


def placeholder(url: str) -> str | None:
    """Return why `url` is a placeholder to fill in (a hole or an empty query value), else None."""
    hole = _HOLE.search(url)
    if hole:
        return f"contains the placeholder {hole.group(0)!r}"
    query = urlsplit(url).query if _splittable(url) else ""
    if query:
        for key, value in parse_qsl(query, keep_blank_values=True):
            if not value.strip():
                return f"the query value of {key!r} is empty"
    return None


def _splittable(url: str) -> bool:
    try:
        _ = urlsplit(url).port  # raises ValueError on a port out of range
    except ValueError:
        return False
    return True


def malformed(url: str) -> str | None:
    """Return why `url` is not a well-formed absolute http(s) URL, else None (other schemes: see non_public)."""
    if not url.strip():
        return "is empty"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return "contains whitespace or a control character"
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a port out of range
    except ValueError as exc:
        return f"cannot be parsed ({exc})"
    if parts.scheme.lower() not in {"http", "https"}:
        return None
    host = parts.hostname or ""
    if not host:
        return "has no host"
    if _ip(host) is None and not all(_LABEL.match(label) for label in host.rstrip(".").split(".")):
        return f"has an invalid host name {host!r}"
    return None


def non_public(url: str) -> str | None:
    """Return why `url` cannot work for a reader of a public page (scheme, host), else None."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme:
        return "is a bare path, not an absolute http(s) URL"
    if scheme not in {"http", "https"}:
        return f"uses the {scheme}: scheme, which a public page cannot link"
    try:
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    if not host:
        return None
    if host == "localhost" or host.endswith(_NOT_PUBLIC_SUFFIXES):
        return f"points at {host}, which only exists on the author's machine or network"
    address = _ip(host)
    if address is not None and not address.is_global:
        return f"points at the non-public address {host}"
    if address is None and "." not in host:
        return f"points at the single-label host {host!r}, which only resolves on a private network"
    return None


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def problem(url: str) -> tuple[str, str] | None:
    """Return (code suffix, reason) for the first problem of `url`: malformed, non-public, placeholder."""
    for code, check in (("malformed", malformed), ("non-public", non_public), ("placeholder", placeholder)):
        reason = check(url)
        if reason:
            return code, reason
    return None
