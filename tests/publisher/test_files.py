"""graphsite's own files on the real file system, with real symbolic links: the root (an operator's setting) is
followed, a name below it never is; what a link points at is never read, written, chowned or removed."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from graphsite.atomic import (
    TEMPORARY_SUFFIX,
    new_temporary,
    temporary_pattern,
    temporary_prefix,
    write_atomic,
    write_atomic_at,
)
from graphsite.publisher import bind, files, route
from graphsite.publisher.bind import PAGE, Kind
from graphsite.publisher.deployment import MARKER


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file no write of graphsite's may reach: mode 0600, its content known."""
    path = tmp_path / "outside.txt"
    path.write_bytes(b"precious")
    path.chmod(0o600)
    return path


def _unchanged(path: Path) -> bool:
    return path.read_bytes() == b"precious" and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_write_atomic_replaces_a_link_and_never_writes_through_it(tmp_path, outside):
    link = tmp_path / "dir" / "route.yml"
    link.parent.mkdir()
    link.symlink_to(outside)
    write_atomic(link, "new", mode=0o644)
    assert not link.is_symlink() and link.read_text() == "new" and _unchanged(outside)
    assert [p.name for p in link.parent.iterdir()] == ["route.yml"]


def test_write_atomic_at_writes_only_inside_the_directory_it_was_given(tmp_path, outside):
    directory = tmp_path / "own"
    directory.mkdir()
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.rename(directory, tmp_path / "moved")  # whatever is renamed above it meanwhile
        (tmp_path / "own").symlink_to(outside.parent)
        write_atomic_at(fd, "index.html", b"page", mode=0o640, owner=(os.getuid(), os.getgid()))
    finally:
        os.close(fd)
    written = tmp_path / "moved" / "index.html"
    assert written.read_bytes() == b"page" and stat.S_IMODE(written.stat().st_mode) == 0o640
    assert not (outside.parent / "index.html").exists() and _unchanged(outside)


def test_read_own_never_reads_through_a_link(tmp_path, outside):
    root = tmp_path / "root"
    (root / "gs-a").mkdir(parents=True)
    (root / "gs-a" / "marker").write_bytes(b"ours")
    (root / "gs-b").symlink_to(root / "gs-a")
    (root / "gs-a" / "page").symlink_to(outside)
    assert files.read_own(root, "gs-a", "marker") == b"ours"
    assert files.read_own(root, "gs-a", "absent") is None and files.read_own(root, "gs-c", "marker") is None
    for names in (("gs-b", "marker"), ("gs-a", "page")):
        with pytest.raises(OSError):
            files.read_own(root, *names)
    os.mkfifo(root / "gs-a" / "fifo")  # opened without blocking, then refused: no regular file
    with pytest.raises(OSError, match="not a regular file"):
        files.read_own(root, "gs-a", "fifo")


def test_a_linked_root_is_the_operators_choice_and_is_followed(tmp_path):
    real = tmp_path / "real"
    (real / "gs-a").mkdir(parents=True)
    (real / "gs-a" / "marker").write_bytes(b"ours")
    (tmp_path / "configured").symlink_to(real)
    assert files.read_own(tmp_path / "configured", "gs-a", "marker") == b"ours"


def test_the_refusal_of_a_link_is_one_line_naming_the_path_its_target_and_what_to_do(tmp_path, outside):
    link = tmp_path / "gs-a.yml"
    assert files.link_refusal(link, "route file") is None and files.kept_link(link) is None
    link.symlink_to(outside)
    message = str(files.link_refusal(link, "route file"))
    assert "\n" not in message and str(link) in message and f"symbolic link to {outside}" in message
    assert "remove the link" in message
    assert f"a symbolic link to {outside}" in (files.kept_link(link) or "")


def test_a_temporary_name_is_never_one_a_link_holds(tmp_path, outside, monkeypatch):
    """The temporary file is created with O_EXCL | O_NOFOLLOW: a link planted under the name drawn makes it
    draw another name, and the link's target is never written."""
    import secrets

    planted = temporary_prefix(Path("route.yml")) + "0" * 12 + TEMPORARY_SUFFIX
    (tmp_path / planted).symlink_to(outside)
    draws = iter(["0" * 12, "1" * 12])
    monkeypatch.setattr(secrets, "token_hex", lambda _: next(draws))
    write_atomic(tmp_path / "route.yml", "new")
    assert (tmp_path / "route.yml").read_text() == "new" and _unchanged(outside)
    assert (tmp_path / planted).is_symlink()


# What each temporary graphsite writes is written for (the name new_temporary is given), and how the code that finds
# a killed write's temporaries recognises one: a page directory (by the deployment it names), the page's and the
# marker's (not strays), a version folder's (a version's name), a route file's (by the deployment it names).
_RECOGNISED: dict[str, Callable[[str], bool]] = {
    "gs-bind": lambda temporary: bind.temporary_name(temporary) == "gs-bind",
    PAGE: lambda temporary: bind.not_made({temporary: Kind.FILE}) == (),
    MARKER: lambda temporary: bind.not_made({temporary: Kind.FILE}) == (),
    "0123456789ab": bind.version_name,
    "s1.yml": lambda temporary: route.temporary_name(temporary) == "s1",
}


@pytest.mark.parametrize("name", _RECOGNISED)
def test_a_temporary_is_recognised_by_every_name_new_temporary_writes_and_no_lookalike(tmp_path, name):
    """atomic.temporary_pattern, which every recogniser uses, is held against new_temporary's own output: files
    it really created (and mkstemp's, of earlier releases) are recognised; the same name with another random
    part, or anything after `.tmp`, is not."""
    recognised = _RECOGNISED[name]
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        drawn = [new_temporary(name, lambda temporary: os.close(os.open(temporary, os.O_CREAT | os.O_EXCL,
                                                                         dir_fd=fd)))[0] for _ in range(64)]
    finally:
        os.close(fd)
    older = Path(tempfile.mkstemp(prefix=temporary_prefix(Path(name)), suffix=TEMPORARY_SUFFIX, dir=tmp_path)[1])
    written = sorted(path.name for path in tmp_path.iterdir())
    assert written == sorted([*drawn, older.name])
    assert [temporary for temporary in written if not recognised(temporary)] == []
    prefix = temporary_prefix(Path(name))
    lookalikes = [prefix + other + TEMPORARY_SUFFIX  # the random part: one digit short or over, upper case, not hex
                  for other in ("0123456789a", "0123456789abc", "0123456789AB", "0123456789ag", "k3j2-k3j", "")]
    lookalikes += [drawn[0] + "\n", drawn[0] + "~", drawn[0][1:], "." + drawn[0], drawn[0][:-len(TEMPORARY_SUFFIX)]]
    assert [lookalike for lookalike in lookalikes if recognised(lookalike)] == []


def test_a_temporary_pattern_is_anchored_and_keeps_the_name_s_groups():
    pattern = temporary_pattern(r"(?P<name>[a-z0-9-]+)")
    assert pattern.fullmatch(".gs-bind.0123456789ab.tmp")["name"] == "gs-bind"
    assert pattern.match(".gs-bind.0123456789ab.tmp\n") is None and pattern.search("x.gs-bind.0123456789ab.tmp") is None
