"""The fake Cloudflare's lies (`graphsite_lab/faults.py`): each kind read as raw HTTP with httpx, what `match`,
counts and `after` do, and that the contract lets the injected lies through and logs them as injected. One server
for the module (no lab needed), reset before each test."""

from __future__ import annotations

import json

import httpx
import pytest
from bs4 import BeautifulSoup

from graphsite_lab import faults, records
from graphsite_lab.faults import Kind


@pytest.fixture
def cf(module_cf):
    module_cf.control.reset()
    with httpx.Client(base_url=f"{module_cf.base_url}/zones/{module_cf.zone_id}",
                      headers={"Authorization": f"Bearer {module_cf.token}"}) as api:
        module_cf.api = api
        yield module_cf


def _create(cf, name: str) -> httpx.Response:
    return cf.api.post("/dns_records", json={"name": name, "type": "A", "content": "127.0.0.1", "ttl": 60})


def _names(cf) -> list[str]:
    return [record["name"].split(".")[0] for record in cf.control.records()]


def _log_kinds(cf) -> list[str | None]:
    return [entry["fault_kind"] for entry in cf.control.requests()]


def test_success_false_answers_a_read_with_200_and_cloudflares_failure_envelope(cf):
    cf.control.lie_next(1, Kind.SUCCESS_FALSE)
    lie = cf.api.get("/dns_records")
    assert lie.status_code == 200 and lie.headers["content-type"] == "application/json"
    body = lie.json()
    assert body == {"success": False, "errors": [{"code": 1000, "message": body["errors"][0]["message"]}],
                    "messages": [], "result": None}
    assert cf.api.get("/dns_records").json()["success"] is True


def test_success_false_on_a_write_changes_nothing_and_with_after_the_write_is_done(cf):
    cf.control.lie_next(1, Kind.SUCCESS_FALSE)
    assert _create(cf, "lost").json()["success"] is False
    cf.control.lie_next(1, Kind.SUCCESS_FALSE, after=True)
    assert _create(cf, "made").json()["success"] is False
    assert _names(cf) == ["made"]
    made = cf.control.records()[0]["id"]
    cf.control.lie_next(1, Kind.SUCCESS_FALSE, after=True)
    assert cf.api.delete(f"/dns_records/{made}").json()["success"] is False
    assert _names(cf) == []


def test_truncated_is_the_real_answer_cut_in_half_with_a_content_length_that_matches(cf):
    for index in range(3):
        _create(cf, f"t{index}")
    cf.control.lie_next(1, Kind.TRUNCATED)
    cut = cf.api.get("/dns_records")
    whole = cf.api.get("/dns_records")
    assert cut.status_code == 200 and int(cut.headers["content-length"]) == len(cut.content)
    assert len(cut.content) == len(whole.content) // 2 and whole.content.startswith(cut.content)
    with pytest.raises(ValueError):
        json.loads(cut.content)


def test_truncated_create_without_after_leaves_the_zone_as_it_was(cf):
    cf.control.lie_next(1, Kind.TRUNCATED)
    cut = _create(cf, "maybe")
    assert cut.status_code == 200 and b'"name": "maybe.' in cut.content  # what it would have answered
    assert _names(cf) == []
    cf.control.lie_next(1, Kind.TRUNCATED, after=True)
    _create(cf, "maybe")
    assert _names(cf) == ["maybe"]


def test_html_is_an_edges_502_page_of_several_kb(cf):
    cf.control.lie_next(1, Kind.HTML)
    page = cf.api.get("/dns_records")
    assert page.status_code == 502 and page.headers["content-type"].startswith("text/html")
    assert page.text.startswith("<!DOCTYPE html>") and len(page.content) > 3000
    assert BeautifulSoup(page.text, "html.parser").title.string == "502 Bad Gateway"
    with pytest.raises(ValueError):
        page.json()


def test_empty_body_is_a_200_with_nothing_in_it(cf):
    cf.control.lie_next(1, Kind.EMPTY_BODY)
    empty = _create(cf, "nothing")
    assert (empty.status_code, empty.content, empty.headers["content-length"]) == (200, b"", "0")


def test_empty_page_waits_for_a_list_and_says_there_are_more_pages(cf):
    cf.control.lie_next(1, Kind.EMPTY_PAGE)
    assert _create(cf, "p0").json()["success"] is True  # not a list: the fault passes it by
    _create(cf, "p1")
    lie = cf.api.get("/dns_records", params={"per_page": 1}).json()
    assert lie["success"] is True and lie["result"] == []
    info = lie["result_info"]
    assert info["count"] == 0 and info["total_count"] >= 2 and info["total_pages"] > 1 and info["page"] == 1
    assert _log_kinds(cf) == [None, None, "empty_page"]


@pytest.mark.parametrize("variant", ["count", "total"])
def test_bad_pagination_contradicts_the_records_it_returns(cf, variant):
    for index in range(3):
        _create(cf, f"b{index}")
    cf.control.lie_next(1, Kind.BAD_PAGINATION, variant=variant)
    lie = cf.api.get("/dns_records", params={"per_page": 2, "page": 2}).json()
    truth = cf.api.get("/dns_records", params={"per_page": 2, "page": 2}).json()
    assert lie["result"] == truth["result"] and len(lie["result"]) == 1
    if variant == "count":
        assert lie["result_info"] == {**truth["result_info"], "count": 2}
    else:  # 3 records returned by pages 1 and 2, a total of 2
        assert lie["result_info"] == {**truth["result_info"], "total_count": 2}


