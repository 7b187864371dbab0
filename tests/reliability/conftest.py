"""Fixtures of the reliability tests: the real CLI run as subprocesses against the lab (graphsite_lab.drive), the
faults made real (signals, SIGSTOP of a daemon, the fake Cloudflare's fault injection), and every resource of
this session's prefix torn down before and after, whatever a test left.

Every name is `gsrel<4 hex>-<6 hex>`: gc runs only with `--prefix` of this session, so other sessions on the
shared lab are never touched.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

import pytest

from graphsite_lab.drive import Driver

FAMILY = "gsrel"  # every session's prefix: gsrel<4 hex>


def _teardown_all(driver: Driver, names: set[str]) -> list[str]:
    """Tear down `names` with the CLI; return what could not be removed."""
    problems = []
    for name in sorted(names):
        if not driver.held(name) and not driver.lock_left(name):
            continue  # nothing of it anywhere: no teardown to run
        run = driver.run("teardown", name, "--wait", "60")
        left = driver.held(name)
        if run.code != 0 or left:
            problems.append(f"{name}: exit {run.code}, left {sorted(left)}\n{run.stderr[-2000:]}")
    return problems


def _stale(driver: Driver) -> set[str]:
    """Names of earlier sessions (gsrel…) whose records or services are over 20 minutes old: a session killed
    before its cleanup. Names of a session still running (another worker's) are younger and stay, as does a name
    whose age is unknown (a deploy in flight may not have stamped it yet)."""
    cutoff = datetime.now(UTC) - timedelta(minutes=20)
    listing = driver.run("list", "--json")
    old = set()
    for entry in (listing.json()["deployments"] if listing.stdout.strip() else []):
        created = entry.get("created")
        moment = datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None
        if entry["subdomain"].startswith(FAMILY) and moment is not None and moment < cutoff:
            old.add(entry["subdomain"])
    return old


@pytest.fixture(scope="session")
def driver(lab):
    """The lab driven as a fault injector, with a prefix of this session; everything of the prefix is torn
    down at the end, and no output may ever hold the Cloudflare token."""
    handle = Driver(lab, prefix=f"{FAMILY}{secrets.token_hex(2)}")
    _teardown_all(handle, _stale(handle))
    yield handle
    try:
        token = lab.token()
        assert token and not any(token in text for text in handle.outputs), "the Cloudflare token was in an output"
        problems = _teardown_all(handle, handle.names_held())
        assert not problems, "session cleanup could not remove:\n" + "\n".join(problems)
    finally:
        handle.close()


@pytest.fixture
def names(driver):
    """A factory of fresh names of this session; each is torn down after the test, and checked gone."""
    made: list[str] = []

    def make(tag: str = "") -> str:
        """Return `PREFIX-TAG<hex>` (6 characters after the dash): a tag lets gc --prefix pick one test's names."""
        made.append(f"{driver.prefix}-{tag}{secrets.token_hex(3)[: 6 - len(tag)]}")
        return made[-1]

    yield make
    driver.cloudflare.fail_next(0)  # whatever a test injected is cleared before the cleanup needs Cloudflare
    driver.cloudflare.latency(0)
    problems = _teardown_all(driver, set(made))
    assert not problems, "cleanup could not remove:\n" + "\n".join(problems)
