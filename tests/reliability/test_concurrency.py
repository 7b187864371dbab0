"""Runs at the same time, as real processes: gc racing a renewing redeploy, 8 deploys then 8 teardowns in
parallel, two deploys of one name, a deploy and a teardown of one name, two gc at once. No deployment is lost
after a reported success, no record is duplicated, nothing is left."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest

pytestmark = pytest.mark.lab


def _deploy(name: str, *extra: str) -> tuple[str, ...]:
    return ("deploy", "--subdomain", name, "--no-verify", "--wait", "60", *extra)


def _expired_by() -> tuple[str, str]:
    """Return gc's `--now` two seconds ahead: a --ttl 1s deployment made before this has expired by then, and gc
    judges it so without the test waiting out the second (stamps are whole seconds)."""
    return "--now", (datetime.now(UTC) + timedelta(seconds=2)).isoformat()


def _finish(process, timeout: float = 120) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def _assert_deployed(driver, name: str, *, expires_after: timedelta | None = None) -> None:
    entry, listed, held, run = driver.compare(name)
    assert entry is not None and entry["state"] == "deployed", f"{name} is not deployed\n{run}"
    assert listed == held, f"list shows {listed}, the systems hold {held}"
    assert len(driver.records(name)) == 1, driver.records(name)
    if expires_after is not None:
        expires = datetime.fromisoformat(entry["expires"].replace("Z", "+00:00"))
        assert expires > datetime.now(UTC) + expires_after, entry
    assert driver.page_served(name, within=10)


# The three interleavings of the race: gc first, the redeploy first, both at once (seconds before the second).
@pytest.mark.parametrize("first, delay", [("gc", 0.3), ("deploy", 0.4), ("gc", 0.0)])
def test_gc_racing_a_renewing_redeploy_never_removes_the_renewed_deployment(driver, names, first, delay):
    name = names("r")
    made = driver.run(*_deploy(name, "--ttl", "1s"))
    assert made.code == 0, made
    gc_args = ("gc", "--prefix", name, "--wait", "60", "--json", *_expired_by())  # gc's survey picks it
    redeploy_args = _deploy(name, "--ttl", "7d")
    starts = [gc_args, redeploy_args] if first == "gc" else [redeploy_args, gc_args]
    processes = [driver.start(*starts[0])]
    time.sleep(delay)
    processes.append(driver.start(*starts[1]))
    results = dict(zip(("gc", "deploy") if first == "gc" else ("deploy", "gc"), map(_finish, processes),
                       strict=True))
    code, _, err = results["deploy"]
    assert code == 0, err
    assert results["gc"][0] == 0, results["gc"]
    assert "Traceback" not in results["gc"][2] + err
    _assert_deployed(driver, name, expires_after=timedelta(days=6))


def test_eight_parallel_deploys_then_eight_parallel_teardowns_leave_nothing(driver, names):
    batch = [names("p") for _ in range(8)]
    deploys = [driver.start(*_deploy(name, "--ttl", "1h", "--content", "bind" if i % 2 else "config"))
               for i, name in enumerate(batch)]
    results = [_finish(p) for p in deploys]
    assert [code for code, _, _ in results] == [0] * 8, [err for code, _, err in results if code]
    listed, run = driver.listing()
    for name in batch:
        assert listed[name]["state"] == "deployed", run
        assert driver.listed_resources(listed[name]) == driver.held(name), run
        assert len(driver.records(name)) == 1 and driver.page_served(name, within=10)
    teardowns = [driver.start("teardown", name) for name in batch]
    results = [_finish(p) for p in teardowns]
    assert [code for code, _, _ in results] == [0] * 8, [err for code, _, err in results if code]
    listed, run = driver.listing()
    for name in batch:
        assert name not in listed and driver.leftovers(name, listing=False) == [], run


def test_two_deploys_of_one_name_one_waits_or_is_refused_and_one_record_exists(driver, names):
    name = names()
    both = [driver.start("deploy", "--subdomain", name, "--no-verify") for _ in range(2)]
    results = sorted(_finish(p) for p in both)
    assert [code for code, _, _ in results] == [0, 1], results
    assert "is being deployed or torn down by pid" in results[1][2] and "--wait" in results[1][2], results[1][2]
    assert "Traceback" not in results[1][2]
    _assert_deployed(driver, name)
    waiting = [driver.start(*_deploy(name, "--ttl", "2h")) for _ in range(2)]  # both wait: both succeed
    assert [_finish(p)[0] for p in waiting] == [0, 0]
    _assert_deployed(driver, name, expires_after=timedelta(hours=1))


def test_a_deploy_and_a_teardown_of_one_name_end_fully_deployed_or_fully_absent(driver, names):
    for delay in (0.0, 0.6):
        name = names()
        deploy = driver.start(*_deploy(name))
        time.sleep(delay)
        teardown = driver.start("teardown", name, "--wait", "60")
        (deployed, _, deploy_err), (torn, _, teardown_err) = _finish(deploy), _finish(teardown)
        assert deployed == 0 and torn == 0, deploy_err + teardown_err
        if driver.held(name):  # the teardown ran first: the deploy that followed must be whole
            _assert_deployed(driver, name)
        else:
            assert driver.leftovers(name) == []


def test_two_gc_at_once_tear_each_expired_name_down_once_and_report_no_false_removal(driver, names):
    batch = [names("g") for _ in range(3)]
    made = [driver.start(*_deploy(name, "--ttl", "1s")) for name in batch]
    assert [_finish(p)[0] for p in made] == [0, 0, 0]
    prefix, now = f"{driver.prefix}-g", _expired_by()
    gcs = [driver.start("gc", "--prefix", prefix, "--wait", "60", "--json", *now) for _ in range(2)]
    results = [_finish(p) for p in gcs]
    assert [code for code, _, _ in results] == [0, 0], results
    collected = [c for _, out, _ in results for c in json.loads(out)["collected"]]
    tore = [c["subdomain"] for c in collected if c["outcome"] == "tore down"]
    assert sorted(tore) == sorted(batch), results  # each name once: the other gc found nothing left to remove
    listed, run = driver.listing()
    for name in batch:
        assert name not in listed and driver.leftovers(name, listing=False) == [], run
