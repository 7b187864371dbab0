"""Starting the lab's long-running processes (dockerd, a worker's dockerd, the fake Cloudflare, the routes
watcher): in the background, in a session of their own, output appended to a log file, and waited for until
they answer."""

from __future__ import annotations

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
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LabError(f"{what} exited with status {process.returncode}", hint=f"read {log_path}")
        if ready(process):
            return process.pid
        time.sleep(poll)
    _stop(process)  # one that never answered is not left running for the next `up` to stumble on
    raise LabError(late, hint=f"read {log_path}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
