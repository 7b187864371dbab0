"""Per-subdomain deploy locks: an fcntl lock on a file in deploy.lock_dir, released when the process ends."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graphsite.errors import DeployError


@contextmanager
def subdomain_lock(lock_dir: str | Path, subdomain: str, *, wait: float = 0.0) -> Iterator[Path]:
    """Hold the lock of `subdomain`, waiting up to `wait` seconds; raise DeployError when another run holds it."""
    directory = Path(lock_dir)
    path = directory / f"{subdomain}.lock"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise DeployError(f"deploy.lock_dir: cannot create a lock in {directory}: {exc.strerror}",
                          hint="set deploy.lock_dir to a writable directory") from None
    deadline = time.monotonic() + wait
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                    raise DeployError(f"{subdomain} is being deployed or torn down by {holder} ({path})",
                                      hint="wait for it to finish, or pass --wait SECONDS") from None
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the lock
