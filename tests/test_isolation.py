"""The tests never touch the developer's own cache (tests/conftest.py points XDG_CACHE_HOME elsewhere)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from graphsite.paths import private_cache, user_cache_dir


@pytest.fixture(scope="session")
def session_cache() -> Path:
    """What a session-scoped fixture (a page built once, a server started once) sees as the cache: session fixtures
    are set up before any function-scoped one, so an isolation made per test would come too late for them."""
    with private_cache("isolation") as cache:
        assert cache is not None
    return user_cache_dir("isolation")


def test_the_cache_is_the_runs_not_the_users() -> None:
    cache = user_cache_dir()
    assert cache.is_relative_to(Path(tempfile.gettempdir()).resolve()), cache
    assert not cache.is_relative_to(Path.home() / ".cache")
    started = subprocess.run([sys.executable, "-c", "from graphsite.paths import user_cache_dir; "
                              "print(user_cache_dir())"], capture_output=True, text=True, check=True, env=os.environ)
    assert Path(started.stdout.strip()) == cache  # what a test starts inherits it


def test_a_session_fixture_already_uses_the_runs_cache(session_cache: Path, request: pytest.FixtureRequest) -> None:
    assert session_cache.is_dir()
    assert session_cache.is_relative_to(Path(request.config.test_cache_home)), session_cache
    assert not session_cache.is_relative_to(Path.home() / ".cache")
