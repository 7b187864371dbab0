"""Per-subdomain locks: an fcntl lock on `deploy.lock_dir/NAME.lock`, held while a run changes NAME.

The lock file is removed when the run ends, so the directory does not grow with every name ever used. A
process that opened the file before it was removed may then hold a lock on a file that no longer has that name;
so after taking the lock, a run checks that the name still leads to the file it locked, and tries again if not.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from graphsite.errors import DeployError
from graphsite.labels import is_label

_PID = re.compile(rb"(pid [0-9]{1,10})?")  # what a run writes in its lock file (empty: killed before it wrote)


class LockBusy(DeployError):
    """Another run holds the name's lock."""


def _open(directory: Path, path: Path, create: bool) -> int:
    """Open the lock file: made when `create` (DeployError when it cannot be); else only an existing one, any
    OSError raised as it is (FileNotFoundError when there is none)."""
    if not create:
        return os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    try:
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)  # others may not add locks (doctor warns)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except FileNotFoundError:
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


def _take(directory: Path, path: Path, subdomain: str, wait: float, create: bool) -> int:
    """Return a descriptor of the lock file at `path`, locked, and still named `path`; raise LockBusy when
    another run holds it after `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        fd = _open(directory, path, create)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                if time.monotonic() >= deadline:  # who holds it is read only to say so (a retry need not know)
                    raise LockBusy(f"{subdomain} is being deployed or torn down by {_holder(fd)} ({path})",
                                   hint="wait for it to finish, or pass --wait SECONDS") from None
            finally:
                os.close(fd)
            time.sleep(0.1)
            continue
        except BaseException:
            os.close(fd)  # a failure to lock (ENOLCK on a network file system): no descriptor left open
            raise
        try:
            named = _still_named(fd, path)
        except BaseException:
            os.close(fd)
            raise
        if named:
            return fd
        os.close(fd)  # the holder removed the file after we opened it: take the lock of the current one


@contextmanager
def subdomain_lock(lock_dir: str | Path, subdomain: str, *, wait: float = 0.0) -> Iterator[Path]:
    """Hold the lock of `subdomain`, waiting up to `wait` seconds; raise LockBusy when another run holds it."""
    directory = Path(lock_dir)
    path = directory / f"{subdomain}.lock"
    fd = _take(directory, path, subdomain, wait, create=True)
    try:
        _say_held(fd)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still holding it: whoever opens the name next makes a new file
        os.close(fd)  # closing the descriptor releases the lock


def _say_held(fd: int) -> None:
    """Write who holds the locked file `fd` (`pid N`), for a run refused meanwhile to read."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)


@dataclass(frozen=True)
class Swept:
    """What a sweep did: the names whose stale lock file it removed, and every entry it left, with why."""

    removed: tuple[str, ...] = ()
    left: tuple[tuple[Path, str], ...] = ()  # (path, why): not a lock file graphsite made, or not readable


def sweep(lock_dir: str | Path, prefix: str = "") -> Swept:
    """Remove the lock files no run holds (left by a run that was SIGKILLed) whose names start with `prefix`.
    Only entries named as graphsite names a lock (`NAME.lock`, NAME a DNS label) are looked at: anything else in
    the directory (another program's lock in a shared /run/lock) is never touched nor named. Each is judged on its
    own: a lock some run holds is left alone; one that is not like a lock file graphsite makes (a directory, a
    symbolic link, another user's file, other content) or cannot be opened is left and named, and the sweep goes
    on."""
    directory = Path(lock_dir)
    try:
        entries = sorted(entry for entry in os.listdir(directory) if entry.endswith(".lock"))
    except FileNotFoundError:
        return Swept()  # no lock directory: no run has left a lock in it
    except OSError as exc:
        return Swept(left=((directory, f"cannot list it: {exc.strerror}"),))
    removed, left = [], []
    for entry in entries:
        name = entry.removesuffix(".lock")
        if not name.startswith(prefix) or not is_label(name):
            continue
        try:
            why = _remove_stale(directory, name)
        except (LockBusy, FileNotFoundError):  # a run holds it, or its holder removed it since the listing
            continue
        if why:
            left.append((directory / entry, why))
        else:
            removed.append(name)
    return Swept(tuple(removed), tuple(left))


def _remove_stale(directory: Path, name: str) -> str:
    """Remove `name`'s lock file if no run holds it and it is like one graphsite makes: a regular file of this
    user, empty or saying `pid N`. Return '' when removed, else why it was left; raise LockBusy when a run holds
    it, FileNotFoundError when it is gone."""
    path = directory / f"{name}.lock"
    try:
        why = _not_a_lock(os.lstat(path))  # judged before it is opened: a fifo or a device is never opened
    except FileNotFoundError:
        raise
    except OSError as exc:
        return f"cannot look at it: {exc.strerror}"
    if why:
        return why
    try:
        # never made here: a file its holder removed since the listing must not come back, locked by this
        # sweep, in the way of the name's next run
        fd = _take(directory, path, name, 0.0, create=False)
    except FileNotFoundError:
        raise
    except OSError as exc:
        return f"cannot open it: {exc.strerror}"
    try:
        why = _not_a_lock(os.fstat(fd))  # the file that was locked, not whatever the name led to before
        text = os.pread(fd, 64, 0)
        if not why and not _PID.fullmatch(text):  # what it holds is not shown: it may be anything of anyone's
            why = f"not a lock file graphsite made: it holds {len(text)}{'+' if len(text) == 64 else ''} bytes " \
                  "that are not 'pid N'"
        if not why:
            _say_held(fd)  # a run refused meanwhile is told who holds it: this sweep, not the dead run
            try:
                os.unlink(path)  # while still holding it, as a run that ends does
            except OSError:
                os.ftruncate(fd, 0)  # left as it was found
                os.pwrite(fd, text, 0)
                raise
        return why
    except OSError as exc:
        return f"cannot remove it: {exc.strerror}"
    finally:
        os.close(fd)


def _not_a_lock(facts: os.stat_result) -> str:
    """Return why the entry `facts` describe is not a lock file graphsite made, or ''."""
    if stat.S_ISLNK(facts.st_mode):
        return "not a lock file graphsite made: a symbolic link (graphsite follows none)"
    if stat.S_ISDIR(facts.st_mode):
        return "not a lock file graphsite made: a directory"
    if not stat.S_ISREG(facts.st_mode):
        return "not a lock file graphsite made: not a regular file"
    if facts.st_uid != os.geteuid():
        return f"owned by uid {facts.st_uid}, not this user (uid {os.geteuid()}): left to its owner"
    return ""
