"""The tests never touch the developer's own cache (tests/conftest.py points XDG_CACHE_HOME elsewhere)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from graphsite.paths import user_cache_dir


def test_the_cache_is_the_runs_not_the_users() -> None:
    cache = user_cache_dir()
    assert cache.is_relative_to(Path(tempfile.gettempdir()).resolve()), cache
    assert not cache.is_relative_to(Path.home() / ".cache")
    started = subprocess.run([sys.executable, "-c", "from graphsite.paths import user_cache_dir; "
                              "print(user_cache_dir())"], capture_output=True, text=True, check=True, env=os.environ)
    assert Path(started.stdout.strip()) == cache  # what a test starts inherits it
