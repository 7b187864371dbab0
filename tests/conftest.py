"""Shared fixtures. `lab`: the running lab (scripts/lab up). Without it, lab tests fail when
GRAPHSITE_LAB_REQUIRED=1 (CI) and are skipped otherwise, with a message that says `make lab`. `browser`: Debian's
headless Chromium through Playwright (never a downloaded browser), one per test module."""

from __future__ import annotations

import os

import pytest

from graphsite.builder.pdf import DEFAULT_CHROMIUM


def pytest_collection_modifyitems(items):
    """A test that uses the running lab (directly or through another fixture) is marked `lab`, so that
    `-m "not lab"` runs exactly the tests that need no lab."""
    for item in items:
        if "lab" in getattr(item, "fixturenames", ()) and item.get_closest_marker("lab") is None:
            item.add_marker(pytest.mark.lab)


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
