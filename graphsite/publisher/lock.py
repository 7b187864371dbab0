"""Per-subdomain locks: an fcntl lock on `deploy.lock_dir/NAME.lock`, held while a run changes NAME.

The lock file is removed when the run ends, so the directory does not grow with every name ever used. A
process that opened the file before it was removed may then hold a lock on a file that no longer has that name;
so after taking the lock, a run checks that the name still leads to the file it locked, and tries again if not.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graphsite.errors import DeployError


class LockBusy(DeployError):
    """Another run holds the name's lock."""


def _open(directory: Path, path: Path, create: bool) -> int:
    """Open the lock file (made when `create`; else FileNotFoundError when there is none)."""
    try:
        if not create:
            return os.open(path, os.O_RDWR | os.O_NOFOLLOW)
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)  # others may not add locks (doctor warns)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except FileNotFoundError:
        if not create:
            raise
        raise DeployError(f"deploy.lock_dir: cannot create a lock in {directory}: it was removed",
                          hint="set deploy.lock_dir to a writable directory") from None
    except OSError as exc:
        raise DeployError(f"deploy.lock_dir: cannot create a lock in {directory}: {exc.strerror}",
                          hint="set deploy.lock_dir to a writable directory") from None


def _holder(fd: int) -> str:
    """Return who holds the lock, as its file says ('pid N'). The holder writes it just after it took the lock:
    a file still empty is read again for up to half a second before the holder is called 'another process'."""
    for _ in range(50):
        text = os.pread(fd, 64, 0).decode(errors="replace").strip()
        if text:
            return text
        time.sleep(0.01)
    return "another process"


def _still_named(fd: int, path: Path) -> bool:
    try:
        return os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


@contextmanager
def subdomain_lock(lock_dir: str | Path, subdomain: str, *, wait: float = 0.0, create: bool = True
                   ) -> Iterator[Path]:
    """Hold the lock of `subdomain`, waiting up to `wait` seconds; raise LockBusy when another run holds it.
    Without `create`, only an existing lock file is taken (FileNotFoundError when there is none)."""
    directory = Path(lock_dir)
    path = directory / f"{subdomain}.lock"
    deadline = time.monotonic() + wait
    while True:
        fd = _open(directory, path, create)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:  # who holds it is read only to say so (a retry need not know)
                holder = _holder(fd)
                os.close(fd)
                raise LockBusy(f"{subdomain} is being deployed or torn down by {holder} ({path})",
                               hint="wait for it to finish, or pass --wait SECONDS") from None
            os.close(fd)
            time.sleep(0.1)
            continue
        if _still_named(fd, path):
            break
        os.close(fd)  # the holder removed the file after we opened it: take the lock of the current one
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still holding it: whoever opens the name next makes a new file
        os.close(fd)  # closing the descriptor releases the lock


def sweep(lock_dir: str | Path, prefix: str = "") -> list[str]:
    """Remove the lock files no run holds (left by a run that was SIGKILLed) whose names start with `prefix`;
    return their names. A lock some run holds is left alone."""
    directory = Path(lock_dir)
    removed = []
    for path in sorted(directory.glob("*.lock")) if directory.is_dir() else ():
        name = path.name.removesuffix(".lock")
        if not name.startswith(prefix):
            continue
        try:
            # Taking it and letting go removes the file. Never made here: a file its holder removed since the
            # listing must not come back, locked by this sweep, in the way of the name's next run.
            with subdomain_lock(directory, name, create=False):
                removed.append(name)
        except (LockBusy, FileNotFoundError):
            continue
    return removed
