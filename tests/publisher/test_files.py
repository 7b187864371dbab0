"""graphsite's own files on the real file system, with real symbolic links: the root (an operator's setting) is
followed, a name below it never is; what a link points at is never read, written, chowned or removed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from graphsite.atomic import TEMPORARY_SUFFIX, temporary_prefix, write_atomic, write_atomic_at
from graphsite.publisher import files


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
