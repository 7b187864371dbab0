"""Cloudflare DNS: the page's A record. The only module that imports `cloudflare`; SDK exceptions are
translated here, once, and the API token never reaches a message."""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import cloudflare
import httpx

from graphsite.config import Config
from graphsite.errors import ConfigError, DeployError
from graphsite.publisher.deployment import Stamp
from graphsite.publisher.plan import DnsRecord
from graphsite.publisher.probe import tls_context

IDENTICAL = 81058  # Cloudflare's "An identical record already exists."
_TYPES = ("A", "AAAA", "CNAME")
# What a Cloudflare API token can be: visible ASCII without spaces (Cloudflare's are 40 URL-safe characters).
# Anything else (a newline pasted with it, a control character) is refused before a request carries it.
_TOKEN = re.compile(r"^[\x21-\x7e]{20,400}$")
_T = TypeVar("_T")
_LOGGERS = ("cloudflare", "cloudflare._base_client", "httpx", "httpx._client", "httpcore", "httpcore.connection",
            "httpcore.http11", "httpcore.http2", "httpcore.proxy")


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
    """Keeps the token out of every log record the SDK or httpx may write (CLOUDFLARE_LOG=debug, -v)."""

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
        """The record's stamp when graphsite made it (its comment says so), else None."""
        return Stamp.from_record_comment(self.comment, self.name)

    @property
    def ours(self) -> bool:
        return self.stamp is not None


class DnsError(DeployError):
    """The Cloudflare API refused or failed a request."""


class Dns:
    """The zone's DNS records through Cloudflare's API. The SDK retries 429 (honouring Retry-After up to
    60 s) and 5xx with exponential backoff, at most `dns.retries` times."""

    def __init__(self, config: Config) -> None:
        token = config.token()
        if not token:
            raise ConfigError("no Cloudflare API token",
                              hint="set CLOUDFLARE_API_TOKEN or dns.token_file in graphsite.toml")
        self._token = check_token(token)
        self._domain, self._base_url = config.site.domain, config.dns.api_base_url
        self._timeout, self._retries = config.dns.timeout, config.dns.retries
        self._deadline: float | None = None
        # A logger's filter sees only the records made by that very logger (not its children's): every logger
        # the SDK and its transport write to gets one.
        for name in _LOGGERS:
            logging.getLogger(name).addFilter(_Redact(token))
        ca_bundle = config.dns.ca_bundle
        verify = tls_context(ca_bundle, setting="dns.ca_bundle") if ca_bundle else True  # True: httpx's default
        # graphsite retries itself (below), so that one deadline bounds a step whatever Cloudflare does.
        self._client = cloudflare.Cloudflare(
            api_token=token, base_url=config.dns.api_base_url, max_retries=0,
            timeout=config.dns.timeout, http_client=httpx.Client(verify=verify, timeout=config.dns.timeout))
        self._zone_id = config.dns.zone_id

    def _fail(self, action: str, exc: Exception) -> DnsError:
        if isinstance(exc, cloudflare.APIStatusError):
            detail = f"HTTP {exc.status_code}: {_messages(exc)}"
        elif isinstance(exc, cloudflare.APITimeoutError):
            detail = f"no answer from {self._base_url} within {self._timeout:g} s"
        elif isinstance(exc, cloudflare.APIConnectionError):
            detail = f"cannot reach {self._base_url} ({type(exc.__cause__ or exc).__name__})"
        else:
            detail = type(exc).__name__
        message = f"Cloudflare: {action}: {detail}".replace(self._token, "***")
        return DnsError(message, hint=_hint(exc))

    def limit(self, seconds: float | None) -> None:
        """Bound every later call (its attempts and waits together) to end within `seconds` from now; None:
        each call has `dns.retries` retries of `dns.timeout` seconds."""
        self._deadline = None if seconds is None else time.monotonic() + seconds

    def _call(self, action: str, request: Callable[[cloudflare.Cloudflare], _T]) -> _T:
        """Run `request`, retrying throttling (honouring Retry-After), 5xx, timeouts and refused connections
        with backoff, at most `dns.retries` times and never past the deadline; raise DnsError naming `action`."""
        attempt = 0
        while True:
            timeout = self._timeout
            if self._deadline is not None:
                timeout = min(timeout, self._deadline - time.monotonic())
                if timeout <= 0.05:
                    raise DnsError(f"Cloudflare: {action}: gave up: the step's time ran out",
                                   hint="Cloudflare is slow or unreachable; run the command again later")
            try:
                return request(self._client.with_options(timeout=timeout))
            except cloudflare.APIError as exc:
                wait = _retry_after(exc, attempt)
                if wait is None or attempt >= self._retries:
                    raise self._fail(action, exc) from None
                if self._deadline is not None and time.monotonic() + wait >= self._deadline:
                    raise self._fail(action, exc) from None
                attempt += 1
                time.sleep(wait)

    @property
    def zone_id(self) -> str:
        if not self._zone_id:
            zones = self._call(f"look up zone {self._domain}", lambda c: list(c.zones.list(name=self._domain)))
            if not zones:
                raise ConfigError(f"dns.zone_id: no Cloudflare zone named {self._domain} for this token",
                                  hint="set dns.zone_id or check site.domain")
            self._zone_id = zones[0].id
        return self._zone_id

    def records(self, name: str) -> list[Record]:
        """Return the A, AAAA and CNAME records named exactly `name`."""
        zone = self.zone_id
        found = self._call(f"list records named {name}", lambda c: list(
            c.dns.records.list(zone_id=zone, name={"exact": name}, per_page=100)))
        return [r for r in map(_record, found) if r.type in _TYPES and r.name == name]

    def graphsite_records(self) -> list[Record]:
        """Return every A record of the zone that graphsite made."""
        zone = self.zone_id
        found = self._call("list records", lambda c: list(c.dns.records.list(zone_id=zone, type="A", per_page=100)))
        return [r for r in map(_record, found) if r.ours]

    def create(self, record: DnsRecord) -> Record:
        """Create the A record. When Cloudflare says an identical one exists (a create whose answer was lost
        did succeed), return that one rather than fail and leave it behind."""
        zone = self.zone_id
        try:
            made = self._call(f"create A {record.name}", lambda c: c.dns.records.create(
                zone_id=zone, name=record.name, type="A", content=record.content, ttl=record.ttl,
                proxied=record.proxied, comment=record.comment))
        except DnsError as exc:
            if f"{IDENTICAL}" not in exc.message:
                raise
            same = [r for r in self.records(record.name) if r.type == "A" and r.content == record.content]
            if not same:
                raise
            return same[0]
        return _record(made)

    def delete(self, record_id: str) -> bool:
        """Delete the record; return False when it was already gone."""
        zone = self.zone_id
        try:
            self._call(f"delete record {record_id}", lambda c: c.dns.records.delete(record_id, zone_id=zone))
        except DnsError as exc:
            if "HTTP 404" in exc.message:
                return False
            raise
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError, httpx.HTTPError):
            self._client.close()

    # --- read-only facts for `graphsite doctor` (through the same retries and deadline) ----------------------

    def token_status(self) -> str:
        """Return the token's status from GET /user/tokens/verify (`active` when it may be used)."""
        verified = self._call("verify the API token", lambda c: c.user.tokens.verify())
        return str(getattr(verified, "status", "") or "unknown")

    def zone_by_id(self, zone_id: str) -> Zone | None:
        """Return the zone with id `zone_id`, or None when Cloudflare has none this token may see."""
        def read(client: cloudflare.Cloudflare) -> Any:
            try:
                return client.zones.get(zone_id=zone_id)
            except (cloudflare.NotFoundError, cloudflare.BadRequestError):
                return None

        return _zone(self._call(f"read zone {zone_id}", read))

    def zone_by_name(self, name: str) -> Zone | None:
        """Return the zone called `name` that the token may see, or None."""
        found = self._call(f"look up zone {name}", lambda c: list(c.zones.list(name=name)))
        return _zone(found[0]) if found else None

    def count_records(self, zone_id: str) -> int:
        """Return how many records the first page of the zone's listing holds (proves DNS read permission)."""
        page = self._call(f"list the records of zone {zone_id}",
                          lambda c: c.dns.records.list(zone_id=zone_id, per_page=5))
        return len(page.result)


