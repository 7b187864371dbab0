"""What the fake Cloudflare answers: the `/client/v4` routes (checked against the contract) and the
`/__lab/` control API. Called by `cfserver.Handler` with plain values; returns (status, body)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from graphsite_lab import faults, records
from graphsite_lab.cfstate import FakeCloudflare

_RECORDS_PATH = re.compile(r"^/client/v4/zones/(?P<zone>[^/]+)/dns_records(?:/(?P<record>[^/]+))?$")
_ZONES_PATH = re.compile(r"^/client/v4/zones(?:/(?P<zone>[^/]+))?$")
_VERIFY_PATH = "/client/v4/user/tokens/verify"
AUTH_MISSING = (9106, "Missing X-Auth-Key, X-Auth-Email or Authorization headers")
AUTH_FAILED = (10000, "Authentication error")
INVALID_TOKEN = (1000, "Invalid API Token")
CONTRACT = (1004, "Request does not fit Cloudflare's API contract: {detail}")
NO_ROUTE = (7000, "No route for that URI")
LAB_BUG = (1000, "The lab's own answer broke the contract: {detail}")


def _authorised(headers: dict[str, str], token: str) -> tuple[int, str] | None:
    import hmac

    given = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    if not given:
        return AUTH_MISSING
    scheme, _, value = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
        return AUTH_FAILED
    return None


def shape(method: str, path: str) -> faults.Shape:
    """Return what a call to `path` answers: a list, one record or zone, a deleted record's id, or other."""
    path = path.rstrip("/")
    in_records, in_zones = _RECORDS_PATH.match(path), _ZONES_PATH.match(path)
    if in_records:
        one = in_records["record"]
    elif in_zones:
        one = in_zones["zone"]
    else:
        return "other"
    if one is None and method == "GET":
        return "list"
    return "deleted" if method == "DELETE" else "record"  # a POST to the list answers the record it made


def answer(app: FakeCloudflare, method: str, path: str, query: list[tuple[str, str]],
           headers: dict[str, str], body: bytes, commit: bool = True) -> tuple[int, dict[str, Any]]:
    """Return the status and envelope for one `/client/v4` request, updating the zone on success; without
    `commit`, what it would answer, leaving the zone as it is (a fault replaces the answer of a call not made)."""
    path = path.rstrip("/")
    match = _RECORDS_PATH.match(path)
    if match is None:
        zones = _ZONES_PATH.match(path)
        if zones and method == "GET":
            return _zones(app, headers, dict(query), zones["zone"])
        if path == _VERIFY_PATH and method == "GET":
            return _verify_token(app, headers)
        app.log(f"no route: {method} {path}")
        return 404, records.error(NO_ROUTE)
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "application/json")
    violation = app.contract.check_request(method, path, query, headers, body or None, content_type)
    if violation:
        app.log(f"contract: {method} {path}: {violation.message}")
        return 400, records.error(CONTRACT, detail=violation.message)
    denied = _authorised(headers, app.token)
    if denied:
        return (400 if denied == AUTH_MISSING else 403), records.error(denied)
    if match["zone"] != app.zone.zone_id:
        return 404, records.error(records.CODE_BAD_ZONE, zone=match["zone"])
    with app.lock:
        outcome = _operate(app.zone, method, match["record"], dict(query), json.loads(body) if body else {})
        changed = commit and outcome.records is not app.zone.records
        if changed:
            app.zone = records.Zone(app.zone.name, app.zone.zone_id, outcome.records)
    if changed:
        app.save()
    encoded = json.dumps(outcome.envelope).encode()
    broken = app.contract.check_response(method, path, outcome.status, encoded)
    if broken:
        app.log(f"lab bug: response to {method} {path}: {broken.message}")
        return 500, records.error(LAB_BUG, detail=broken.message)
    return outcome.status, outcome.envelope


def _operate(zone: records.Zone, method: str, record_id: str | None, query: dict[str, str],
             body: dict[str, Any]) -> records.Outcome:
    if record_id is None:
        return records.create(zone, body) if method == "POST" else records.listing(zone, query)
    if method == "GET":
        return records.get(zone, record_id)
    if method == "DELETE":
        return records.delete(zone, record_id)
    return records.update(zone, record_id, body, merge=method == "PATCH")


def _zones(app: FakeCloudflare, headers: dict[str, str], query: dict[str, str],
           zone_id: str | None) -> tuple[int, dict[str, Any]]:
    """GET /zones?name= and /zones/{id}: outside the DNS description, so the envelope is checked here."""
    denied = _authorised(headers, app.token)
    if denied:
        return (400 if denied == AUTH_MISSING else 403), records.error(denied)
    if zone_id is not None:
        if zone_id != app.zone.zone_id:
            return 404, records.error(records.CODE_BAD_ZONE, zone=zone_id)
        return 200, records.ok(records.zone_object(app.zone))
    outcome = records.zones(app.zone, query)
    if outcome.status != 200:
        return outcome.status, outcome.envelope
    assert set(outcome.envelope) >= {"success", "errors", "messages", "result", "result_info"}
    assert isinstance(outcome.envelope["result"], list) and outcome.envelope["success"] is True
    return 200, outcome.envelope


def _verify_token(app: FakeCloudflare, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """GET /user/tokens/verify: Cloudflare answers 401 with code 1000 for a token it does not know."""
    if _authorised(headers, app.token):
        return 401, records.error(INVALID_TOKEN)
    import hashlib

    token_id = hashlib.sha256(app.token.encode()).hexdigest()[:32]  # an id, never the token
    return 200, records.ok({"id": token_id, "status": "active"})


def control(app: FakeCloudflare, method: str, path: str, body: bytes) -> tuple[int, Any]:
    """The `/__lab/` control API: faults, latency, reset, the request log, the records, health."""
    try:
        data = json.loads(body) if body else {}
    except ValueError:
        return 400, {"error": "body is not JSON"}
    if method == "GET" and path == "/__lab/health":
        return 200, {"ok": True, "zone": app.zone.name, "zone_id": app.zone.zone_id, "pid": os.getpid(),
                     "lab_dir": str(app.lab_dir), "code": app.code, "answered": app.answered, "run": app.run}
    if method == "GET" and path == "/__lab/requests":
        with app.lock:
            return 200, list(app.requests)
    if method == "GET" and path == "/__lab/records":
        with app.lock:
            return 200, list(app.zone.records)
    if method == "POST" and path == "/__lab/faults":
        fault = app.set_fault(data)
        return (200, fault.as_json()) if isinstance(fault, faults.Fault) else (400, {"error": fault})
    if method == "GET" and path == "/__lab/faults":
        return 200, app.fault.as_json()
    if method == "POST" and path == "/__lab/latency":
        app.latency_ms = max(0, int(data.get("ms", 0)))
        return 200, {"ms": app.latency_ms}
    if method == "POST" and path == "/__lab/reset":
        app.reset()
        return 200, {"reset": True}
    return 404, {"error": f"no control route {method} {path}"}