def test_wrong_types_string_is_the_real_result_encoded_as_a_string(cf):
    made = _create(cf, "s").json()["result"]
    cf.control.lie_next(2, Kind.WRONG_TYPES)
    listed, single = cf.api.get("/dns_records").json(), cf.api.get(f"/dns_records/{made['id']}").json()
    assert listed["success"] is True and json.loads(listed["result"]) == [made]
    assert single["success"] is True and json.loads(single["result"]) == made


def test_wrong_types_drops_id_or_name_of_the_last_record_and_no_name_passes_a_delete_by(cf):
    first, last = (_create(cf, name).json()["result"] for name in ("w0", "w1"))
    cf.control.lie_next(1, Kind.WRONG_TYPES, variant="no_id")
    listed = cf.api.get("/dns_records").json()["result"]
    assert listed[0] == first and "id" not in listed[1] and listed[1]["name"] == last["name"]
    cf.control.lie_next(1, Kind.WRONG_TYPES, variant="no_name")
    assert cf.api.delete(f"/dns_records/{first['id']}").json()["result"] == {"id": first["id"]}
    single = cf.api.get(f"/dns_records/{last['id']}").json()["result"]
    assert "name" not in single and single["id"] == last["id"]


def test_a_lie_with_nothing_to_distort_lets_the_real_answer_through_and_waits(cf):
    cf.control.lie_next(1, Kind.WRONG_TYPES, variant="no_id")
    assert cf.api.get("/dns_records").json()["result"] == []  # an empty list has no record to lose its id
    assert cf.api.get(f"/dns_records/{'f' * 32}").status_code == 404  # a real failure goes out as it is
    assert cf.control.fault()["fail_next"] == 1
    made = _create(cf, "x").json()  # the next call it fits; without `after`, the create was not carried out
    assert made["success"] is True and "id" not in made["result"] and _names(cf) == []
    assert _log_kinds(cf) == [None, None, "wrong_types"]


def test_match_and_count_limit_a_lie_to_the_calls_named(cf):
    cf.control.lie_next(2, Kind.SUCCESS_FALSE, match="mine")
    assert _create(cf, "other").json()["success"] is True
    assert [_create(cf, "mine").json()["success"] for _ in range(3)] == [False, False, True]
    assert _log_kinds(cf) == [None, "success_false", "success_false", None]
    assert [entry["fault"] for entry in cf.control.requests()] == [False, True, True, False]
    assert cf.control.fault()["fail_next"] == 0


def test_lies_are_exempt_from_the_contract_and_logged_as_injected(cf):
    for kind in (Kind.SUCCESS_FALSE, Kind.TRUNCATED, Kind.HTML, Kind.EMPTY_BODY, Kind.EMPTY_PAGE, Kind.WRONG_TYPES):
        cf.control.lie_next(1, kind)
        cf.api.get("/dns_records")
    log = (cf.lab_dir / "cloudflare.log").read_text()
    assert "lab bug" not in log
    for kind in ("success_false", "truncated", "html", "empty_body", "empty_page", "wrong_types"):
        assert f"(injected {kind}, exempt from the contract)" in log


def test_the_control_api_refuses_a_fault_it_cannot_make_and_fail_next_is_unchanged(cf):
    url = f"http://127.0.0.1:{cf.port}/__lab/faults"
    for body, reason in (({"kind": "lies"}, "kind must be one of"), ({"kind": "html", "status": 500}, "status"),
                         ({"kind": "wrong_types", "variant": "no_type"}, "variant"),
                         ({"kind": "truncated", "variant": "count"}, "no variants"),
                         ({"fail_next": "x"}, "whole numbers"), ({"status": 418}, "429, 500, 502 or 503")):
        refused = httpx.post(url, json=body)
        assert refused.status_code == 400 and reason in refused.json()["error"], body
    assert cf.control.fail_next(2, status=429, retry_after=3, match="m") == {
        "fail_next": 2, "status": 429, "retry_after": 3, "match": "m", "after": False, "kind": "error", "variant": ""}
    cf.control.fail_next(0)
    assert cf.control.fault()["fail_next"] == 0


@pytest.mark.parametrize("page, shown, total, lied", [(2, 1, 3, 2), (4, 0, 250, 249), (1, 0, 0, -1)])
def test_bad_pagination_total_is_one_less_than_the_records_returned_so_far(page, shown, total, lied):
    fault = faults.Fault(count=1, kind=Kind.BAD_PAGINATION, variant="total")
    info = {"page": page, "per_page": 2 if total == 3 else 100, "count": shown, "total_count": total,
            "total_pages": 0}
    lie = json.loads(faults.reply(fault, (200, records.ok([{"id": "r"}] * shown, info))).body)
    assert lie["result_info"] == {**info, "total_count": lied}
