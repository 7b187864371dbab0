"""Cloudflare DNS: the page's A record. The only module that imports `cloudflare`; SDK exceptions are
translated here, once, and the API token never reaches a message."""

from __future__ import annotations

from dataclasses import dataclass

import cloudflare
import httpx

from graphsite.config import Config
from graphsite.errors import ConfigError, DeployError
from graphsite.publisher.plan import DnsRecord
from graphsite.publisher.probe import tls_context

COMMENT_PREFIX = "graphsite:"
IDENTICAL = 81058  # Cloudflare's "An identical record already exists."
_TYPES = ("A", "AAAA", "CNAME")


@dataclass(frozen=True)
class Record(DnsRecord):
    """A record as Cloudflare holds it: the fields graphsite plans, and its id."""

    id: str

    @property
    def ours(self) -> bool:
        """True when graphsite made the record (its comment says so)."""
        return self.comment.startswith(COMMENT_PREFIX)


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
        self._token = token
        self._domain, self._base_url = config.site.domain, config.dns.api_base_url
        ca_bundle = config.dns.ca_bundle
        verify = tls_context(ca_bundle, setting="dns.ca_bundle") if ca_bundle else True  # True: httpx's default
        self._client = cloudflare.Cloudflare(
            api_token=token, base_url=config.dns.api_base_url, max_retries=config.dns.retries,
            timeout=config.dns.timeout, http_client=httpx.Client(verify=verify, timeout=config.dns.timeout))
        self._zone_id = config.dns.zone_id

    def _fail(self, action: str, exc: Exception) -> DnsError:
        if isinstance(exc, cloudflare.APIStatusError):
            detail = f"HTTP {exc.status_code}: {_messages(exc)}"
        elif isinstance(exc, cloudflare.APIConnectionError):
            detail = f"cannot reach {self._base_url} ({type(exc).__name__})"
        else:
            detail = type(exc).__name__
        message = f"Cloudflare: {action}: {detail}".replace(self._token, "***")
        return DnsError(message, hint=_hint(exc))

    @property
    def zone_id(self) -> str:
        if not self._zone_id:
            try:
                zones = list(self._client.zones.list(name=self._domain))
            except cloudflare.APIError as exc:
                raise self._fail(f"look up zone {self._domain}", exc) from None
            if not zones:
                raise ConfigError(f"dns.zone_id: no Cloudflare zone named {self._domain} for this token",
                                  hint="set dns.zone_id or check site.domain")
            self._zone_id = zones[0].id
        return self._zone_id

    def records(self, name: str) -> list[Record]:
        """Return the A, AAAA and CNAME records named exactly `name`."""
        try:
            found = self._client.dns.records.list(zone_id=self.zone_id, name={"exact": name}, per_page=100)
            return [r for r in map(_record, found) if r.type in _TYPES and r.name == name]
        except cloudflare.APIError as exc:
            raise self._fail(f"list records named {name}", exc) from None

    def graphsite_records(self) -> list[Record]:
        """Return every A record of the zone that graphsite made."""
        try:
            found = self._client.dns.records.list(zone_id=self.zone_id, type="A", per_page=100)
            return [r for r in map(_record, found) if r.ours]
        except cloudflare.APIError as exc:
            raise self._fail("list records", exc) from None

    def create(self, record: DnsRecord) -> Record:
        """Create the A record; when Cloudflare says an identical one exists (a retried create whose first
        attempt did succeed), return that one rather than fail and leave it behind."""
        try:
            made = self._client.dns.records.create(
                zone_id=self.zone_id, name=record.name, type="A", content=record.content, ttl=record.ttl,
                proxied=record.proxied, comment=record.comment)
        except cloudflare.BadRequestError as exc:
            same = [r for r in self.records(record.name) if r.type == "A" and r.content == record.content]
            if IDENTICAL in _codes(exc) and same:
                return same[0]
            raise self._fail(f"create A {record.name}", exc) from None
        except cloudflare.APIError as exc:
            raise self._fail(f"create A {record.name}", exc) from None
        return _record(made)

    def delete(self, record_id: str) -> bool:
        """Delete the record; return False when it was already gone."""
        try:
            self._client.dns.records.delete(record_id, zone_id=self.zone_id)
        except cloudflare.NotFoundError:
            return False
        except cloudflare.APIError as exc:
            raise self._fail(f"delete record {record_id}", exc) from None
        return True

    def close(self) -> None:
        self._client.close()


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


def _codes(exc: cloudflare.APIStatusError) -> set:
    return {e.get("code") for e in _errors(exc)}


def _messages(exc: cloudflare.APIStatusError) -> str:
    text = "; ".join(f"{e.get('code', '')} {e.get('message', '')}".strip() for e in _errors(exc))
    return text or exc.message


# --- read-only facts for `graphsite doctor` (nothing below changes the zone) --------------------------------


@dataclass(frozen=True)
class Zone:
    """A zone as Cloudflare describes it."""

    id: str
    name: str
    status: str


def token_status(dns: Dns) -> str:
    """Return the token's status from GET /user/tokens/verify (`active` when it may be used)."""
    try:
        verified = dns._client.user.tokens.verify()
    except cloudflare.APIError as exc:
        raise dns._fail("verify the API token", exc) from None
    return str(getattr(verified, "status", "") or "unknown")


def zone_by_id(dns: Dns, zone_id: str) -> Zone | None:
    """Return the zone with id `zone_id`, or None when Cloudflare has none this token may see."""
    try:
        raw = dns._client.zones.get(zone_id=zone_id)
    except (cloudflare.NotFoundError, cloudflare.BadRequestError):
        return None
    except cloudflare.APIError as exc:
        raise dns._fail(f"read zone {zone_id}", exc) from None
    if raw is None:
        return None
    return Zone(id=raw.id, name=str(raw.name).lower().rstrip("."), status=str(getattr(raw, "status", "") or ""))


def zone_by_name(dns: Dns, name: str) -> Zone | None:
    """Return the zone called `name` that the token may see, or None."""
    try:
        found = list(dns._client.zones.list(name=name))
    except cloudflare.APIError as exc:
        raise dns._fail(f"look up zone {name}", exc) from None
    if not found:
        return None
    raw = found[0]
    return Zone(id=raw.id, name=str(raw.name).lower().rstrip("."), status=str(getattr(raw, "status", "") or ""))


def count_records(dns: Dns, zone_id: str) -> int:
    """Return how many records the first page of the zone's listing holds (proves DNS read permission)."""
    try:
        page = dns._client.dns.records.list(zone_id=zone_id, per_page=5)
    except cloudflare.APIError as exc:
        raise dns._fail(f"list the records of zone {zone_id}", exc) from None
    return len(page.result)
