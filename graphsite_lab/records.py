"""The fake Cloudflare's zone: DNS records and the rules Cloudflare applies to them, as pure functions.

Every operation takes the records as they are and returns an `Outcome`: the HTTP status, Cloudflare's envelope,
and the records afterwards. The server (`cfserver.py`) only persists and transports what these return.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

# Cloudflare's own codes and wording (seen in real answers).
CODE_CNAME_CONFLICT = (81053, "An A, AAAA, or CNAME record with that host already exists.")
CODE_IDENTICAL = (81058, "An identical record already exists.")
CODE_NOT_FOUND = (81044, "Record does not exist.")
CODE_BAD_ZONE = (7003, "Could not route to /zones/{zone}/dns_records, perhaps your object identifier is invalid?")
# Not Cloudflare's: the lab says so rather than silently ignoring a filter it does not implement.
CODE_NOT_IMPLEMENTED = (1002, "The lab does not implement the query parameter '{name}'.")
CODE_NOT_WHOLE = (1002, "The lab pages by whole numbers only: {name}={value}.")

_ADDRESS_TYPES = {"A", "AAAA", "CNAME"}
_TEXT_OPERATORS = ("exact", "contains", "startswith", "endswith")
_FILTERED_FIELDS = ("name", "content", "comment")
_HANDLED = {"page", "per_page", "order", "direction", "match", "type", "proxied"}
_ORDER_KEYS = {"type", "name", "content", "ttl", "proxied"}


@dataclass(frozen=True)
class Outcome:
    """What an operation answers (status, envelope) and the zone's records afterwards."""

    status: int
    envelope: dict[str, Any]
    records: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Zone:
    name: str
    zone_id: str
    records: tuple[dict[str, Any], ...] = field(default=())


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ok(result: Any, result_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return Cloudflare's success envelope."""
    envelope = {"success": True, "errors": [], "messages": [], "result": result}
    if result_info is not None:
        envelope["result_info"] = result_info
    return envelope


def error(code: tuple[int, str], **fill: str) -> dict[str, Any]:
    """Return Cloudflare's error envelope for one of the codes above."""
    number, message = code
    return {"success": False, "errors": [{"code": number, "message": message.format(**fill)}],
            "messages": [], "result": None}


def full_name(name: str, zone: str) -> str:
    """Return the record name as Cloudflare stores it: lowercase, inside the zone (`@` is the apex)."""
    name = name.strip().rstrip(".").lower()
    if name in ("@", "", zone):
        return zone
    return name if name.endswith("." + zone) else f"{name}.{zone}"


def _record(body: dict[str, Any], zone: Zone, record_id: str, created_on: str) -> dict[str, Any]:
    now = _now()
    kind = body["type"]
    return {
        "id": record_id,
        "name": full_name(body["name"], zone.name),
        "type": kind,
        "content": body.get("content", ""),
        "proxiable": kind in _ADDRESS_TYPES,
        "proxied": bool(body.get("proxied", False)),
        "ttl": body.get("ttl", 1),
        "settings": body.get("settings", {}),
        "meta": {},
        "comment": body.get("comment"),
        "tags": list(body.get("tags", [])),
        "created_on": created_on,
        "modified_on": now,
    }


def _conflict(candidate: dict[str, Any], others: Iterable[dict[str, Any]]) -> tuple[int, str] | None:
    for other in others:
        if other["name"] != candidate["name"]:
            continue
        if other["type"] == candidate["type"] and other["content"] == candidate["content"]:
            return CODE_IDENTICAL
        pair = {other["type"], candidate["type"]}
        if "CNAME" in pair and pair <= _ADDRESS_TYPES:
            return CODE_CNAME_CONFLICT
    return None


def _store(zone: Zone, candidate: dict[str, Any], replacing: str | None = None) -> Outcome:
    others = [r for r in zone.records if r["id"] != replacing]
    problem = _conflict(candidate, others)
    if problem:
        return Outcome(400, error(problem), zone.records)
    if replacing is None:
        records = (*zone.records, candidate)
    else:
        records = tuple(candidate if r["id"] == replacing else r for r in zone.records)
    return Outcome(200, ok(candidate), records)


def create(zone: Zone, body: dict[str, Any]) -> Outcome:
    """POST /zones/{id}/dns_records."""
    return _store(zone, _record(body, zone, secrets.token_hex(16), _now()))


def _find(zone: Zone, record_id: str) -> dict[str, Any] | None:
    return next((r for r in zone.records if r["id"] == record_id), None)


def get(zone: Zone, record_id: str) -> Outcome:
    """GET /zones/{id}/dns_records/{record_id}."""
    record = _find(zone, record_id)
    if record is None:
        return Outcome(404, error(CODE_NOT_FOUND), zone.records)
    return Outcome(200, ok(record), zone.records)


def update(zone: Zone, record_id: str, body: dict[str, Any], *, merge: bool) -> Outcome:
    """PUT (merge=False: the body replaces the record) or PATCH (merge=True) a record."""
    record = _find(zone, record_id)
    if record is None:
        return Outcome(404, error(CODE_NOT_FOUND), zone.records)
    if merge:
        body = {**record, **body}
    return _store(zone, _record(body, zone, record_id, record["created_on"]), replacing=record_id)


def delete(zone: Zone, record_id: str) -> Outcome:
    """DELETE /zones/{id}/dns_records/{record_id}."""
    if _find(zone, record_id) is None:
        return Outcome(404, error(CODE_NOT_FOUND), zone.records)
    return Outcome(200, ok({"id": record_id}), tuple(r for r in zone.records if r["id"] != record_id))


def _text_match(value: str | None, operator: str, wanted: str) -> bool:
    value, wanted = (value or "").lower(), wanted.lower()
    return {"exact": value == wanted, "contains": wanted in value,
            "startswith": value.startswith(wanted), "endswith": value.endswith(wanted)}[operator]


def _field_test(field: str, operator: str, wanted: str, record: dict[str, Any]) -> bool:
    return _text_match(record.get(field), operator, wanted)


def _comment_test(present: bool, record: dict[str, Any]) -> bool:
    return bool(record.get("comment")) == present


def _proxied_test(wanted: str, record: dict[str, Any]) -> bool:
    return record["proxied"] == (wanted.lower() == "true")


def _tests(query: dict[str, str], zone: Zone) -> list[Callable[[dict[str, Any]], bool]]:
    tests: list[Callable[[dict[str, Any]], bool]] = []
    for key, wanted in query.items():
        head, _, operator = key.partition(".")
        if head in _FILTERED_FIELDS and operator in ("", *_TEXT_OPERATORS):
            operator = operator or "exact"
            if head == "name" and operator == "exact":
                wanted = full_name(wanted, zone.name)
            tests.append(partial(_field_test, head, operator, wanted))
        elif key in ("comment.present", "comment.absent"):
            tests.append(partial(_comment_test, key == "comment.present"))
        elif key == "proxied":
            tests.append(partial(_proxied_test, wanted))
    return tests


def unsupported(query: dict[str, str]) -> str | None:
    """Return the first query parameter the lab cannot honour (valid for Cloudflare, not implemented)."""
    for key in query:
        head, _, operator = key.partition(".")
        known = (key in _HANDLED or key in ("comment.present", "comment.absent")
                 or (head in _FILTERED_FIELDS and operator in ("", *_TEXT_OPERATORS)))
        if not known:
            return key
    return None


def listing(zone: Zone, query: dict[str, str]) -> Outcome:
    """GET /zones/{id}/dns_records with Cloudflare's filters and pagination (a page past the end is empty)."""
    missing = unsupported(query)
    if missing:
        return Outcome(400, error(CODE_NOT_IMPLEMENTED, name=missing), zone.records)
    tests = _tests(query, zone)
    combine = any if query.get("match") == "any" else all
    chosen = [r for r in zone.records
              if (not tests or combine(t(r) for t in tests))
              and ("type" not in query or r["type"] == query["type"])]
    order = query.get("order")
    if order in _ORDER_KEYS:
        chosen.sort(key=lambda r: r[order], reverse=query.get("direction") == "desc")
    return _paged(zone, chosen, query, default_per_page=100)


def _whole(query: dict[str, str], name: str, default: int) -> int | None:
    """Return the query's page or per_page as a positive whole number, None when it is not one."""
    text = query.get(name, str(default)).strip()
    return int(text) if text.isascii() and text.isdigit() and int(text) > 0 else None


def _paged(zone: Zone, chosen: list[dict[str, Any]], query: dict[str, str], default_per_page: int) -> Outcome:
    """Return one page of `chosen` with the `result_info` Cloudflare documents: the page and page size asked
    for, `count` on this page, `total_count` matching the filters, `total_pages` = ceil(total / per_page)
    (0 when nothing matches, as Cloudflare answers). A page past the end is empty with the same totals."""
    page, per_page = _whole(query, "page", 1), _whole(query, "per_page", default_per_page)
    if page is None or per_page is None:
        name = "page" if page is None else "per_page"
        # The contract types them as numbers: 2.5 fits it, and answering page 2 for it would hide the mistake.
        return Outcome(400, error(CODE_NOT_WHOLE, name=name, value=query[name]), zone.records)
    start = (page - 1) * per_page
    shown = chosen[start:start + per_page]
    info = {"page": page, "per_page": per_page, "count": len(shown), "total_count": len(chosen),
            "total_pages": -(-len(chosen) // per_page)}
    return Outcome(200, ok(shown, info), zone.records)


def zones(zone: Zone, query: dict[str, str]) -> Outcome:
    """GET /zones?name=…: the one zone the lab serves, when the name matches (outside the DNS description)."""
    found = [] if query.get("name", zone.name) != zone.name else [zone_object(zone)]
    return _paged(zone, found, query, default_per_page=20)


def zone_object(zone: Zone) -> dict[str, Any]:
    """Return the zone as GET /zones/{id} describes it."""
    return {"id": zone.zone_id, "name": zone.name, "status": "active", "paused": False, "type": "full",
            "name_servers": [f"ns1.{zone.name}", f"ns2.{zone.name}"]}
