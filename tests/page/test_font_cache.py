"""The font subset cache is the user's and closed to others: a directory found open is emptied, not adopted,
and a cached file anyone else could have written is never read."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import fontTools

from graphsite.builder import fonts
from graphsite.paths import private_cache, theme_dir
from tests.conftest import aged_cache

FONTS = theme_dir() / "fonts"
FACE = FONTS / fonts.FACES[0].file


def _cached_name(characters: str, face: Path = FACE) -> str:
    # the installed fontTools is known by its dist-info RECORD (the sha256 of its files), as PyYAML is
    (record,) = Path(fontTools.__file__).parents[1].glob("[fF]ont[tT]ools-*.dist-info")
    key = b"\0".join([face.read_bytes(), characters.encode(), (record / "RECORD").read_bytes(), b"v4"])
    return hashlib.blake2b(key, digest_size=32).hexdigest() + ".woff2"


def test_an_open_cache_directory_is_emptied_and_closed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = tmp_path / "graphsite" / "fonts"
    directory.mkdir(parents=True)
    directory.chmod(0o777)
    planted = directory / _cached_name("abc")
    planted.write_bytes(b"planted while the directory was open")
    fonts.subset_woff2.cache_clear()
    with private_cache("fonts") as cache:
        data = fonts.subset_woff2(FACE, "abc", cache).data
    assert data.startswith(b"wOF2") and data != b"planted while the directory was open"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert [p.name for p in directory.iterdir()] == [planted.name]  # rewritten by this build
    assert stat.S_IMODE(planted.stat().st_mode) == 0o600


def test_a_cached_file_others_can_write_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fonts.subset_woff2.cache_clear()
    with private_cache("fonts") as cache:
        fonts.subset_woff2(FACE, "xyz", cache)
    cached = tmp_path / "graphsite" / "fonts" / _cached_name("xyz")
    cached.write_bytes(b"tampered")
    os.chmod(cached, 0o666)
    fonts.subset_woff2.cache_clear()
    with private_cache("fonts") as cache:
        assert fonts.subset_woff2(FACE, "xyz", cache).data.startswith(b"wOF2")
    fonts.subset_woff2.cache_clear()


def test_a_cache_under_a_directory_others_can_write_is_not_used(tmp_path, monkeypatch):
    """A directory on the cache's way that another user can write (not sticky) lets them swap what lies below it:
    no cache is used there, for the fonts as for the front matter."""
    from graphsite.builder.source import parse_source

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared / "cache"))
    fonts.subset_woff2.cache_clear()
    with private_cache("fonts") as cache:
        assert cache is None
        assert fonts.subset_woff2(FACE, "abc", cache).data.startswith(b"wOF2")
    parse_source(Path("report.md"), b"---\ntitle: T\n---\n\nBody.\n")
    assert list((shared / "cache").rglob("*.*")) == []
    fonts.subset_woff2.cache_clear()


def test_a_linked_cache_directory_is_resolved_once_then_walked_without_links(tmp_path, monkeypatch):
    """The cache's own directory as a symbolic link (to a directory of ours) is resolved once, before the walk;
    the real path is then opened a directory at a time, following no link."""
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp_path / "graphsite").mkdir()
    (tmp_path / "graphsite" / "fonts").symlink_to(target)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with private_cache("fonts") as cache:
        assert cache is not None  # the link is resolved once, then the real path is walked without links
        cache.write("probe", b"x")
    assert (target / "probe").read_bytes() == b"x"


def test_a_page_keeps_its_own_subsets_when_the_cache_is_full(tmp_path, monkeypatch, calls):
    """The cache is pruned once a page, after all its faces are in hand, never of the page's own subsets, and a hit
    refreshes a file's time. Before, each write pruned the oldest files: with a full cache in which the page's
    subsets were the oldest and one was missing, making that one removed the next face's before it was read, and
    so on: every face was subset again. Now that one face is subset, the page's files all stay, and the oldest
    of the others goes."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory, characters = tmp_path / "graphsite" / "fonts", "kept"
    fonts.font_face_css(FONTS, characters)
    fonts.subset_woff2.cache_clear()
    own = [_cached_name(characters, FONTS / face.file) for face in fonts.FACES]
    (directory / own[0]).unlink()
    for number, name in enumerate(own[1:], 1):  # the page's, older than any other: the second face's the oldest
        os.utime(directory / name, ns=(number * 10**9, number * 10**9))
    other = aged_cache(directory, ".woff2", fonts.KEEP - len(own) + 1, first=len(own))  # the cache full
    calls.spy(fonts, "_subset")
    fonts.font_face_css(FONTS, characters)
    fonts.subset_woff2.cache_clear()
    kept = {path.name for path in directory.iterdir()}
    assert calls["_subset"] == 1
    assert set(own) | {other.name} <= kept and len(kept) == fonts.KEEP + 1
    assert f"{0:064x}.woff2" not in kept and f"{1:064x}.woff2" in kept  # the oldest of the others went
    times = {path.name: path.stat().st_mtime_ns for path in directory.iterdir()}
    assert min(times[name] for name in own) > max(times[name] for name in kept - set(own))  # used last


