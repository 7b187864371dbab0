"""Shared fixtures. `lab`: the running lab (scripts/lab up). Without it, lab tests fail when
GRAPHSITE_LAB_REQUIRED=1 (CI) and are skipped otherwise, with a message that says `make lab`."""

from __future__ import annotations

import os

import pytest


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
