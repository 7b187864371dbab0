"""What is wrong with a URL on a public page, decided offline from the text alone (pure)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar
from urllib.parse import parse_qsl, urlsplit

# Holes an author leaves to fill in later: `...`, `…`, `<id>`, `{id}`, and their percent-encoded forms. Each is
# found with str.find (linear on any input); a regular expression such as `%3C.*?%3E` rescans the rest of the
# text from every opener and turns quadratic on a long run of openers.
_HOLE_PAIRS = (("<", ">"), ("{", "}"), ("%3c", "%3e"), ("%7b", "%7d"))
_HOLE_MARKS = ("...", "…", "%e2%80%a6")
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$", re.IGNORECASE)
_NOT_PUBLIC_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".test", ".invalid")

_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{0,31}:")
_SPECIAL = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}
_C0_SPACE = "".join(map(chr, range(0x21)))
_HEX = frozenset("0123456789abcdefABCDEF")
# WHATWG's percent-encode sets (https://url.spec.whatwg.org/#percent-encoded-bytes), plus the characters
# markdown-it's link normaliser encodes and WHATWG leaves alone (| [ ] ^ \ ` { }): a URL written raw in the
# reference list and the same URL as markdown-it's href of the inline citation compare equal.
_EXTRA = frozenset("|[]^\\`{}")
_FRAGMENT_SET = frozenset(' "<>`') | _EXTRA
_QUERY_SET = frozenset(' "#<>\'') | _EXTRA
_PATH_SET = _QUERY_SET | frozenset("?`{}") - {"'"}
_USERINFO_SET = _PATH_SET | frozenset("/:;=@[\\]^|")


_MEMO_LIMIT = 2048  # characters: a longer URL (an embedded data: image, megabytes) is checked, never kept
R = TypeVar("R")


def memoise_short(check: Callable[[str], R]) -> Callable[[str], R]:
    """Return `check` memoised for URLs of up to 2 KB: the page asks the same few short URLs again and again,
    while a cache keyed on an embedded image would keep its megabytes alive after the build (`serve`)."""
    memoised = lru_cache(maxsize=65536)(check)

    @wraps(check)
    def checked(url: str) -> R:
        return memoised(url) if len(url) <= _MEMO_LIMIT else check(url)

    checked.cache_info = memoised.cache_info  # type: ignore[attr-defined]
    checked.cache_clear = memoised.cache_clear  # type: ignore[attr-defined]
    return checked


def _encode(text: str, unsafe: frozenset[str]) -> str:
    """Return `text` percent-encoded: controls, non-ASCII and `unsafe` as UTF-8 `%XX`, escapes upper-cased."""
    out: list[str] = []
    length, index = len(text), 0
    while index < length:
        char = text[index]
        if char == "%":
            if index + 2 < length and text[index + 1] in _HEX and text[index + 2] in _HEX:
                out.append("%" + text[index + 1:index + 3].upper())
                index += 3
                continue
            out.append("%25")  # a lone % (markdown-it encodes it too)
        elif char in unsafe or not " " < char < "\x7f":
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _host(raw: str) -> str | None:
    """Return the WHATWG host of an authority's host part (IDNA, lower case, IPv6 compressed), or None."""
    from urllib.parse import unquote

    host = unquote(raw)
    if host.startswith("[") and host.endswith("]"):
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            return None
    if not host or any(c in host for c in " #%/:<>?@[\\]^|"):
        return None
    if _could_be_ipv4(host):
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError:
            pass
    if host.isascii():
        return host.lower()
    import idna  # only a host outside ASCII needs it: its tables are a start-up cost every run would pay

    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        return None


def _path(path: str) -> str:
    """Return an absolute path with `.` and `..` segments resolved and every segment percent-encoded."""
    segments: list[str] = []
    parts = path.split("/")[1:] if path.startswith("/") else path.split("/")
    for index, segment in enumerate(parts):
        last = index == len(parts) - 1
        lowered = segment.lower()
        if lowered in {".", "%2e"}:
            if last:
                segments.append("")
        elif lowered in {"..", ".%2e", "%2e.", "%2e%2e"}:
            if segments:
                segments.pop()
            if last:
                segments.append("")
        else:
            segments.append(_encode(segment, _PATH_SET))
    return "/" + "/".join(segments)


_DEFAULT_PORTS = {"http": 80, "https": 443}


@memoise_short
def origin(url: str) -> str:
    """Return `scheme://host[:port]` of an http(s) URL, lower-cased, without user info, a trailing dot or the
    scheme's default port: the key of a host's request limit and turn (the host a link names, or the one a
    redirect leads to, however it is written). Raise ValueError for a port out of range."""
    parts = urlsplit(url)
    scheme, host, port = parts.scheme.lower(), (parts.hostname or "").rstrip("."), parts.port
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + (f":{port}" if port is not None and port != _DEFAULT_PORTS.get(scheme) else "")


