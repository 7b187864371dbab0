"""Starting the lab's long-running processes (dockerd, a worker's dockerd, the fake Cloudflare, the routes
watcher): in the background, in a session of their own, output appended to a log file, and waited for until
they answer."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from graphsite.lab import LabError


def start(argv: list[str], log_path: Path, *, what: str, ready: Callable[[subprocess.Popen[bytes]], bool],
          wait: float, late: str, poll: float = 0.1, cwd: Path | None = None) -> int:
    """Start `argv` (its output appended to `log_path`); return its pid once `ready(process)`, or raise LabError
    when it exits first (naming `what`) or `wait` seconds pass (saying `late`; the process is stopped then). The
    log file is closed here once the child has its own descriptor."""
    with log_path.open("ab") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, cwd=cwd)
    try:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise LabError(f"{what} exited with status {process.returncode}", hint=f"read {log_path}")
            if ready(process):
                return process.pid
            time.sleep(poll)
        raise LabError(late, hint=f"read {log_path}")
    except BaseException:
        _stop(process)  # one that never answered (or whose check failed) is not left running for the next `up`
        raise


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the process's whole session (it leads one: `sudo dockerd` is two processes), TERM then KILL."""
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
