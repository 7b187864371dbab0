"""Cloudflare DNS: the page's A record. The only module that talks to Cloudflare's API; every answer is checked
here, once, and the API token never reaches a message.

Every call ends in one of three ways (docs/reliability.md, "knowing versus assuming"): a well-formed success
(`success: true`, a `result` of the documented shape, a listing paged to its end whose pages add up), a
well-formed absence (HTTP 404 on a delete or a zone read), or `DnsError` naming the call. A 200 that says
`success: false`, a body that is not the documented JSON, an HTML error page, pagination that does not add up:
each is an error, never an empty list.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import httpx

from graphsite.config import Config
from graphsite.errors import ConfigError, DeployError
from graphsite.publisher.deployment import RECORD_COMMENT, STAMP_VERSION, Claim, Stamp
from graphsite.publisher.plan import DnsRecord
from graphsite.publisher.probe import tls_context

IDENTICAL = 81058  # Cloudflare's "An identical record already exists."
NO_RECORD = 81044  # Cloudflare's "Record does not exist."
_TYPES = ("A", "AAAA", "CNAME")
PER_PAGE = 100  # records per listing page
MAX_PAGES = 500  # a listing longer than this is refused rather than read forever
EXCERPT = 80  # characters of a body that is not JSON shown in a message
# What a Cloudflare API token can be: visible ASCII without spaces (Cloudflare's are 40 URL-safe characters).
# Anything else (a newline pasted with it, a control character) is refused before a request carries it.
_TOKEN = re.compile(r"^[\x21-\x7e]{20,400}$")
_TAGS = re.compile(r"<[^>]*>")
_T = TypeVar("_T")
_LOGGERS = ("httpx", "httpx._client", "httpcore", "httpcore.connection", "httpcore.http11", "httpcore.http2",
            "httpcore.proxy")


def check_token(token: str) -> str:
    """Return `token` when it can be an API token; raise ConfigError (which never shows it) otherwise."""
    if not _TOKEN.match(token):
        why = ("it holds whitespace or a control character" if any(c.isspace() or ord(c) < 32 or ord(c) == 127
                                                                    for c in token)
               else "it holds characters an API token cannot" if not token.isascii()
               else f"it is {len(token)} characters long")
        raise ConfigError(f"the Cloudflare API token cannot be a token: {why} (not shown)",
                          hint="copy the token again from Cloudflare's dashboard into CLOUDFLARE_API_TOKEN or "
                               "dns.token_file, without spaces or line breaks inside it")
    return token


class _Redact(logging.Filter):
    """Keeps the token out of every log record httpx may write (-v)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self._secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if self._secret in text:
            record.msg, record.args = text.replace(self._secret, "***"), None
        return True


@dataclass(frozen=True)
class Record(DnsRecord):
    """A record as Cloudflare holds it: the fields graphsite plans, and its id."""

    id: str

    @property
    def stamp(self) -> Stamp | None:
        """The stamp the record's comment holds, or None when it holds none. A version-1 comment names no fqdn:
        the record's own name is it."""
        stamp = Stamp.from_record_comment(self.comment)
        return replace(stamp, fqdn=self.name) if stamp is not None and stamp.version < STAMP_VERSION else stamp

    def claim(self, domain: str) -> Claim | None:
        """Return whose the record is under `domain` (its stamp's fqdn must be its own name): UNPROVEN for a
        comment that merely starts like graphsite's, None when nothing in it speaks of graphsite."""
        stamp = self.stamp
        if stamp is None:
            return Claim.UNPROVEN if self.comment.strip().startswith(RECORD_COMMENT) else None
        return stamp.claim(self.name.split(".", 1)[0], domain) if stamp.fqdn == self.name else Claim.UNPROVEN


