"""Shared fixtures. `lab`: the running lab (scripts/lab up). Without it, lab tests fail when
GRAPHSITE_LAB_REQUIRED=1 (CI) and are skipped otherwise, with a message that says `make lab`. `browser`: Debian's
headless Chromium through Playwright (never a downloaded browser), one per test module."""

from __future__ import annotations

import collections
import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphsite.builder.pdf import DEFAULT_CHROMIUM
from tests.schedule import CLUSTER_TEST, LabTurns, in_lab, misplaced, next_unit, run_order, unit_of

BESIDE_THE_LAB = 10  # the niceness of a worker's tests that are not the lab's (under xdist)


def pytest_configure(config):
    """Point XDG_CACHE_HOME (graphsite's caches: fonts, front matter, links) at a directory of this process's (one a
    run, one an xdist worker, each configured in its own process) before any fixture runs, session-scoped ones
    included: what the tests build and start never reads the developer's cache nor writes into their home. One
    directory a run, not one a test: a cold font subset is a quarter of a second a face; a test that needs an empty
    cache sets its own."""
    config.user_cache_home = os.environ.get("XDG_CACHE_HOME")
    config.test_cache_home = tempfile.mkdtemp(prefix="graphsite-test-cache-")
    os.environ["XDG_CACHE_HOME"] = config.test_cache_home
    config.lab_unit_starts = []  # run before this process's first test of the cluster test's unit (tests/lab/)
    from graphsite_lab.instance import LabInstance

    config.lab_turns = LabTurns(LabInstance.from_env().root)


def pytest_unconfigure(config):
    if not hasattr(config, "test_cache_home"):
        return
    if config.user_cache_home is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = config.user_cache_home
    shutil.rmtree(config.test_cache_home, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Around each test (its fixtures' setup and teardown included): its priority, the background starts of its
    unit, then its turn on the lab (tests/schedule.py)."""
    lab_test = in_lab(item.nodeid)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # The lab's tests are the run's critical path and mostly wait on daemons: the other workers (and what they
        # start: browsers, builds, servers) yield the CPU to them, and take whatever the lab leaves idle. Set
        # before the starts below, which the processes they start inherit.
        with contextlib.suppress(PermissionError):  # lowering it again needs root, as the lab does
            os.setpriority(os.PRIO_PROCESS, 0, 0 if lab_test else BESIDE_THE_LAB)
    starts = item.config.lab_unit_starts
    if starts and lab_test and unit_of(item.nodeid) == unit_of(CLUSTER_TEST):
        while starts:  # before the turn: a start overlaps the tests it waits behind
            starts.pop()()
    turns = item.config.lab_turns
    turns.before(item, nextitem)
    try:
        return (yield)
    finally:
        turns.after(item, nextitem)


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session):
    session.config.lab_turns.finishing()  # a no-op when the last test kept its turn, or none was needed
    try:
        return (yield)
    finally:
        session.config.lab_turns.release()


def pytest_collection_modifyitems(config, items):
    """A test that uses the running lab (directly or through another fixture) is marked `lab`, so that
    `-m "not lab"` runs exactly the tests that need no lab. The lab's units come first (tests/schedule.py); a lab
    test out of its place stops the run."""
    for item in items:
        if "lab" in getattr(item, "fixturenames", ()) and item.get_closest_marker("lab") is None:
            item.add_marker(pytest.mark.lab)
    items.sort(key=run_order)
    if wrong := misplaced(items):
        raise pytest.UsageError(f"{len(wrong)} lab test(s) out of place (tests/schedule.py says where each goes):\n"
                                + "\n".join(wrong[:10]))


@pytest.hookimpl(optionalhook=True)  # xdist's hook: a pytest without xdist runs the tests one after another
def pytest_xdist_make_scheduler(config, log):
    """Under xdist: the lab's tests in three units, every other module a unit of its own, each handed out when
    next_unit says (tests/schedule.py). (xdist's own `xdist_group` marks do not group on
    pytest 9, which no longer reads the node id they rewrite.)"""
    from xdist.scheduler import LoadScopeScheduling

    class LabApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node) -> None:  # xdist's own takes the queue's head; ours is next_unit's
            alone = [done for work in self.assigned_work.values() for done in work.get("lab-alone", {}).values()]
            queued = list(self.workqueue)
            alone_left = len(self.workqueue.get("lab-alone", {})) + alone.count(False) \
                if "lab-alone" in queued or alone else None
            self.workqueue.move_to_end(next_unit(queued, alone_left), last=False)
            super()._assign_work_unit(node)

    config.option.loadscopereorder = False  # xdist would put the units with the most tests first
    return LabApart(config, log)


@pytest.fixture(autouse=True)
def _no_user_cache(request, monkeypatch):
    """Put XDG_CACHE_HOME back to the run's cache (`pytest_configure`) for every test, whatever one before did."""
    monkeypatch.setenv("XDG_CACHE_HOME", request.config.test_cache_home)


def aged_cache(directory: Path, suffix: str, count: int, first: int = 0) -> Path:
    """Fill the cache `directory` with `count` empty files ending in `suffix`, named by their number in 64 hex
    digits and written that many seconds after `first` seconds after the epoch (0 the oldest), and one file of
    another kind written at 0; return that one (a prune must leave it)."""
    for number in range(count):
        old = directory / f"{number:064x}{suffix}"
        old.write_bytes(b"")
        os.utime(old, ns=((first + number) * 10**9, (first + number) * 10**9))
    other = directory / "not-the-caches.txt"
    other.write_bytes(b"")
    os.utime(other, ns=(0, 0))
    return other


class Calls(collections.Counter[str]):
    """Counts the calls of real functions: `spy` wraps one in a spy that counts it and calls it through (never a
    stand-in that pretends)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__()
        self.monkeypatch = monkeypatch

    def spy(self, owner: object, name: str, key: Callable[..., str] | None = None) -> None:
        """Count each call of `owner.name` under its name, or under `key(*args, **kwargs)` when given."""
        original = getattr(owner, name)

        def through(*args: Any, **kwargs: Any) -> Any:
            self[key(*args, **kwargs) if key else name] += 1
            return original(*args, **kwargs)

        self.monkeypatch.setattr(owner, name, through)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Return a counter of real calls (`Calls`), its spies removed after the test."""
    return Calls(monkeypatch)


@pytest.fixture(scope="session")
def lab():
    """Return a `graphsite_lab.client.Lab`: config path, Config, the fake Cloudflare's control client, ports, CA."""
    from graphsite_lab.client import attach

    handle = attach()
    if isinstance(handle, str):
        message = f"lab is not running ({handle}): run `make lab`"
        if os.environ.get("GRAPHSITE_LAB_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return handle


CHROMIUM = DEFAULT_CHROMIUM  # Debian's, never a downloaded browser
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    """Return a Playwright Browser: the system's headless Chromium, closed after the module's tests."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
