"""graphsite's private cache directory (`paths.private_cache`): what it refuses leaves nothing open behind."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from graphsite.paths import installed_record, private_cache


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


def test_a_cache_directory_that_could_not_be_emptied_is_never_adopted() -> None:
    """A directory found open to others is closed, then emptied: when emptying fails (a subdirectory planted that
    cannot be removed), the next build must not take the directory as emptied and use what was left in it. Run as
    nobody when the tests run as root, whom nothing stops removing."""
    home = Path(tempfile.mkdtemp())  # under /tmp, whose directories on the way are root's: not under tmp_path (0700)
    try:
        home.chmod(0o755)
        leaf = home / "graphsite" / "fonts"
        (leaf / "planted").mkdir(parents=True)
        (leaf / "planted" / "file").write_bytes(b"left behind")
        (leaf / "planted").chmod(0o500)
        leaf.chmod(0o777)
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        if as_nobody:
            for path in (home / "graphsite", leaf, leaf / "planted", leaf / "planted" / "file"):
                os.chown(path, 65534, 65534)
        program = ("from graphsite.paths import private_cache\n"
                   "for _ in range(2):\n"
                   "    with private_cache('fonts') as cache:\n"
                   "        print(cache is None)\n")
        run = subprocess.run([*as_nobody, sys.executable, "-c", program], capture_output=True, text=True,
                             check=False, cwd="/", env={**os.environ, "XDG_CACHE_HOME": str(home)})
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["True", "True"]
        assert (leaf / "planted" / "file").exists()  # what could not be removed: the cache is still refused
        assert stat.S_IMODE(leaf.stat().st_mode) & 0o077 == 0  # closed to others all along
    finally:
        (home / "graphsite" / "fonts" / "planted").chmod(0o700)
        shutil.rmtree(home)


def test_an_ancestor_this_user_can_only_traverse_keeps_the_cache() -> None:
    """A directory on the way that this user may pass through but not list (/home at 0711) is no reason to go
    without the cache. Run as nobody when the tests run as root, whom no mode stops reading."""
    home = Path(tempfile.mkdtemp())
    try:
        home.chmod(0o755)
        passage = home / "passage"  # not this user's to list (root's, or this user's own made unreadable)
        (passage / "cache").mkdir(parents=True)
        passage.chmod(0o311)
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        if as_nobody:
            os.chown(passage / "cache", 65534, 65534)
        program = ("from graphsite.paths import private_cache\n"
                   "with private_cache('fonts') as cache:\n"
                   "    print(cache is None)\n")
        run = subprocess.run([*as_nobody, sys.executable, "-c", program], capture_output=True, text=True,
                             check=False, cwd="/", env={**os.environ, "XDG_CACHE_HOME": str(passage / "cache")})
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["False"]
        assert (passage / "cache" / "graphsite" / "fonts").is_dir()
    finally:
        (home / "passage").chmod(0o700)
        shutil.rmtree(home)


def test_a_prune_never_removes_a_spared_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's own subsets are spared (fonts.font_face_css), even the oldest (a file dated ahead by a clock set
    back is newer than any just read): the oldest of the others go in their place, the count kept as asked."""
    from tests.conftest import aged_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with private_cache("fonts") as cache:
        assert cache is not None
        aged_cache(tmp_path / "graphsite" / "fonts", ".woff2", 6)
        cache.prune(".woff2", 4, spare=frozenset({f"{0:064x}.woff2", f"{2:064x}.woff2"}))
    kept = sorted(path.name for path in (tmp_path / "graphsite" / "fonts").iterdir())
    assert kept == [f"{number:064x}.woff2" for number in (0, 2, 4, 5)] + ["not-the-caches.txt"]


@pytest.mark.parametrize("suffix", [".woff2", ".marshal"])  # the fonts' cache, the front matter's
def test_a_prune_removes_only_the_names_graphsite_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        suffix: str) -> None:
    """A prune removes only files named as graphsite names them (a digest's 64 lowercase hex digits, then the
    suffix): before, any regular file ending in the suffix and not starting with a dot went, the oldest first."""
    from tests.conftest import aged_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = tmp_path / "graphsite" / "fonts"
    with private_cache("fonts") as cache:
        assert cache is not None
        aged_cache(directory, suffix, 4, first=1)
        others = [f"mine{suffix}", f"{'A' * 64}{suffix}", f"{'a' * 63}{suffix}", f"{'a' * 65}{suffix}",
                  f"{'a' * 64}{suffix}.old", f"{'g' * 64}{suffix}"]
        for name in others:  # older than any of graphsite's
            (directory / name).write_bytes(b"")
            os.utime(directory / name, ns=(0, 0))
        cache.prune(suffix, 2)
    kept = sorted(path.name for path in directory.iterdir())
    assert kept == sorted([*others, f"{2:064x}{suffix}", f"{3:064x}{suffix}", "not-the-caches.txt"])