def test_a_face_is_subset_once_a_process_across_builds(tmp_path, monkeypatch):
    """Each build opens the cache anew (`serve` rebuilds in one process): the memo still knows the face."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fonts.subset_woff2.cache_clear()
    results = []
    for _ in range(2):
        with private_cache("fonts") as cache:
            results.append(fonts.subset_woff2(FACE, "memo", cache))
    info = fonts.subset_woff2.cache_info()
    assert (info.misses, info.hits, info.currsize) == (1, 1, 1) and results[0] == results[1]
    fonts.subset_woff2.cache_clear()


def test_a_fonttools_without_one_record_is_never_cached(tmp_path):
    """A distribution's fontTools (Debian's: a dist-info without RECORD) is not known by its files: its version
    alone would let a patched build share another's subsets. Such a fontTools subsets at every build, reading and
    writing nothing in the cache, as the front matter's cache does with such a PyYAML; once its RECORD is there,
    the subsets are cached (the control: the probe can see a cached file)."""
    import subprocess
    import sys

    site = tmp_path / "site"
    site.mkdir()
    (site / "fontTools").symlink_to(Path(fontTools.__file__).parent)  # imported from here, beside its dist-info
    info = site / "fonttools-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fonttools\nVersion: 0.0\n")
    cache = tmp_path / "cache"
    probe = ("import fontTools, sys; from graphsite.builder import fonts; from graphsite.paths import private_cache\n"
             f"assert fontTools.__file__.startswith({str(site)!r}), fontTools.__file__\n"
             "for _ in range(2):\n"
             "    fonts.subset_woff2.cache_clear()\n"
             "    with private_cache('fonts') as cache:\n"
             "        assert cache is not None\n"
             f"        assert fonts.subset_woff2(fonts.Path({str(FACE)!r}), 'abc', cache).data.startswith(b'wOF2')\n")

    def kept() -> list[str]:
        env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
        run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False)
        assert run.returncode == 0, run.stderr
        return sorted(path.name for path in (cache / "graphsite" / "fonts").iterdir())

    assert kept() == []
    (info / "RECORD").write_text("fontTools/__init__.py,sha256=x,1\n")
    assert len(kept()) == 1


def test_the_docs_give_the_cache_s_limit():
    """docs/builder.md says how many subsets the cache keeps (before, it said a rebuild never subsets again)."""
    text = " ".join((Path(__file__).parents[2] / "docs" / "builder.md").read_text(encoding="utf-8").split())
    sets = fonts.KEEP // len(fonts.FACES)
    assert f"the subsets used last for {sets} sets of characters, every face's ({fonts.KEEP} files" in text
    assert "never subsets again" not in text
