"""graphsite's private cache directory (`paths.private_cache`): what it refuses leaves nothing open behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphsite.paths import private_cache


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


REFUSALS = ["an ancestor others can write"] + (["a leaf of another user's"] if os.geteuid() == 0 else [])


@pytest.mark.parametrize("refusal", REFUSALS)
def test_a_refused_cache_leaves_no_descriptor_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   refusal: str) -> None:
    """`serve` asks for the cache at every rebuild: a refusal that kept a descriptor would run out of them."""
    if refusal == "an ancestor others can write":
        shared = tmp_path / "shared"
        shared.mkdir()
        shared.chmod(0o777)
        monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "cache"))
    else:
        leaf = tmp_path / "graphsite" / "fonts"
        leaf.mkdir(parents=True, mode=0o700)
        os.chown(leaf, 65534, 65534)  # nobody's
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    before = _open_fds()
    for _ in range(50):
        with private_cache("fonts") as cache:
            assert cache is None
    assert _open_fds() == before