@memoise_short
def normalize(url: str) -> str:
    """Return `url` serialised the WHATWG way, for comparison: scheme and host lower case, the host in IDNA
    (UTS #46) form, a default port dropped, an empty path as `/`, dot segments resolved, path, query and
    fragment percent-encoded (escapes in upper case). A relative or unparsable URL comes back only trimmed.

    The one URL normaliser of graphsite: inline citations, references, outbound counts and link checks
    all compare through it, so the same URL written two ways is one URL.
    """
    url = url.strip(_C0_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(url)
    if match is None:
        return url
    scheme, rest = match.group(0)[:-1].lower(), url[match.end():]
    if scheme not in _SPECIAL or scheme == "file":
        return f"{scheme}:{_encode(rest, frozenset())}"
    rest = rest.replace("\\", "/")
    rest, _, fragment = rest.partition("#")
    rest, has_query, query = rest.partition("?")
    authority, slash, path = rest.lstrip("/").partition("/")
    userinfo, at, hostport = authority.rpartition("@")
    host_text, colon, port_text = hostport, "", ""
    if not hostport.endswith("]") and ":" in hostport:
        host_text, colon, port_text = hostport.rpartition(":")
    host = _host(host_text)
    if host is None or (port_text and not port_text.isascii()) or (port_text and not port_text.isdigit()):
        return url
    port = int(port_text) if port_text else None
    if port is not None and port > 65535:
        return url
    netloc = host if port is None or port == _SPECIAL[scheme] else f"{host}:{port}"
    if at:
        user, colon, password = userinfo.partition(":")
        netloc = _encode(user, _USERINFO_SET) + colon + _encode(password, _USERINFO_SET) + "@" + netloc
    serialised = f"{scheme}://{netloc}{_path(slash + path)}"
    if has_query:
        serialised += "?" + _encode(query, _QUERY_SET)
    if "#" in url:
        serialised += "#" + _encode(fragment, _FRAGMENT_SET)
    return serialised


def _hole(url: str) -> str | None:
    """Return the first placeholder hole written in `url`, or None (linear time)."""
    lowered = url.lower()
    found: list[tuple[int, str]] = []
    for mark in _HOLE_MARKS:
        at = lowered.find(mark)
        if at >= 0:
            found.append((at, url[at:at + len(mark)]))
    for opener, closer in _HOLE_PAIRS:
        at = lowered.find(opener)
        end = lowered.find(closer, at + len(opener)) if at >= 0 else -1
        if end >= 0:
            found.append((at, url[at:end + len(closer)]))
    return min(found)[1] if found else None


def placeholder(url: str) -> str | None:
    """Return why `url` is a placeholder to fill in (a hole or an empty query value), else None."""
    hole = _hole(url)
    if hole:
        return f"contains the placeholder {hole!r}"
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
    if _SPACE_OR_CONTROL.search(url):
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


_IPV4_CHARACTERS = frozenset("0123456789.")


def _could_be_ipv4(text: str) -> bool:
    """Return whether `text` may be an IPv4 literal (digits and dots only): a host name is not parsed as an
    address first, which raises and costs more than the rest of the checks of an ordinary URL."""
    return bool(text) and _IPV4_CHARACTERS.issuperset(text)


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = host.strip("[]")
    if ":" not in text and not _could_be_ipv4(text):
        return None  # an IPv6 address has a colon; an IPv4 one only digits and dots
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


# Query (and fragment) keys whose value is a credential: a token, an API key, a signature of a pre-signed URL.
SECRET_KEYS = frozenset({
    "token", "access_token", "refresh_token", "id_token", "auth_token", "private_token", "api_key", "apikey",
    "api-key", "client_secret", "secret", "password", "passwd", "sig", "signature", "x-amz-signature",
    "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
})
_MASK = "***"
# `//host/…`, as browsers read it: leading blanks aside, and a backslash taken for a slash
_PROTOCOL_RELATIVE = re.compile(r"\s*[/\\]{2}")


def _split_secrets(url: str) -> tuple[str, str, list[str], str]:
    """Return `url` cut for mask(): the scheme with its `://` (or a protocol-relative URL's `//`), the userinfo
    (or ""), the rest split at each `?`, `#`, `&` and `;` (the separators kept as parts of their own), and the
    `@` after the userinfo (or ""). A relative link (`notes.md?token=…`) has no authority, but its query is
    split all the same. Text only, no parsing that may raise: a malformed URL is masked too."""
    head, sep, rest = url.partition("://")
    if not sep:
        relative = _PROTOCOL_RELATIVE.match(url)
        if relative is None:
            return "", "", re.split(r"([?#&;])", url), ""
        head, sep, rest = "", relative.group(0), url[relative.end():]
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    userinfo, at, _ = authority.rpartition("@")
    return head + sep, userinfo if at else "", re.split(r"([?#&;])", rest[len(userinfo) + len(at):]), at


def _secret_key(part: str) -> str | None:
    key, equals, value = part.partition("=")
    name = key.strip().lower().replace("%2d", "-").replace("%5f", "_")
    return key if equals and value and name in SECRET_KEYS else None


def secret(url: str) -> str | None:
    """Return why `url` carries a credential (user:password@, a token or signature in its query), else None."""
    _, userinfo, parts, _ = _split_secrets(url)
    if userinfo:
        what = "a user name and password" if ":" in userinfo else "a user name (or a token)"
        return f"carries {what} before its host, which every reader of the page would see"
    keys = [key for key in map(_secret_key, parts[1:]) if key]
    return f"carries a credential in {keys[0]!r}, which every reader of the page would see" if keys else None


def mask(url: str) -> str:
    """Return `url` with every credential replaced by *** (the userinfo, the value of each secret key), the rest
    as written: what messages show of a URL that carries one."""
    start, userinfo, parts, at = _split_secrets(url)
    if not userinfo and not any(map(_secret_key, parts[1:])):
        return url
    shown = [parts[0], *(f"{key}={_MASK}" if (key := _secret_key(part)) else part for part in parts[1:])]
    return start + (_MASK + at if userinfo else "") + "".join(shown)


@memoise_short
def problem(url: str) -> tuple[str, str] | None:
    """Return (code suffix, reason) for the first problem of `url`: a secret in it, malformed, non-public,
    placeholder. Memoised: a report cites the same URL from its text, its reference list and its checks."""
    for code, check in (("secret-in-url", secret), ("malformed", malformed), ("non-public", non_public),
                        ("placeholder", placeholder)):
        reason = check(url)
        if reason:
            return code, reason
    return None
