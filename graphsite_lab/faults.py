"""The fake Cloudflare's injected faults: what a test asks for (`Fault`), which calls it fits, and the answer that
goes out in place of the real one -- an error status, or a lie (an answer that breaks Cloudflare's promises the
way a real API occasionally does).

Pure functions: the server (`cfserver.py`) takes a fault from its state (`cfstate.py`) and sends what `reply`
returns. A lie is deliberate, so it is never checked against the contract (`contract.py`); the server logs it as
injected instead. The lab's own answers, the ones lies are made from, are checked before they are distorted.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any, Literal

from graphsite_lab import errorpage, records

RATE_LIMITED = (971, "Please wait and consider throttling your request speed")
INJECTED_500 = (1000, "Internal server error (injected by the lab)")
INJECTED_FAILURE = (1000, "An unknown error occurred (injected by the lab)")
ERROR_STATUSES = (429, 500, 502, 503)


class Kind(StrEnum):
    """What an injected fault answers."""

    ERROR = "error"  # its `status` (429, 500, 502, 503) with Cloudflare's error envelope; the default
    SUCCESS_FALSE = "success_false"  # 200 with success false, error 1000 and result null
    TRUNCATED = "truncated"  # 200, the real answer's JSON cut in half (Content-Length matches the cut)
    HTML = "html"  # 502 with an edge's HTML error page
    EMPTY_PAGE = "empty_page"  # a list: no records, but result_info says there are more pages
    BAD_PAGINATION = "bad_pagination"  # a list: result_info's count or total_count contradicts the records
    WRONG_TYPES = "wrong_types"  # 200, success true, result a string or a record without id or name
    EMPTY_BODY = "empty_body"  # 200 with no body at all


# Lies made from the real answer: they need a successful one. A call that fails for real gets its real answer,
# and the fault waits for the next call it fits.
DISTORTING = frozenset({Kind.TRUNCATED, Kind.EMPTY_PAGE, Kind.BAD_PAGINATION, Kind.WRONG_TYPES})
# The variants of a kind, its default first.
VARIANTS: dict[Kind, tuple[str, ...]] = {Kind.BAD_PAGINATION: ("count", "total"),
                                         Kind.WRONG_TYPES: ("string", "no_id", "no_name")}

# What a call answers: a page of records or zones, one record or zone, a deleted record's id, anything else.
Shape = Literal["list", "record", "deleted", "other"]


@dataclass(frozen=True)
class Fault:
    """One injected fault: the next `count` API calls that hold `match` and fit the kind answer with it."""

    count: int = 0
    kind: Kind = Kind.ERROR
    status: int = 500
    retry_after: int = 1
    match: str = ""
    after: bool = False  # the call is carried out, then its answer is replaced; without it, nothing changes
    variant: str = ""
    serial: int = 0  # which control call set it: a fault given back counts for that setting only

    def as_json(self) -> dict[str, Any]:
        """Return the fault as the control API shows it (`fail_next` is the count left)."""
        shown = asdict(self)
        del shown["serial"]
        return {"fail_next": shown.pop("count"), **shown, "kind": str(self.kind)}


def parse(data: dict[str, Any], serial: int) -> Fault | str:
    """Return the fault a `POST /__lab/faults` body asks for, or why it cannot be one."""
    if not isinstance(data, dict):
        return "the body is a JSON object: {\"kind\": …, \"fail_next\": N, …}"
    try:
        kind = Kind(data.get("kind", Kind.ERROR))
    except ValueError:
        return f"kind must be one of {', '.join(Kind)}"
    if "status" in data and kind != Kind.ERROR:
        return f"status goes with kind error only; {kind} answers as docs/lab.md says"
    variants = VARIANTS.get(kind, ("",))
    variant = data.get("variant") or variants[0]
    if variant not in variants:
        return f"variant of {kind} must be one of {', '.join(variants)}" if kind in VARIANTS else (
            f"{kind} has no variants")
    try:
        fault = Fault(count=int(data.get("fail_next", 1)), kind=kind, status=int(data.get("status", 500)),
                      retry_after=int(data.get("retry_after", 1)), match=str(data.get("match", "")),
                      after=bool(data.get("after", False)), variant=variant, serial=serial)
    except (TypeError, ValueError) as exc:
        return f"fail_next, status and retry_after are whole numbers: {exc}"
    if fault.status not in ERROR_STATUSES:
        return "status must be 429, 500, 502 or 503"
    return fault


def fits(fault: Fault, request: str, shape: Shape) -> bool:
    """Return whether the fault answers this call: one is left, the call holds `match`, the kind can lie about
    the call's shape (a page's lies need a list; a missing name needs records)."""
    if fault.count <= 0 or fault.match not in request:
        return False
    if fault.kind in (Kind.EMPTY_PAGE, Kind.BAD_PAGINATION):
        return shape == "list"
    if fault.kind == Kind.WRONG_TYPES and fault.variant != "string":
        return shape in (("list", "record") if fault.variant == "no_name" else ("list", "record", "deleted"))
    return True


@dataclass(frozen=True)
class Reply:
    """An answer as it goes on the wire."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def plain(status: int, envelope: dict[str, Any] | list[Any]) -> Reply:
    """Return a JSON answer."""
    return Reply(status, json.dumps(envelope).encode())


