"""One way to replace a file: a reader sees the old content or the new, never a part, even after a crash.

The temporary file lives in the same directory (a rename is atomic only within one file system), under a unique
name that starts with `.` and ends with `.tmp` (Traefik's file provider and the other readers ignore it), is
fsynced before the rename, and the directory is fsynced after it so that the rename itself survives a power cut.

Everything happens through a descriptor of the directory: the temporary file is created there, never through a
symbolic link (O_EXCL | O_NOFOLLOW), and renamed there, so a caller that opened the directory without following
a link (`write_atomic_at`) writes nowhere else, whatever is renamed or linked above it meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

TEMPORARY_SUFFIX = ".tmp"
# The <random> part of every temporary name graphsite has written (a pattern): twelve hex digits (new_temporary),
# eight of tempfile's letters, digits and underscore (the mkstemp/mkdtemp of earlier releases). Anything else in
# that place is not graphsite's, and a name it reads there is never shown raw.
TEMPORARY_RANDOM = r"(?:[0-9a-f]{12}|[a-z0-9_]{8})"
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
T = TypeVar("T")


def temporary_prefix(path: Path) -> str:
    """Return the prefix of `path`'s temporary files: `.NAME.` (a leading dot hides it from readers)."""
    return f".{path.name}."


def temporary_pattern(name_regex: str) -> re.Pattern[str]:
    """Return the pattern of the temporary names graphsite writes for a name matching `name_regex` (its groups are
    the pattern's): `.NAME.<random>.tmp` as `new_temporary` makes them, <random> only what graphsite has written
    there (TEMPORARY_RANDOM). It is anchored at both ends (no trailing newline either): a name it matches is one
    graphsite wrote, whatever method asks."""
    return re.compile(rf"\A\.(?:{name_regex})\.{TEMPORARY_RANDOM}{re.escape(TEMPORARY_SUFFIX)}\Z")


def new_temporary(name: str, create: Callable[[str], T]) -> tuple[str, T]:
    """Return a fresh temporary name for `name`, `.NAME.<random>.tmp` (the shape tempfile.mkstemp gave), and what
    `create` gave for it; `create` must make it exclusively (FileExistsError: another name is drawn)."""
    for _ in range(100):
        # os.urandom is what secrets.token_hex reads; importing secrets pulls in hashlib and OpenSSL's digests,
        # about 10 ms of every `graphsite links` (which writes its cache through here) for twelve hex digits.
        temporary = temporary_prefix(Path(name)) + os.urandom(6).hex() + TEMPORARY_SUFFIX
        with contextlib.suppress(FileExistsError):
            return temporary, create(temporary)
    raise FileExistsError(f"no free temporary name for {name}")


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Replace `path` with `data` (str is written as UTF-8) with file mode `mode`; raise OSError on failure
    after removing the temporary file. A symbolic link at `path` is replaced, never written through."""
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        write_atomic_at(directory, path.name, data, mode=mode)
    finally:
        os.close(directory)


def write_atomic_at(directory: int, name: str, data: bytes | str, *, mode: int = 0o644,
                    owner: tuple[int, int] | None = None) -> None:
    """Replace the file `name` of the directory open as descriptor `directory` with `data`, with file mode `mode`
    and, when given, owner (uid, gid) set before the rename; raise OSError after removing the temporary file."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temporary, fd = new_temporary(name, lambda temporary: os.open(temporary, _NEW_FILE, 0o600, dir_fd=directory))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if owner is not None:
                os.fchown(handle.fileno(), *owner)
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory)
        raise
    with contextlib.suppress(OSError):  # a file system that cannot flush a directory is skipped
        os.fsync(directory)


def fsync_directory(directory: Path) -> None:
    """Flush `directory`'s entries (a rename or an unlink in it) to disk; a file system that cannot is skipped."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