def _retry_after(exc: cloudflare.APIError, attempt: int) -> float | None:
    """Return how long to wait before retrying after `exc`, or None when retrying cannot help."""
    backoff = min(0.5 * 2 ** attempt, 8.0)
    if isinstance(exc, cloudflare.APIStatusError):
        if exc.status_code == 429:
            header = exc.response.headers.get("retry-after", "")
            try:
                return min(max(float(header), 0.0), 60.0)
            except ValueError:
                return backoff
        return backoff if exc.status_code >= 500 else None
    return backoff if isinstance(exc, cloudflare.APIConnectionError) else None


def _hint(exc: Exception) -> str:
    status = getattr(exc, "status_code", 0)
    if status in (401, 403):
        return "check the token's DNS:Edit permission on the zone"
    if status == 404:
        return "check dns.zone_id (empty: looked up from site.domain)"
    if isinstance(exc, cloudflare.APIConnectionError):
        return "check dns.api_base_url and this host's network"
    if 400 <= status < 500 and status != 429:
        return "Cloudflare refused the request: check the [dns] settings"
    return "try again; graphsite retries throttling and server errors a few times"


def _record(raw) -> Record:
    return Record(id=raw.id, name=raw.name, type=raw.type, content=getattr(raw, "content", "") or "",
                  ttl=int(getattr(raw, "ttl", 1) or 1), proxied=bool(getattr(raw, "proxied", False)),
                  comment=getattr(raw, "comment", "") or "")


def _errors(exc: cloudflare.APIStatusError) -> list[dict]:
    body = exc.body if isinstance(exc.body, dict) else {}
    return [e for e in body.get("errors") or [] if isinstance(e, dict)]


def _messages(exc: cloudflare.APIStatusError) -> str:
    text = "; ".join(f"{e.get('code', '')} {e.get('message', '')}".strip() for e in _errors(exc))
    return text or exc.message


@dataclass(frozen=True)
class Zone:
    """A zone as Cloudflare describes it."""

    id: str
    name: str
    status: str


def _zone(raw: Any) -> Zone | None:
    if raw is None:
        return None
    return Zone(id=raw.id, name=str(raw.name).lower().rstrip("."), status=str(getattr(raw, "status", "") or ""))
