"""The fake Cloudflare's zone rules, as pure functions: conflicts, filters, pagination."""

from __future__ import annotations

from graphsite_lab import records

ZONE = records.Zone("lab.graphsite.test", "0" * 32)


def _with(*bodies):
    zone = ZONE
    for body in bodies:
        outcome = records.create(zone, body)
        assert outcome.status == 200, outcome.envelope
        zone = records.Zone(zone.name, zone.zone_id, outcome.records)
    return zone


def _a(name, content="127.0.0.1", **extra):
    return {"name": name, "type": "A", "content": content, "ttl": 60, **extra}


def test_names_are_stored_inside_the_zone_in_lowercase():
    assert records.full_name("Foo", "lab.graphsite.test") == "foo.lab.graphsite.test"
    assert records.full_name("foo.lab.graphsite.test.", "lab.graphsite.test") == "foo.lab.graphsite.test"
    assert records.full_name("@", "lab.graphsite.test") == "lab.graphsite.test"


def test_a_beside_a_cname_is_refused_with_cloudflares_code_both_ways():
    zone = _with({"name": "c", "type": "CNAME", "content": "x.example.com", "ttl": 1}, _a("a"))
    refused = records.create(zone, _a("c"))
    assert refused.status == 400
    assert refused.envelope["errors"][0]["code"] == 81053
    assert refused.envelope["result"] is None and refused.records == zone.records
    other_way = records.create(zone, {"name": "a", "type": "CNAME", "content": "x.example.com", "ttl": 1})
    assert other_way.envelope["errors"][0]["code"] == 81053


def test_an_identical_record_is_refused_but_a_second_address_is_not():
    zone = _with(_a("a"))
    assert records.create(zone, _a("a")).envelope["errors"][0]["code"] == 81058
    assert records.create(zone, _a("a", "127.0.0.2")).status == 200


def test_update_checks_conflicts_against_the_other_records_only():
    zone = _with(_a("a"), _a("b"))
    first = zone.records[0]["id"]
    assert records.update(zone, first, {"content": "127.0.0.9"}, merge=True).status == 200
    clash = records.update(zone, first, _a("b"), merge=False)
    assert clash.envelope["errors"][0]["code"] == 81058
    assert records.update(zone, "f" * 32, _a("a"), merge=False).envelope["errors"][0]["code"] == 81044


def test_list_filters_by_exact_name_and_type_and_pages_past_the_end_are_empty():
    zone = _with(*[_a(f"n{i}") for i in range(5)], {"name": "n1", "type": "TXT", "content": "t", "ttl": 1})
    exact = records.listing(zone, {"name.exact": "N1.lab.graphsite.test", "type": "A"})
    assert [r["name"] for r in exact.envelope["result"]] == ["n1.lab.graphsite.test"]
    page2 = records.listing(zone, {"per_page": "2", "page": "2"}).envelope
    assert len(page2["result"]) == 2
    assert page2["result_info"] == {"page": 2, "per_page": 2, "count": 2, "total_count": 6, "total_pages": 3}
    assert records.listing(zone, {"per_page": "2", "page": "4"}).envelope["result"] == []


def test_pages_of_250_records_add_up_to_the_zone_and_a_page_past_the_end_keeps_the_totals():
    zone = _with(*[_a(f"r{i}") for i in range(250)])
    pages = [records.listing(zone, {"per_page": "100", "page": str(page)}).envelope for page in (1, 2, 3, 4)]
    assert [page["result_info"] for page in pages] == [
        {"page": page, "per_page": 100, "count": count, "total_count": 250, "total_pages": 3}
        for page, count in ((1, 100), (2, 100), (3, 50), (4, 0))]
    seen = [record["id"] for page in pages for record in page["result"]]
    assert seen == [record["id"] for record in zone.records]


def test_nothing_matching_is_zero_pages_and_a_fractional_page_is_refused_not_rounded():
    empty = records.listing(ZONE, {}).envelope
    assert empty["result"] == []
    assert empty["result_info"] == {"page": 1, "per_page": 100, "count": 0, "total_count": 0, "total_pages": 0}
    for query, named in (({"page": "1.5"}, "page=1.5"), ({"per_page": "2.5"}, "per_page=2.5"),
                         ({"page": "1e400"}, "page=1e400"), ({"per_page": "0"}, "per_page=0")):
        refused = records.listing(_with(_a("a")), query)
        assert refused.status == 400 and named in refused.envelope["errors"][0]["message"], query


def test_the_zone_list_honours_page_and_per_page():
    first = records.zones(ZONE, {"per_page": "5"}).envelope
    assert [z["id"] for z in first["result"]] == [ZONE.zone_id]
    assert first["result_info"] == {"page": 1, "per_page": 5, "count": 1, "total_count": 1, "total_pages": 1}
    second = records.zones(ZONE, {"page": "2"}).envelope
    assert second["result"] == [] and second["result_info"]["total_count"] == 1
    assert records.zones(ZONE, {"name": "other.test"}).envelope["result_info"]["total_pages"] == 0


def test_comment_filters_and_an_unimplemented_filter_is_said_not_ignored():
    zone = _with(_a("a", comment="made by graphsite"), _a("b"))
    found = records.listing(zone, {"comment.startswith": "made by"}).envelope["result"]
    assert [r["name"] for r in found] == ["a.lab.graphsite.test"]
    refused = records.listing(zone, {"tag.exact": "x"})
    assert refused.status == 400 and "tag.exact" in refused.envelope["errors"][0]["message"]


def test_delete_returns_the_id_and_forgets_the_record():
    zone = _with(_a("a"))
    ident = zone.records[0]["id"]
    deleted = records.delete(zone, ident)
    assert deleted.envelope["result"] == {"id": ident} and deleted.records == ()
    assert records.get(records.Zone(ZONE.name, ZONE.zone_id, ()), ident).status == 404
