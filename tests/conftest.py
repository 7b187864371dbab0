"""Shared fixtures. `lab`: the running lab (scripts/lab up). Without it, lab tests fail when
GRAPHSITE_LAB_REQUIRED=1 (CI) and are skipped otherwise, with a message that says `make lab`."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(items):
    """A test that uses the running lab (directly or through another fixture) is marked `lab`, so that
    `-m "not lab"` runs exactly the tests that need no lab."""
    for item in items:
        if "lab" in getattr(item, "fixturenames", ()) and item.get_closest_marker("lab") is None:
            item.add_marker(pytest.mark.lab)


@pytest.fixture(scope="session")
def lab():
    """Return a `graphsite.lab.client.Lab`: config path, Config, the fake Cloudflare's control client, ports, CA."""
    from graphsite.lab.client import attach

    handle = attach()
    if isinstance(handle, str):
        message = f"lab is not running ({handle}): run `make lab`"
        if os.environ.get("GRAPHSITE_LAB_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return handle
