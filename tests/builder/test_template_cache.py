"""The compiled-template cache runs no code another user could have planted: a real planted cache file, a real
`graphsite build` process, and the proof that the same plant does run when the cache trusts it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from graphsite.builder.render import _BytecodeCache
from graphsite.paths import theme_dir

TEMPLATE = "page.html.j2"


def _plant(cache: Path, marker: Path) -> Path:
    """Write, under the name the build looks for, a cache file whose code writes `marker`; return its path."""
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(theme_dir()))
    source, filename, _ = environment.loader.get_source(environment, TEMPLATE)  # type: ignore[union-attr]
    store = _BytecodeCache(str(cache))
    bucket = store.get_bucket(environment, TEMPLATE, filename, source)
    bucket.code = compile(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('planted')\n", filename, "exec")
    path = Path(store._get_cache_filename(bucket))
    with path.open("wb") as file:
        bucket.write_bytecode(file)
    return path


def _build(tmp_path: Path, cache_home: Path) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "plain.md"
    source.write_text("# A plain note\n\nOne paragraph.\n", encoding="utf-8")
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    return subprocess.run([sys.executable, "-m", "graphsite", "-q", "build", str(source), "--out",
                           str(tmp_path / "site"), "--fonts", "system"], capture_output=True, text=True,
                          env=environment, cwd=tmp_path, timeout=120)


@pytest.fixture
def cache(tmp_path: Path) -> tuple[Path, Path]:
    """Return ($XDG_CACHE_HOME, its graphsite/jinja directory), made."""
    home = tmp_path / "cache-home"
    directory = home / "graphsite" / "jinja"
    directory.mkdir(parents=True)
    return home, directory


def test_a_planted_file_runs_when_the_cache_trusts_it(tmp_path: Path, cache: tuple[Path, Path]) -> None:
    """The control: in a closed directory of ours, the planted file is loaded; the plant is real."""
    home, directory = cache
    directory.chmod(0o700)
    marker = tmp_path / "ran"
    _plant(directory, marker)
    _build(tmp_path, home)
    assert marker.read_text() == "planted"


def test_a_directory_found_open_is_emptied_not_adopted(tmp_path: Path, cache: tuple[Path, Path]) -> None:
    home, directory = cache
    directory.chmod(0o777)
    marker = tmp_path / "ran"
    planted = _plant(directory, marker)
    (directory / "other-file").write_text("left by someone")
    result = _build(tmp_path, home)
    assert result.returncode == 0, result.stderr
    assert not marker.exists(), "the planted template code ran"
    assert directory.stat().st_mode & 0o777 == 0o700
    assert not (directory / "other-file").exists()
    assert str(marker).encode() not in (planted.read_bytes() if planted.exists() else b"")


def test_a_file_others_may_write_is_never_loaded(tmp_path: Path, cache: tuple[Path, Path]) -> None:
    home, directory = cache
    directory.chmod(0o700)
    marker = tmp_path / "ran"
    planted = _plant(directory, marker)
    planted.chmod(0o666)
    result = _build(tmp_path, home)
    assert result.returncode == 0, result.stderr
    assert not marker.exists(), "a cache file open to others was loaded"
    second = _build(tmp_path, home)  # the cache the first build wrote in its place is used (and is ours)
    assert second.returncode == 0, second.stderr
    assert planted.stat().st_mode & 0o022 == 0


def test_a_damaged_cache_file_costs_a_recompile_not_the_build(tmp_path: Path, cache: tuple[Path, Path]) -> None:
    """A cache file whose pickled code is cut short is removed and the template compiled again: every later build
    works (before, the unpickling error ended each build in a traceback)."""
    home, directory = cache
    directory.chmod(0o700)
    path = _plant(directory, tmp_path / "ran")
    header = path.read_bytes()[:16]
    path.write_bytes(header + b"\x80\x04garbage")
    for _ in range(2):
        built = _build(tmp_path, home)
        assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr
    assert not (tmp_path / "ran").exists()


def test_a_directory_swapped_for_a_symlink_is_never_followed(tmp_path: Path) -> None:
    """The cache directory replaced by a link to a directory of ours that is open to others: the build neither
    empties nor closes the link's target (it is not the cache), and builds without a cache."""
    home = tmp_path / "cache-home"
    (home / "graphsite").mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.mkdir()
    target.chmod(0o777)
    (target / "keep.txt").write_text("mine")
    (home / "graphsite" / "jinja").symlink_to(target)
    built = _build(tmp_path, home)
    assert built.returncode == 0, built.stderr
    assert (target / "keep.txt").read_text() == "mine" and (target.stat().st_mode & 0o777) == 0o777
