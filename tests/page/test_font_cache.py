"""The font subset cache is the user's and closed to others: a directory found open is emptied, not adopted,
and a cached file anyone else could have written is never read."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import fontTools

from graphsite.builder import fonts
from graphsite.paths import theme_dir

FACE = theme_dir() / "fonts" / fonts.FACES[0].file


def _cached_name(characters: str) -> str:
    # the installed fontTools is known by its __init__.py (its version), read without importing the package
    key = b"\0".join([FACE.read_bytes(), characters.encode(), Path(fontTools.__file__).read_bytes(), b"v3"])
    return hashlib.sha256(key).hexdigest() + ".woff2"


def test_an_open_cache_directory_is_emptied_and_closed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = tmp_path / "graphsite" / "fonts"
    directory.mkdir(parents=True)
    directory.chmod(0o777)
    planted = directory / _cached_name("abc")
    planted.write_bytes(b"planted while the directory was open")
    fonts.subset_woff2.cache_clear()
    data = fonts.subset_woff2(FACE, "abc", fonts._cache_dir())
    assert data.startswith(b"wOF2") and data != b"planted while the directory was open"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert [p.name for p in directory.iterdir()] == [planted.name]  # rewritten by this build
    assert stat.S_IMODE(planted.stat().st_mode) == 0o600


def test_a_cached_file_others_can_write_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fonts.subset_woff2.cache_clear()
    fonts.subset_woff2(FACE, "xyz", fonts._cache_dir())
    cached = tmp_path / "graphsite" / "fonts" / _cached_name("xyz")
    cached.write_bytes(b"tampered")
    os.chmod(cached, 0o666)
    fonts.subset_woff2.cache_clear()
    assert fonts.subset_woff2(FACE, "xyz", fonts._cache_dir()).startswith(b"wOF2")
    fonts.subset_woff2.cache_clear()
