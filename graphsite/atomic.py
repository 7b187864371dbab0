"""One way to replace a file: a reader sees the old content or the new, never a part, even after a crash.

The temporary file lives in the same directory (a rename is atomic only within one file system), under a unique
name that starts with `.` and ends with `.tmp` (Traefik's file provider and the other readers ignore it), is
fsynced before the rename, and the directory is fsynced after it so that the rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TEMPORARY_SUFFIX = ".tmp"


def temporary_prefix(path: Path) -> str:
    """Return the prefix of `path`'s temporary files: `.NAME.` (a leading dot hides it from readers)."""
    return f".{path.name}."


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Replace `path` with `data` (str is written as UTF-8) with file mode `mode`; raise OSError on failure
    after removing the temporary file."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    directory = path.parent
    fd, temporary = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=TEMPORARY_SUFFIX, dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_directory(directory)


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
