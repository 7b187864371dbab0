"""Cloudflare going wrong, for real: the lab's fake Cloudflare stopped (SIGSTOP) during a deploy and during a
teardown, answering 5xx after it carried out a create, and throttling (429 storms). No record is left that
graphsite made and did not account for, the page goes offline when teardown is asked, and a later teardown
finishes the job."""

from __future__ import annotations

import contextlib
import time

import pytest

from graphsite_lab.drive import cloudflare_pid, stopped

pytestmark = pytest.mark.lab

FAST = {"GRAPHSITE_DNS_TIMEOUT": "1", "GRAPHSITE_DNS_RETRIES": "1", "GRAPHSITE_DNS_TEARDOWN_DEADLINE": "3"}


def _deploy(name: str) -> tuple[str, ...]:
    return ("deploy", "--subdomain", name, "--no-verify", "--ttl", "1h")


def _create_of(name: str) -> str:
    """Text only the record's create holds (its comment, in the request body): a fault matched on it spares the
    plan's lookups and the undo's."""
    return f"graphsite:2 {name}."


def _teardown_later_is_clean(driver, name: str) -> None:
    entry, listed, held, run = driver.compare(name)
    assert listed == held, f"list shows {listed}, the systems hold {held}\n{run}"
    again = driver.run("teardown", name)
    assert again.code == 0 and "nothing is left and the page is no longer served" in again.stderr, again
    assert driver.leftovers(name) == []


def test_cloudflare_stalled_during_the_dns_step_deploy_fails_in_one_line_and_undoes(driver, names, lab):
    name = names()
    with contextlib.ExitStack() as stack:
        run = driver.script([("  converge … done", lambda _: stack.enter_context(stopped(cloudflare_pid(lab))))],
                            *_deploy(name), env=FAST)
    assert run.code == 1, run
    # the DNS step's first call is its look at the name's records, right before the create: it meets the stall
    assert f"Error: Cloudflare: list records named {driver.fqdn(name)}" in run.stderr, run
    assert "no answer from" in run.stderr, run
    assert f"undone: removed service {name}" in run.stderr and "undone: removed route" in run.stderr, run
    assert not run.traceback, run
    assert not driver.page_served(name)
    # Cloudflare comes back and carries out what it had queued: a record graphsite asked for may appear now.
    # It carries graphsite's stamp, so list shows it and teardown removes it.
    driver.cloudflare_quiet()
    assert {kind for kind, _ in driver.held(name)} <= {"record"}
    _teardown_later_is_clean(driver, name)


def test_cloudflare_stalled_during_teardown_the_page_still_goes_offline_in_bounded_time(driver, names, lab):
    name = names()
    made = driver.run(*_deploy(name))
    assert made.code == 0, made
    assert driver.page_served(name, within=10)
    # The stop starts at teardown's first step (it used to start with the process: on a busy machine the DNS
    # step could begin after the stop's end); three Docker steps still come before teardown's first Cloudflare
    # call. The fake Cloudflare is the lab's own: a long stop is safe.
    fake = cloudflare_pid(lab)
    with contextlib.ExitStack() as stack:
        run = driver.script([("  route … done", lambda _: stack.enter_context(stopped(fake, at_most=60)))],
                            "teardown", name, env={**FAST, "GRAPHSITE_DNS_RETRIES": "4"})
        assert run.signalled, run
        assert not driver.page_served(name)
    assert run.code == 1, run
    assert f"teardown of {name} is not finished" in run.stderr, run
    assert f"run `graphsite teardown {name}` again" in run.stderr, run
    assert not run.traceback, run
    assert f"removed   service {name}" in run.stdout and "removed   route" in run.stdout, run
    assert run.seconds < 25, f"teardown took {run.seconds:.1f} s with Cloudflare stopped"
    assert {kind for kind, _ in driver.held(name)} == {"record"}
    _teardown_later_is_clean(driver, name)


def test_cloudflare_answering_500_after_carrying_out_the_create_leaves_one_record(driver, names):
    name = names()
    driver.cloudflare.fail_next(1, status=500, match=_create_of(name), after=True)
    run = driver.run(*_deploy(name))
    assert run.code == 0, run
    assert [r["type"] for r in driver.records(name)] == ["A"], driver.records(name)
    assert [r["status"] for r in driver.cloudflare.requests() if r["fault"] and name in str(r)] == [500]
    entry, listed, held, listing = driver.compare(name)
    assert entry is not None and entry["state"] == "deployed" and listed == held, listing


def test_cloudflare_500s_after_the_create_until_deploy_gives_up_leave_no_orphan_record(driver, names):
    name = names()
    driver.cloudflare.fail_next(2, status=502, match=_create_of(name), after=True)
    run = driver.run(*_deploy(name), env={"GRAPHSITE_DNS_RETRIES": "1"})
    assert run.code == 1 and "HTTP 502" in run.stderr, run
    assert [r["status"] for r in driver.cloudflare.requests() if r["fault"] and name in str(r)] == [502, 502]
    assert f"undone: deleted record A {driver.fqdn(name)}" in run.stderr, run  # made by the lost create
    assert f"proof: nothing of {name} is left" in run.stderr, run
    assert not run.traceback, run
    assert driver.leftovers(name) == []


def test_a_429_storm_during_deploy_is_waited_out_and_one_record_is_made(driver, names):
    name = names()
    driver.cloudflare.fail_next(3, status=429, retry_after=1, match=_create_of(name))
    run = driver.run(*_deploy(name))
    assert run.code == 0, run
    assert len(driver.records(name)) == 1
    assert [r["status"] for r in driver.cloudflare.requests() if r["fault"] and name in str(r)] == [429] * 3


def test_a_429_storm_during_teardown_takes_the_page_offline_and_a_later_teardown_is_clean(driver, names):
    name = names()
    made = driver.run(*_deploy(name))
    assert made.code == 0, made
    driver.cloudflare.fail_next(100, status=429, retry_after=1, match=name)
    started = time.monotonic()
    run = driver.run("teardown", name, env={"GRAPHSITE_DNS_TEARDOWN_DEADLINE": "3"})
    seconds = time.monotonic() - started
    assert run.code == 1 and f"run `graphsite teardown {name}` again" in run.stderr, run
    assert not run.traceback, run
    assert not driver.page_served(name)
    assert seconds < 25, f"teardown took {seconds:.1f} s in a 429 storm"
    driver.cloudflare.fail_next(0)
    _teardown_later_is_clean(driver, name)