def reply(fault: Fault, answer: tuple[int, dict[str, Any]] | None) -> Reply | None:
    """Return what goes out instead of `answer` (the real status and envelope; None when the call was not carried
    out), or None when a distorting fault has nothing to distort (the real answer failed, or the list is empty)."""
    if fault.kind == Kind.ERROR:
        if fault.status == 429:
            return replace(plain(429, records.error(RATE_LIMITED)), headers=(("Retry-After", str(fault.retry_after)),))
        return plain(fault.status, records.error(INJECTED_500))
    if fault.kind == Kind.SUCCESS_FALSE:
        return plain(200, records.error(INJECTED_FAILURE))
    if fault.kind == Kind.HTML:
        return Reply(502, errorpage.bad_gateway(), "text/html; charset=UTF-8")
    if fault.kind == Kind.EMPTY_BODY:
        return Reply(200, b"")
    if answer is None or answer[0] != 200 or answer[1].get("success") is not True:
        return None
    envelope = answer[1]
    if fault.kind == Kind.TRUNCATED:
        whole = plain(200, envelope).body
        return Reply(200, whole[:len(whole) // 2])  # an object cut before its last brace never parses
    if fault.kind == Kind.WRONG_TYPES:
        result = _wrong(envelope["result"], fault.variant)
        return None if result is None else plain(200, {**envelope, "result": result})
    shown = [] if fault.kind == Kind.EMPTY_PAGE else envelope["result"]
    return plain(200, {**envelope, "result": shown, "result_info": _paging(envelope, fault)})


def _wrong(result: Any, variant: str) -> Any:
    """Return `result` as a string (the real result, encoded twice), or with its last record missing `id` or
    `name`; None when there is no record to take it from."""
    if variant == "string":
        return json.dumps(result)
    key = variant.removeprefix("no_")
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != key}
    if not result:
        return None
    return [*result[:-1], {k: v for k, v in result[-1].items() if k != key}]


def _paging(envelope: dict[str, Any], fault: Fault) -> dict[str, Any]:
    """Return a `result_info` that contradicts the page: for `empty_page` (whose records are dropped by the
    caller) more pages than this one; for `count`, one more record than the page holds; for `total`, a total one
    less than the records returned up to and including this page (-1 for an empty first page)."""
    info, shown = dict(envelope["result_info"]), len(envelope["result"])
    page, per_page = info["page"], info["per_page"]
    if fault.kind == Kind.EMPTY_PAGE:
        total = max(info["total_count"], page * per_page + 1)
        return {**info, "count": 0, "total_count": total, "total_pages": -(-total // per_page)}
    if fault.variant == "count":
        return {**info, "count": shown + 1}
    returned = min(info["total_count"], (page - 1) * per_page + shown)  # by this page and the ones before it
    return {**info, "total_count": returned - 1}

