"""The fake Cloudflare as a real server: the official SDK against it, the OpenAPI contract, state across a
restart, injected faults. The module runs its own server (a temporary directory, a free port), reset through
its control API before each test; the restart test has a server of its own. No lab is needed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cloudflare
import httpx
import pytest

from graphsite_lab import records


def _sdk(server, max_retries: int = 0) -> cloudflare.Cloudflare:
    return cloudflare.Cloudflare(api_token=server.token, base_url=server.base_url, max_retries=max_retries)


def _records_url(server) -> str:
    return f"{server.base_url}/zones/{server.zone_id}/dns_records"


def _post(server, body) -> httpx.Response:
    return httpx.post(_records_url(server), json=body, headers={"Authorization": f"Bearer {server.token}"})


def test_the_sdk_creates_lists_edits_and_deletes_records(module_cf):
    client = _sdk(module_cf)
    assert [zone.id for zone in client.zones.list(name=module_cf.zone)] == [module_cf.zone_id]
    made = client.dns.records.create(zone_id=module_cf.zone_id, name="one.lab.graphsite.test", type="A",
                                     content="127.0.0.1", ttl=60, proxied=False, comment="made by graphsite")
    for index in range(4):
        client.dns.records.create(zone_id=module_cf.zone_id, name=f"p{index}", type="A", content="127.0.0.1", ttl=1)
    # The SDK follows pages until it sees an empty one: 5 records in pages of 2.
    assert len(list(client.dns.records.list(zone_id=module_cf.zone_id, per_page=2))) == 5
    found = client.dns.records.list(zone_id=module_cf.zone_id, name={"exact": "one.lab.graphsite.test"}, type="A")
    assert [record.id for record in found] == [made.id]
    edited = client.dns.records.edit(made.id, zone_id=module_cf.zone_id, name="one.lab.graphsite.test", type="A",
                                     content="127.0.0.2", ttl=60)
    assert edited.content == "127.0.0.2" and edited.comment == "made by graphsite"
    replaced = client.dns.records.update(made.id, zone_id=module_cf.zone_id, name="one.lab.graphsite.test",
                                         type="A", content="127.0.0.3", ttl=120)
    assert (replaced.content, replaced.ttl, replaced.comment) == ("127.0.0.3", 120, None)
    assert client.dns.records.delete(made.id, zone_id=module_cf.zone_id).id == made.id
    with pytest.raises(cloudflare.NotFoundError) as missing:
        client.dns.records.get(made.id, zone_id=module_cf.zone_id)
    assert missing.value.body["errors"][0]["code"] == 81044


def test_a_cname_beside_an_a_record_is_refused_with_81053(module_cf):
    client = _sdk(module_cf)
    client.dns.records.create(zone_id=module_cf.zone_id, name="both", type="A", content="127.0.0.1", ttl=60)
    with pytest.raises(cloudflare.BadRequestError) as refused:
        client.dns.records.create(zone_id=module_cf.zone_id, name="both", type="CNAME", content="x.example.com", ttl=1)
    assert refused.value.body["errors"][0]["code"] == 81053


@pytest.mark.parametrize("body, reason", [
    ({"name": "x", "content": "127.0.0.1", "ttl": 60}, "type"),
    ({"name": "x", "type": "A", "content": "127.0.0.1", "ttl": "x"}, "ttl"),
    ({"name": "x", "type": "A", "content": "not-an-address", "ttl": 60}, "ipv4"),
])
def test_a_request_that_breaks_the_contract_gets_400_and_a_log_line(module_cf, body, reason):
    answer = _post(module_cf, body)
    assert answer.status_code == 400
    envelope = answer.json()
    assert envelope["success"] is False and envelope["result"] is None
    assert "contract" in envelope["errors"][0]["message"] and reason in envelope["errors"][0]["message"]
    assert module_cf.control.records() == []
    assert any(line.split()[1] == "contract:" for line in module_cf.log().splitlines())


def test_a_bad_query_parameter_and_a_missing_token_break_the_contract(module_cf):
    assert httpx.get(_records_url(module_cf), params={"page": "x"},
                     headers={"Authorization": f"Bearer {module_cf.token}"}).status_code == 400
    assert httpx.get(_records_url(module_cf)).status_code == 400
    wrong = httpx.get(_records_url(module_cf), headers={"Authorization": "Bearer wrong"})
    assert wrong.status_code == 403 and wrong.json()["errors"][0]["code"] == 10000


def test_records_survive_a_restart(fake_cf):
    made = _sdk(fake_cf).dns.records.create(zone_id=fake_cf.zone_id, name="kept", type="A",
                                            content="127.0.0.1", ttl=60)
    fake_cf.stop()
    state = json.loads((fake_cf.lab_dir / "cloudflare-state.json").read_text())
    assert [record["id"] for record in state["records"]] == [made.id]
    fake_cf.start()
    assert _sdk(fake_cf).dns.records.get(made.id, zone_id=fake_cf.zone_id).name == "kept.lab.graphsite.test"


def test_injected_429_carries_retry_after_and_500_follows_then_calls_succeed(module_cf):
    module_cf.control.fail_next(1, status=429, retry_after=2)
    limited = httpx.get(_records_url(module_cf), headers={"Authorization": f"Bearer {module_cf.token}"})
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    assert limited.json()["success"] is False
    module_cf.control.fail_next(1, status=500)
    with pytest.raises(cloudflare.InternalServerError):
        _sdk(module_cf).dns.records.list(zone_id=module_cf.zone_id)
    assert list(_sdk(module_cf).dns.records.list(zone_id=module_cf.zone_id)) == []
    log = module_cf.control.requests()
    assert [(entry["status"], entry["fault"]) for entry in log] == [(429, True), (500, True), (200, False)]


def test_a_fault_with_a_match_spares_every_other_call(module_cf):
    module_cf.control.fail_next(1, status=500, match="mine.lab.graphsite.test")
    assert _post(module_cf, {"name": "other", "type": "A", "content": "127.0.0.1", "ttl": 60}).status_code == 200
    mine = _post(module_cf, {"name": "mine.lab.graphsite.test", "type": "A", "content": "127.0.0.1", "ttl": 60})
    assert mine.status_code == 500
    again = _post(module_cf, {"name": "mine.lab.graphsite.test", "type": "A", "content": "127.0.0.1", "ttl": 60})
    assert again.status_code == 200  # one fault, taken by the first matching call
    log = module_cf.control.requests()
    assert [(entry["status"], entry["fault"]) for entry in log] == [(200, False), (500, True), (200, False)]


def test_the_sdk_retries_an_injected_429_and_succeeds(module_cf):
    module_cf.control.fail_next(2, status=429, retry_after=0)
    client = _sdk(module_cf, max_retries=3)
    assert list(client.dns.records.list(zone_id=module_cf.zone_id)) == []
    assert [entry["status"] for entry in module_cf.control.requests()] == [429, 429, 200]


def test_injected_latency_delays_each_call_until_switched_off(module_cf):
    assert module_cf.control.latency(300) == {"ms": 300}
    _post(module_cf, {"name": "slow", "type": "A", "content": "127.0.0.1", "ttl": 60})
    assert module_cf.control.latency(0) == {"ms": 0}
    (slow,) = module_cf.control.requests()
    assert slow["ms"] >= 300  # the server's own account: the delay it added is a lower bound, not a speed


def test_the_request_log_never_holds_the_token(module_cf):
    _post(module_cf, {"name": "leak", "type": "TXT", "content": module_cf.token, "ttl": 60})
    text = json.dumps(module_cf.control.requests())
    assert module_cf.token not in text and "[REDACTED-TOKEN]" in text
    assert module_cf.token not in (module_cf.lab_dir / "cloudflare.log").read_text()


def test_reset_forgets_records_and_the_log(module_cf):
    assert _post(module_cf, {"name": "gone", "type": "A", "content": "127.0.0.1", "ttl": 60}).status_code == 200
    assert module_cf.control.records() and module_cf.control.requests()  # something to forget
    module_cf.control.reset()
    assert module_cf.control.records() == [] and module_cf.control.requests() == []


def _seed(server, count: int) -> list[str]:
    """Return the ids of `count` A records written into the state of a server not started yet (250 POSTs take
    20 s: the server writes its state to disk after each)."""
    zone = records.Zone(server.zone, server.zone_id)
    for index in range(count):
        zone = records.Zone(zone.name, zone.zone_id, records.create(zone, {
            "name": f"r{index}", "type": "A", "content": "127.0.0.1", "ttl": 60}).records)
    (server.lab_dir / "cloudflare-state.json").write_text(json.dumps({"records": list(zone.records)}))
    server.start()
    return [record["id"] for record in zone.records]


def test_250_records_come_back_in_3_pages_of_100_whose_totals_add_up(unstarted_cf):
    made = _seed(unstarted_cf, 250)
    with httpx.Client(headers={"Authorization": f"Bearer {unstarted_cf.token}"}) as client:
        pages = [client.get(_records_url(unstarted_cf), params={"per_page": 100, "page": page}).json()
                 for page in (1, 2, 3, 4)]
        fraction = client.get(_records_url(unstarted_cf), params={"per_page": "2.5"})
    assert [(page["result_info"]["page"], page["result_info"]["count"], len(page["result"])) for page in pages] == [
        (1, 100, 100), (2, 100, 100), (3, 50, 50), (4, 0, 0)]
    assert {(p["result_info"]["per_page"], p["result_info"]["total_count"], p["result_info"]["total_pages"])
            for p in pages} == {(100, 250, 3)}
    assert [record["id"] for page in pages for record in page["result"]] == made
    assert fraction.status_code == 400 and "per_page=2.5" in fraction.json()["errors"][0]["message"]


def _start(tmp_path: Path, requests_kept: int = 3, port: int = 0):
    """Return a fake Cloudflare serving in this process (its own directory), its log keeping `requests_kept`
    calls; its base URL is `_base(server)`."""
    from graphsite_lab import cfserver
    from tests.lab.conftest import ZONE, ZONE_ID

    (tmp_path / "cf-token").write_text("t0ken\n")
    server = cfserver.serve(tmp_path, port, ZONE, ZONE_ID, requests_kept=requests_kept)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _stop(server) -> None:
    server.shutdown()
    server.server_close()


def _base(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@contextmanager
def _in_process(tmp_path: Path, requests_kept: int) -> Iterator[str]:
    """Yield the base URL of a fake Cloudflare `_start`ed for the block."""
    server = _start(tmp_path, requests_kept)
    try:
        yield _base(server)
    finally:
        _stop(server)


def _list_call(base: str) -> None:
    from tests.lab.conftest import ZONE, ZONE_ID

    answer = httpx.get(f"{base}/client/v4/zones/{ZONE_ID}/dns_records", params={"name.exact": f"a.{ZONE}"},
                       headers={"Authorization": "Bearer t0ken"})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("kept", [0, 1, 3, 5, 9])
def test_the_request_log_keeps_the_last_calls_it_is_told_to_and_counts_them_all(tmp_path, kept):
    """Before, a log told to keep 0 kept every call (`del requests[:-0]` deletes nothing)."""
    from graphsite_lab.client import LabCloudflare

    with _in_process(tmp_path, kept) as base:
        for _ in range(5):
            _list_call(base)
        control = LabCloudflare(base)
        assert [entry["seq"] for entry in control.requests()] == list(range(1, 6))[5 - min(kept, 5):]
        assert control.answered() == 5


def test_the_benchmark_counts_every_call_past_what_the_request_log_keeps(tmp_path):
    """Before, benchmarks/api_calls.py counted the fake's calls by the length of its request log, which keeps the
    last 2,000: on a lab the tests had used, every step made "Cloudflare 0". It now reads the fake's count of the
    calls it answered. The fake here runs in this process, its log keeping 3."""
    from benchmarks.api_calls import _Counting
    from graphsite_lab.client import LabCloudflare

    with _in_process(tmp_path, 3) as base:
        control, counting = LabCloudflare(base), _Counting(LabCloudflare(base))
        for _ in range(4):  # the log is full
            _list_call(base)
        before = counting.dns_count()
        for _ in range(5):
            _list_call(base)
        assert (counting.dns_since(before), len(control.requests())) == (5, 3)
        assert counting.line("deploy", before).endswith("Cloudflare  5 (+0 in verify)")


@pytest.mark.parametrize("in_verify", [False, True])
@pytest.mark.parametrize("after_restart", [1, 5])
def test_the_benchmark_says_unknown_when_the_fake_restarted_during_a_step(tmp_path, after_restart, in_verify):
    """The fake's count begins again when it restarts: a step's difference was negative (1 call after a restart,
    3 before) or too small (5 after): now the step says unknown, and so does its verify when it was there."""
    from benchmarks.api_calls import _Counting
    from graphsite_lab.client import LabCloudflare

    server = _start(tmp_path)
    try:
        base, port = _base(server), server.server_address[1]
        counting = _Counting(LabCloudflare(base))
        for _ in range(3):
            _list_call(base)
        before = counting.dns_count()
        with counting.step("verify" if in_verify else "plan"):
            _stop(server)
            server = _start(tmp_path, port=port)  # the same address, started again
            for _ in range(after_restart):
                _list_call(base)
        assert counting.dns_since(before) is None and (counting.dns_polled is None) == in_verify
        assert counting.line("deploy", before).endswith(
            "Cloudflare unknown (the fake Cloudflare restarted during the step: its count began again)")
    finally:
        _stop(server)
