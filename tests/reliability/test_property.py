"""A property test on the lab: hypothesis draws a short sequence of operations (deploy, redeploy in either
content mode, teardown, gc, a deploy SIGKILLed right after a random step) on two or three names, runs each as
the real CLI, and checks after each one that what `graphsite list` reports is exactly what the systems hold,
and at the end that every name is either fully deployed and passes `graphsite verify`, or fully absent after
`graphsite teardown`.

Bounded: a few examples of at most three operations, no per-example deadline (each operation is a real deploy),
and a total time budget after which the remaining examples do nothing.
"""

from __future__ import annotations

import secrets
import signal
import time
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from graphsite_lab.drive import STEPS, Driver

pytestmark = pytest.mark.lab

BUDGET = 30.0  # seconds for all examples together (the last one started may end after it)
_started: list[float] = []

NAME = st.integers(min_value=0, max_value=2)
OPERATION = st.one_of(
    st.tuples(st.just("deploy"), NAME, st.sampled_from(["config", "bind"]), st.sampled_from(["1s", "1h"])),
    st.tuples(st.just("kill"), NAME, st.sampled_from(["config", "bind"]), st.sampled_from(STEPS)),
    st.tuples(st.just("teardown"), NAME),
    st.tuples(st.just("gc")),
)
COMPLETE = {"config": {"config", "service", "route", "record"},
            "bind": {"config", "directory", "service", "route", "record"}}


def _check_list_equals_systems(driver: Driver, names: list[str]) -> dict[str, dict]:
    """Assert that list shows what the systems hold, name by name (read as Driver.compare_many reads them: an
    effect still landing after a kill is not taken for list's mistake); return list's entries."""
    listed, held, run = driver.compare_many(names)
    for name in names:
        assert driver.listed_resources(listed.get(name)) == held[name], f"{name}: list != systems {held[name]}\n{run}"
    return listed


def _complete(driver: Driver, name: str, entry: dict | None) -> bool:
    kinds = {kind for kind, _ in driver.held(name)}
    mode = "bind" if "directory" in kinds else "config"
    return entry is not None and COMPLETE[mode] <= kinds and not any(kind.startswith("temporary") for kind in kinds)


def _apply(driver: Driver, names: list[str], group: str, operation: tuple) -> None:
    kind = operation[0]
    if kind == "deploy":
        _, index, mode, ttl = operation
        run = driver.run("deploy", "--subdomain", names[index], "--content", mode, "--ttl", ttl, "--no-verify")
        assert run.code == 0, run
        listed = _check_list_equals_systems(driver, names)
        assert _complete(driver, names[index], listed.get(names[index])), listed
        assert len(driver.records(names[index])) == 1
    elif kind == "kill":
        _, index, mode, step = operation
        run = driver.signal_after(step, signal.SIGKILL, "deploy", "--subdomain", names[index], "--content", mode,
                                  "--ttl", "1h", "--no-verify")
        assert run.signalled == step, run
        _check_list_equals_systems(driver, names)
    elif kind == "teardown":
        run = driver.run("teardown", names[operation[1]])
        assert run.code == 0, run
        assert driver.leftovers(names[operation[1]]) == []
    else:  # gc of this example's names; partial ones count as abandoned at once
        # gc's clock two seconds ahead: a deployment made with --ttl 1s has expired by then (no sleep)
        now = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
        run = driver.run("gc", "--prefix", group, "--json", "--now", now, env={"GRAPHSITE_DEPLOY_GC_GRACE": "0"})
        assert run.code == 0, run
        listed = _check_list_equals_systems(driver, names)
        for name in names:  # what is left after gc is whole and not expired
            assert not driver.held(name) or (_complete(driver, name, listed.get(name))
                                             and listed[name]["state"] == "deployed"), listed.get(name)


@settings(max_examples=4, deadline=None, phases=[Phase.generate], print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(operations=st.lists(OPERATION, min_size=1, max_size=3))
def test_any_sequence_of_operations_keeps_list_equal_to_the_systems_and_ends_whole_or_absent(driver, operations):
    _started.append(_started[0] if _started else time.monotonic())
    if time.monotonic() - _started[0] > BUDGET:
        return  # the time budget is spent: the remaining examples do nothing
    group = f"{driver.prefix}-h{secrets.token_hex(2)}"
    names = [f"{group}{i}" for i in range(3)]
    try:
        for operation in operations:
            _apply(driver, names, group, operation)
        listed = _check_list_equals_systems(driver, names)
        for name in names:
            if driver.held(name) and _complete(driver, name, listed.get(name)):
                verified = driver.run("verify", name)
                assert verified.code == 0, verified
    finally:
        for name in names:
            if driver.held(name) or driver.lock_left(name):  # a lock file alone: a run killed right after `name`
                gone = driver.run("teardown", name, "--wait", "60")
                assert gone.code == 0, gone
            assert driver.leftovers(name) == []
