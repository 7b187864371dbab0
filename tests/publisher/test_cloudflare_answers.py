"""Every answer Cloudflare can give, against the real adapter (publisher/cloudflare.py) and a fake Cloudflare of
this test's own (the lab's server, lying on request): a call returns what the zone holds, or raises DnsError
naming the call. Never another exception, never an empty or partial list for a read that was lied to, never a
change for a write that was refused; and once the lies stop, the zone reads back as it is."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphsite.publisher.cloudflare import Dns, DnsError, envelope, page_of
from graphsite.publisher.deployment import Stamp
from graphsite_lab.faults import Kind

CALLS = {"records": "name.exact", "a_records": "type=A", "create": "POST", "delete": "DELETE"}
VARIANTS = {Kind.BAD_PAGINATION: ("count", "total"), Kind.WRONG_TYPES: ("string", "no_id", "no_name")}


@pytest.fixture
def zone(private_cf, fixed_plan):
    config, control = private_cf
    dns = Dns(config.replace("dns", retries=0, timeout=3.0))
    yield dns, control, fixed_plan.record
    dns.close()


def _wanted(record, index: int):
    name = f"gs-{index}.lab.graphsite.test"
    stamp = Stamp(f"gs-{index}", name, "0a1b2c3d", "2026-07-01T12:00:00Z")
    return replace(record, name=name, content="127.0.0.1", comment=stamp.record_comment())


def _truth(dns: Dns) -> list[tuple[str, str]]:
    return sorted((r.name, r.id) for r in dns.a_records())


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from([k for k in Kind if k != Kind.ERROR]), call=st.sampled_from(sorted(CALLS)),
       after=st.booleans(), existing=st.integers(1, 3), data=st.data())
def test_a_lie_is_an_error_naming_the_call_and_never_taken_for_an_answer(zone, kind, call, after, existing, data):
    dns, control, record = zone
    control.reset()
    made = [dns.create(_wanted(record, index)) for index in range(existing)]
    before = _truth(dns)
    variant = data.draw(st.sampled_from(VARIANTS.get(kind, ("",))))
    control.lie_next(1, kind, match=CALLS[call], after=after, variant=variant)
    try:
        if call == "records":
            answer: object = dns.records(made[0].name)
        elif call == "a_records":
            answer = dns.a_records()
        elif call == "create":
            answer = dns.create(_wanted(record, 9))
        else:
            answer = dns.delete(made[0].id)
        raised = None
    except DnsError as exc:
        raised, answer = exc, None
    lied = control.fault()["fail_next"] == 0
    control.fail_next(0)
    if lied:
        assert raised is not None, f"{kind} {variant} on {call} was taken for an answer: {answer!r}"
        assert raised.message.startswith("Cloudflare: ") and len(raised.message.splitlines()[0]) < 300
    if raised is not None and not after and call in ("create", "delete"):
        assert _truth(dns) == before  # refused: nothing changed
    if raised is None and call in ("records", "a_records"):
        expected = [r for r in before if call == "a_records" or r[0] == made[0].name]
        assert sorted((r.name, r.id) for r in answer) == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b"null", b'"ok"', b"<html>502</html>", b'{"success": true}',
                                  b'{"success": "true", "result": []}', b'{"success": false, "result": null}'])
@pytest.mark.parametrize("status", [200, 404, 502])
def test_an_answer_that_is_not_a_well_formed_success_is_an_error(status, body):
    with pytest.raises(DnsError) as info:
        envelope("list records", status, body)
    assert info.value.message.startswith("Cloudflare: list records: HTTP ")
    assert info.value.transient == (status >= 500)


@pytest.mark.parametrize(("header", "seconds"), [("7", 7.0), ("-3", 0.0), ("1e9", 60.0), ("inf", 60.0),
                                                  ("nan", None), ("NaN", None), ("\u00b2", None), ("", None)])
def test_a_retry_after_is_held_to_a_minute_and_one_that_is_no_number_is_none(header, seconds):
    """Retry-After: nan passed max() and min() as nan, then time.sleep(nan) raised ValueError in the retry."""
    with pytest.raises(DnsError) as info:
        envelope("list records", 429, b'{"success": false, "errors": []}', retry_after=header)
    assert info.value.retry_after == seconds and info.value.transient


@pytest.mark.parametrize("info,items,page", [
    ({"page": 1, "count": 2, "total_count": 1, "total_pages": 1}, [{}, {}], 1),  # more items than the total
    ({"page": 1, "count": 0, "total_count": 5, "total_pages": 2}, [], 1),  # an empty page that says more follow
    ({"page": 1, "count": 2, "total_count": 2, "total_pages": 1}, [{}], 1),  # count is not the items
    ({"page": 2, "count": 1, "total_count": 1, "total_pages": 1}, [{}], 1),  # another page than asked for
    ({"page": 1, "count": 1, "total_count": "1", "total_pages": 1}, [{}], 1),  # a number that is not one
    (None, [{}], 1),
])
def test_pages_that_do_not_add_up_are_errors(info, items, page):
    answer = {"success": True, "result": items, **({"result_info": info} if info is not None else {})}
    with pytest.raises(DnsError, match="Cloudflare: list: "):
        page_of("list", answer, page)