def test_an_installed_package_is_known_by_its_one_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caches' one way to know an installed package (the font subsets key on fontTools', the front matter on
    PyYAML's): its dist-info RECORD, read without importing it; no RECORD, or two, is no identity."""
    package = tmp_path / "site" / "gs_probe_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise SystemExit('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert installed_record("gs_probe_pkg", "gs-probe-pkg") is None
    (tmp_path / "site" / "GS-Probe-Pkg-1.0.dist-info").mkdir()
    (tmp_path / "site" / "GS-Probe-Pkg-1.0.dist-info" / "RECORD").write_bytes(b"gs_probe_pkg/__init__.py,sha256=x,1\n")
    assert installed_record("gs_probe_pkg", "gs-probe-pkg") == (package, b"gs_probe_pkg/__init__.py,sha256=x,1\n")
    (tmp_path / "site" / "gs-probe-pkg-2.0.dist-info").mkdir()
    assert installed_record("gs_probe_pkg", "gs-probe-pkg") is None
    assert installed_record("gs_no_such_package", "gs-no-such-package") is None


def test_a_finder_ahead_of_sys_path_is_not_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What installed_record's docstring warns of: a finder on sys.meta_path ahead of PathFinder that serves one
    copy of a module while another copy lies on sys.path with its dist-info: the import takes the first, the
    RECORD read is the other's (a cache keyed on it would not change with the copy imported)."""
    import importlib.util
    from importlib.abc import MetaPathFinder

    served, other = tmp_path / "served" / "gsprobetwo", tmp_path / "site" / "gsprobetwo"
    for copy in (served, other):
        copy.mkdir(parents=True)
        (copy / "__init__.py").write_text(f"WHERE = {copy.parent.name!r}\n")
    (tmp_path / "site" / "gsprobetwo-1.0.dist-info").mkdir()
    (tmp_path / "site" / "gsprobetwo-1.0.dist-info" / "RECORD").write_bytes(b"the other copy's\n")

    class Editable(MetaPathFinder):  # as an editable install's finder serves its module
        def find_spec(self, name, path=None, target=None):
            if name != "gsprobetwo":
                return None
            return importlib.util.spec_from_file_location(name, served / "__init__.py",
                                                          submodule_search_locations=[str(served)])

    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(sys, "meta_path", [Editable(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "gsprobetwo", raising=False)
    assert importlib.import_module("gsprobetwo").WHERE == "served"
    assert installed_record("gsprobetwo", "gsprobetwo") == (other, b"the other copy's\n")
    monkeypatch.delitem(sys.modules, "gsprobetwo")


def test_a_dist_info_without_a_record_is_no_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution's package (Debian's) has a dist-info without RECORD: no identity, so the caches that key on
    it keep nothing; and that answer is not kept either: the RECORD written later is found."""
    site = tmp_path / "site"
    (site / "gsprobedeb").mkdir(parents=True)
    (site / "gsprobedeb" / "__init__.py").write_text("raise SystemExit('imported')\n")
    info = site / "gsprobedeb-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gsprobedeb\nVersion: 1.0\n")
    (info / "INSTALLER").write_text("debian\n")
    monkeypatch.syspath_prepend(str(site))
    assert installed_record("gsprobedeb", "gsprobedeb") is None
    (info / "RECORD").write_bytes(b"gsprobedeb/__init__.py,sha256=x,1\n")
    assert installed_record("gsprobedeb", "gsprobedeb") == (site / "gsprobedeb", b"gsprobedeb/__init__.py,sha256=x,1\n")


def test_a_dist_info_is_matched_by_its_normalised_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installers write a distribution's name with `_` for `-` in its dist-info (`typing_extensions-4.12.2`), in
    its own case (`PyYAML-6.0.2`): the name is compared as PEP 503 normalises it, and a longer name that begins
    with it is another distribution."""
    site = tmp_path / "site"
    (site / "gs_probe_wheel").mkdir(parents=True)
    (site / "gs_probe_wheel" / "__init__.py").write_text("raise SystemExit('imported')\n")
    monkeypatch.syspath_prepend(str(site))
    (site / "GS_Probe.Wheel-1.0.dist-info").mkdir()
    (site / "GS_Probe.Wheel-1.0.dist-info" / "RECORD").write_bytes(b"gs_probe_wheel/__init__.py,sha256=x,1\n")
    (site / "gs_probe_wheel_extra-2.0.dist-info").mkdir()
    (site / "gs_probe_wheel_extra-2.0.dist-info" / "RECORD").write_bytes(b"")
    assert installed_record("gs_probe_wheel", "gs-probe-wheel") == (site / "gs_probe_wheel",
                                                                   b"gs_probe_wheel/__init__.py,sha256=x,1\n")
