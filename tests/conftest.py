"""Shared fixtures. `lab`: the running lab (scripts/lab up). Without it, lab tests fail when
GRAPHSITE_LAB_REQUIRED=1 (CI) and are skipped otherwise, with a message that says `make lab`. `browser`: Debian's
headless Chromium through Playwright (never a downloaded browser), one per test module."""

from __future__ import annotations

import contextlib
import os

import pytest

from graphsite.builder.pdf import DEFAULT_CHROMIUM

# Every module with a test that uses the lab, or that starts, stops or stalls Docker daemons and lab instances of
# its own (on the machine's one dockerd) without the `lab` fixture. Under xdist (scripts/test runs `-n 3`) these
# modules are one unit of work, run one test at a time by one worker: one lab, one fault slot of the fake
# Cloudflare, one dockerd that some of them stop. The other modules run beside them, each module in one worker (its
# module-scoped browser or fake Cloudflare starts once). A lab test outside this list stops the run at collection.
LAB_MODULES = ("tests/lab/test_cluster.py", "tests/lab/test_edge.py",
               "tests/lab/test_lifecycle.py", "tests/ops/test_doctor_lab.py", "tests/ops/test_readme.py",
               "tests/publisher/cluster/", "tests/publisher/test_adapter_errors.py", "tests/publisher/test_lab_",
               "tests/reliability/")
CLUSTER_TEST = "tests/lab/test_cluster.py"
# Lab tests with a lab of their own, in private mount and network namespaces (their own dockerd, found by its own
# socket): they touch nothing of the shared lab, so they run beside its tests, each module a unit of its own.
OWN_LABS = ("tests/lab/test_cold.py",)
# Fixtures that make lab instances on the machine's one dockerd without the `lab` fixture (tests/lab/conftest.py):
# a test using one must live in LAB_MODULES too.
DOCKERD_FIXTURES = ("run_lab", "isolated_instance")
BESIDE_THE_LAB = 10  # the niceness of a worker's tests that are not the lab's (under xdist)


def pytest_configure(config):
    config.lab_unit_starts = []  # run before this process's first test of LAB_MODULES (see tests/lab/conftest.py)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    in_lab = item.nodeid.startswith(LAB_MODULES)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # The lab's tests are the run's critical path and mostly wait on daemons: the other workers (and what they
        # start: browsers, builds, servers) yield the CPU to them, and take whatever the lab leaves idle. Set
        # before the starts below, which the processes they start inherit.
        with contextlib.suppress(PermissionError):  # lowering it again needs root, as the lab does
            os.setpriority(os.PRIO_PROCESS, 0, 0 if in_lab else BESIDE_THE_LAB)
    starts = item.config.lab_unit_starts
    if starts and in_lab:
        while starts:
            starts.pop()()


def pytest_collection_modifyitems(config, items):
    """A test that uses the running lab (directly or through another fixture) is marked `lab`, so that
    `-m "not lab"` runs exactly the tests that need no lab; each must live in one of LAB_MODULES, as must every
    test of a lab instance on the shared dockerd (DOCKERD_FIXTURES)."""
    outside = []
    for item in items:
        if "lab" in getattr(item, "fixturenames", ()) and item.get_closest_marker("lab") is None:
            item.add_marker(pytest.mark.lab)
        shares_dockerd = any(name in DOCKERD_FIXTURES for name in getattr(item, "fixturenames", ()))
        if (item.get_closest_marker("lab") is not None or shares_dockerd) \
                and not item.nodeid.startswith((*LAB_MODULES, *OWN_LABS)):
            outside.append(item.nodeid)
    # The three-node cluster test waits for a lab it starts in the background (tests/lab/conftest.py): last, it
    # overlaps every other test instead of waiting at the head of the lab's worker.
    items.sort(key=lambda item: item.nodeid.startswith(CLUSTER_TEST))
    if outside:
        raise pytest.UsageError(f"{len(outside)} lab or dockerd test(s) outside tests/conftest.py's LAB_MODULES, "
                                f"which keeps them in the lab's one worker under xdist: {', '.join(outside[:5])}; "
                                "add the module to LAB_MODULES")


@pytest.hookimpl(optionalhook=True)  # xdist's hook: a pytest without xdist runs the tests one after another
def pytest_xdist_make_scheduler(config, log):
    """Under xdist: the lab's modules are one unit of work, every other module a unit of its own (see LAB_MODULES).
    (xdist's own `xdist_group` marks do not group on pytest 9, which no longer reads the node id they rewrite.)"""
    from xdist.scheduler import LoadScopeScheduling

    class LabApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "lab" if module.startswith(LAB_MODULES) else module

    return LabApart(config, log)


@pytest.fixture(scope="session")
def _test_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def _no_user_cache(_test_cache, monkeypatch):
    """Point XDG_CACHE_HOME (graphsite's caches: fonts, front matter, links) at a directory of this run's, for every
    test and what it starts: the cache code runs from empty, never reads the developer's cache nor writes into their
    home. One directory a run (a worker), not one a test: a cold font subset is a quarter of a second a face; a test
    that needs an empty cache sets its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(_test_cache))


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