class DnsError(DeployError):
    """The Cloudflare API refused or failed a request, or answered something that is not a well-formed answer."""

    def __init__(self, message: str, *, hint: str | None = None, status: int = 0, codes: tuple[int, ...] = (),
                 retry_after: float | None = None, transient: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.status, self.codes, self.retry_after, self.transient = status, codes, retry_after, transient


# --- the answer, judged (pure) ---------------------------------------------------------------------------------

def excerpt(body: bytes) -> str:
    """Return at most EXCERPT characters of a body that is not JSON, tags and runs of whitespace removed."""
    text = " ".join(_TAGS.sub(" ", body.decode("utf-8", "replace")).split())
    return repr(text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")) if text else "an empty body"


def _codes(errors: Any) -> tuple[tuple[int, ...], str]:
    found = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
    codes = tuple(e["code"] for e in found if isinstance(e.get("code"), int))
    text = "; ".join(f"{e.get('code', '')} {e.get('message', '')}".strip() for e in found)
    return codes, text[:200]


def envelope(action: str, status: int, body: bytes, retry_after: str = "") -> dict[str, Any]:
    """Return Cloudflare's answer to `action` when it is a well-formed success; raise DnsError otherwise (whose
    `status`, `codes` and `transient` say what it was)."""
    try:
        answer = json.loads(body) if body else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        what = "an empty body" if not body.strip() else f"a body that is not JSON: {excerpt(body)}"
        raise DnsError(f"Cloudflare: {action}: HTTP {status} with {what}", status=status,
                       transient=status >= 500 or status == 429, retry_after=_seconds(retry_after),
                       hint="Cloudflare's answer was cut or is an error page; run the command again later")
    codes, text = _codes(answer.get("errors"))
    if status >= 300:
        raise DnsError(f"Cloudflare: {action}: HTTP {status}: {text or 'no error given'}", status=status,
                       codes=codes, transient=status >= 500 or status == 429, retry_after=_seconds(retry_after),
                       hint=_hint(status))
    if answer.get("success") is not True:
        raise DnsError(f"Cloudflare: {action}: HTTP {status} but success is {answer.get('success')!r}"
                       f"{': ' + text if text else ''}", status=status, codes=codes,
                       hint="Cloudflare did not carry the request out (or will not say): nothing is assumed; "
                            "run the command again later")
    if "result" not in answer:
        raise DnsError(f"Cloudflare: {action}: HTTP {status} but the answer holds no result", status=status)
    return answer


def _seconds(header: str) -> float | None:
    """Return the seconds a Retry-After header asks for, held to 0-60, or None when it gives none."""
    try:
        seconds = float(header) if header else None
    except ValueError:
        return None
    if seconds is None or seconds != seconds:  # nan: max() keeps it, and time.sleep(nan) raises ValueError
        return None
    return min(max(seconds, 0.0), 60.0)


def _malformed(action: str, what: str) -> DnsError:
    return DnsError(f"Cloudflare: {action}: {what}", hint="Cloudflare's answer is not what its API documents: "
                                                         "nothing is assumed; run the command again later")


def page_of(action: str, answer: dict[str, Any], page: int) -> tuple[list[dict[str, Any]], int, int]:
    """Return a listing page's items, total_count and total_pages; raise DnsError when the page is not a list
    of objects or its result_info does not add up."""
    items, info = answer["result"], answer.get("result_info")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise _malformed(action, f"result is {type(items).__name__}, not a list of objects")
    if not isinstance(info, dict):
        raise _malformed(action, "the listing holds no result_info")
    raw = {k: info.get(k) for k in ("page", "count", "total_count", "total_pages")}
    wrong = [k for k, v in raw.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0]
    if wrong:
        raise _malformed(action, f"result_info.{wrong[0]} is {raw[wrong[0]]!r}")
    numbers: dict[str, int] = {k: int(v) for k, v in raw.items() if v is not None}
    total, pages = numbers["total_count"], numbers["total_pages"]
    if numbers["page"] != page or numbers["count"] != len(items) or len(items) > total \
            or (page < pages and not items) or (total and not pages):
        raise _malformed(action, f"page {page} does not add up (result_info {numbers}, {len(items)} items)")
    return items, total, pages


def _text(raw: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = raw.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ValueError(f"{key} is {value!r}")
    return value


def record_of(action: str, raw: Any) -> Record:
    """Return the record an answer describes; raise DnsError when a documented field is missing or mistyped."""
    try:
        if not isinstance(raw, dict):
            raise ValueError(f"the record is {type(raw).__name__}")
        ttl, proxied = raw.get("ttl", 1), raw.get("proxied", False)
        if not isinstance(ttl, int) or isinstance(ttl, bool) or not isinstance(proxied, bool):
            raise ValueError(f"ttl {ttl!r} / proxied {proxied!r}")
        return Record(id=_text(raw, "id"), name=_text(raw, "name").lower().rstrip("."), type=_text(raw, "type"),
                      content=_text(raw, "content", required=False), ttl=ttl, proxied=proxied,
                      comment=_text(raw, "comment", required=False))
    except ValueError as exc:
        raise _malformed(action, f"a record that is not one ({exc})") from None


@dataclass(frozen=True)
class Zone:
    """A zone as Cloudflare describes it."""

    id: str
    name: str
    status: str


def zone_of(action: str, raw: Any) -> Zone:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not isinstance(raw.get("name"), str):
        raise _malformed(action, "a zone without an id or a name")
    return Zone(id=raw["id"], name=raw["name"].lower().rstrip("."), status=str(raw.get("status") or ""))


# --- the adapter -----------------------------------------------------------------------------------------------

class Dns:
    """The zone's DNS records through Cloudflare's API. Throttling (429, honouring Retry-After up to 60 s),
    5xx, timeouts and refused connections are retried with backoff, at most `dns.retries` times."""

    def __init__(self, config: Config) -> None:
        token = config.token()
        if not token:
            raise ConfigError("no Cloudflare API token",
                              hint="set CLOUDFLARE_API_TOKEN or dns.token_file in graphsite.toml")
        self._token = check_token(token)
        self._domain, self._base_url = config.site.domain, config.dns.api_base_url.rstrip("/")
        self._timeout, self._retries = config.dns.timeout, config.dns.retries
        self._deadline: float | None = None
        # A logger's filter sees only the records made by that very logger (not its children's): every logger
        # the transport writes to gets one.
        for name in _LOGGERS:
            logging.getLogger(name).addFilter(_Redact(token))
        ca_bundle = config.dns.ca_bundle
        verify = tls_context(ca_bundle, setting="dns.ca_bundle") if ca_bundle else True  # True: httpx's default
        self._client = httpx.Client(verify=verify, timeout=config.dns.timeout, headers={
            "Authorization": f"Bearer {token}", "Accept": "application/json"})
        self._zone_id = config.dns.zone_id

    def limit(self, seconds: float | None) -> None:
        """Bound every later call (its attempts and waits together) to end within `seconds` from now; None:
        each call has `dns.retries` retries of `dns.timeout` seconds."""
        self._deadline = None if seconds is None else time.monotonic() + seconds

    def _request(self, action: str, method: str, path: str, *, params: dict[str, Any] | None = None,
                 body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Return the well-formed success envelope of one call, retried as the class says; raise DnsError."""
        return self._retrying(action, lambda timeout: self._once(action, method, path, params, body, timeout))

    def _once(self, action: str, method: str, path: str, params: dict[str, Any] | None,
              body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        try:
            response = self._client.request(method, self._base_url + path, params=params, json=body,
                                            timeout=timeout)
        except httpx.TimeoutException:
            raise DnsError(f"Cloudflare: {action}: no answer from {self._base_url} within {timeout:g} s",
                           transient=True, hint="try again; graphsite retries a few times") from None
        except httpx.HTTPError as exc:  # refused, reset, a TLS failure, a protocol error
            raise DnsError(f"Cloudflare: {action}: cannot reach {self._base_url} ({type(exc).__name__})",
                           transient=True, hint="check dns.api_base_url and this host's network") from None
        try:
            return envelope(action, response.status_code, response.content, response.headers.get("retry-after", ""))
        except DnsError as exc:  # an answer that echoes the token must not carry it into a message
            if self._token not in exc.message:
                raise
            raise DnsError(exc.message.replace(self._token, "***"), status=exc.status, codes=exc.codes,
                           retry_after=exc.retry_after, transient=exc.transient) from None

    def _retrying(self, action: str, attempt_once: Callable[[float], _T]) -> _T:
        attempt = 0
        while True:
            timeout = self._timeout
            if self._deadline is not None:
                timeout = min(timeout, self._deadline - time.monotonic())
                if timeout <= 0.05:
                    raise DnsError(f"Cloudflare: {action}: gave up: the step's time ran out",
                                   hint="Cloudflare is slow or unreachable; run the command again later")
            try:
                return attempt_once(timeout)
            except DnsError as exc:
                wait = _retry_wait(exc, attempt)
                late = self._deadline is not None and wait is not None and time.monotonic() + wait >= self._deadline
                if wait is None or attempt >= self._retries or late:
                    raise
                attempt += 1
                time.sleep(wait)

    def _listing(self, action: str, path: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Return every item of a paged listing, read to its end; raise DnsError when the pages do not add up."""
        items: list[dict[str, Any]] = []
        page, pages, total = 1, 1, 0
        while page <= pages:
            if page > MAX_PAGES:
                raise _malformed(action, f"more than {MAX_PAGES} pages")
            answer = self._request(action, "GET", path, params={**params, "page": page, "per_page": PER_PAGE})
            found, page_total, pages = page_of(action, answer, page)
            if page > 1 and page_total != total:
                raise _malformed(action, f"total_count changed from {total} to {page_total} while paging "
                                         "(records were made or removed meanwhile)")
            items, total, page = items + found, page_total, page + 1
        if len(items) != total:
            raise _malformed(action, f"{len(items)} items in {pages} page(s), but total_count says {total}")
        return items

    @property
    def zone_id(self) -> str:
        if not self._zone_id:
            zone = self.zone_by_name(self._domain)
            if zone is None:
                raise ConfigError(f"dns.zone_id: no Cloudflare zone named {self._domain} for this token",
                                  hint="set dns.zone_id or check site.domain")
            self._zone_id = zone.id
        return self._zone_id

    def records(self, name: str) -> list[Record]:
        """Return the A, AAAA and CNAME records named exactly `name`."""
        action = f"list records named {name}"
        found = self._listing(action, f"/zones/{self.zone_id}/dns_records", {"name.exact": name})
        return [r for r in (record_of(action, raw) for raw in found) if r.type in _TYPES and r.name == name]

    def a_records(self) -> list[Record]:
        """Return every A record of the zone (each judged by its stamp by the caller)."""
        action = "list the zone's A records"
        found = self._listing(action, f"/zones/{self.zone_id}/dns_records", {"type": "A"})
        return [r for r in (record_of(action, raw) for raw in found) if r.type == "A"]

    def create(self, record: DnsRecord) -> Record:
        """Create the A record. When Cloudflare says an identical one exists (a create whose answer was lost
        did succeed), return that one rather than fail and leave it behind."""
        action = f"create A {record.name}"
        try:
            answer = self._request(action, "POST", f"/zones/{self.zone_id}/dns_records", body={
                "name": record.name, "type": "A", "content": record.content, "ttl": record.ttl,
                "proxied": record.proxied, "comment": record.comment})
        except DnsError as exc:
            if IDENTICAL not in exc.codes:
                raise
            same = [r for r in self.records(record.name) if r.type == "A" and r.content == record.content
                    and r.comment == record.comment]  # this deploy's record, not a like one made by hand
            if not same:
                raise
            return same[0]
        return record_of(action, answer["result"])

    def restamp(self, record: Record, comment: str) -> Record:
        """Give `record` the comment `comment` (its other fields as they are); return the record Cloudflare holds
        now. An answer that is not that record with that comment is an error."""
        action = f"update the comment of A {record.name} id={record.id}"
        answer = self._request(action, "PATCH", f"/zones/{self.zone_id}/dns_records/{record.id}", body={
            "name": record.name, "type": record.type, "content": record.content, "ttl": record.ttl,
            "proxied": record.proxied, "comment": comment})
        made = record_of(action, answer["result"])
        if made.id != record.id or made.comment != comment:
            raise _malformed(action, f"record {made.id} with the comment {made.comment!r}")
        return made

    def delete(self, record_id: str) -> bool:
        """Delete the record; return False when it was already gone."""
        action = f"delete record {record_id}"
        try:
            answer = self._request(action, "DELETE", f"/zones/{self.zone_id}/dns_records/{record_id}")
        except DnsError as exc:
            if exc.status == 404 and NO_RECORD in exc.codes:  # Cloudflare says the record is gone; any other 404
                return False  # (another zone, an HTML page from a proxy) proves nothing
            raise
        result = answer["result"]
        if not isinstance(result, dict) or result.get("id") != record_id:
            raise _malformed(action, f"the answer names no deleted record {record_id} ({type(result).__name__})")
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError, httpx.HTTPError):
            self._client.close()

    # --- read-only facts for `graphsite doctor` (through the same retries and deadline) ----------------------

    def token_status(self) -> str:
        """Return the token's status from GET /user/tokens/verify (`active` when it may be used)."""
        result = self._request("verify the API token", "GET", "/user/tokens/verify")["result"]
        status = result.get("status") if isinstance(result, dict) else None
        return status if isinstance(status, str) and status else "unknown"

    def zone_by_id(self, zone_id: str) -> Zone | None:
        """Return the zone with id `zone_id`, or None when Cloudflare has none this token may see."""
        action = f"read zone {zone_id}"
        try:
            answer = self._request(action, "GET", f"/zones/{zone_id}")
        except DnsError as exc:
            if exc.status in (400, 404):
                return None
            raise
        return zone_of(action, answer["result"])

    def zone_by_name(self, name: str) -> Zone | None:
        """Return the zone called `name` that the token may see, or None."""
        action = f"look up zone {name}"
        found = self._listing(action, "/zones", {"name": name})
        zones = [zone_of(action, raw) for raw in found]
        return next((z for z in zones if z.name == name.lower().rstrip(".")), None)

    def count_records(self, zone_id: str) -> int:
        """Return how many records the zone holds (proves DNS read permission)."""
        action = f"list the records of zone {zone_id}"
        answer = self._request(action, "GET", f"/zones/{zone_id}/dns_records", params={"per_page": 5, "page": 1})
        return page_of(action, answer, 1)[1]


def _retry_wait(exc: DnsError, attempt: int) -> float | None:
    """Return how long to wait before retrying after `exc`, or None when retrying cannot help."""
    if not exc.transient:
        return None
    if exc.status == 429 and exc.retry_after is not None:
        return exc.retry_after
    return min(0.5 * 2.0 ** attempt, 8.0)


def _hint(status: int) -> str:
    if status in (401, 403):
        return "check the token's DNS:Edit permission on the zone"
    if status == 404:
        return "check dns.zone_id (empty: looked up from site.domain)"
    if 400 <= status < 500 and status != 429:
        return "Cloudflare refused the request: check the [dns] settings"
    return "try again; graphsite retries throttling and server errors a few times"
