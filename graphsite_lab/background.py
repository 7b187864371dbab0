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

from graphsite_lab import LabError


def start(argv: list[str], log_path: Path, *, what: str, ready: Callable[[subprocess.Popen[bytes]], bool],
          wait: float, late: str, poll: float = 0.1, cwd: Path | None = None, grace: float = 10.0) -> int:
    """Start `argv` (its output appended to `log_path`); return its pid once `ready(process)`, or raise LabError
    when it exits first (naming `what`) or `wait` seconds pass (saying `late`; the process is stopped then). The
    log file is closed here once the child has its own descriptor. `grace`: seconds a stopped process gets
    between TERM and KILL."""
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
        _stop(process, grace)  # one that never answered (or whose check failed) is not left running for the next `up`
        raise


def terminate(pid: int, sig: int) -> None:
    """Send SIGTERM to `pid` alone (it stops its own children: dockerd its containerd, sudo its command), or
    SIGKILL to the whole session it leads (every process `start` made leads one), for what did not stop; a
    process already gone is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sig == signal.SIGKILL and os.getsid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def _stop(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """Stop the process: TERM, then after `grace` seconds KILL its whole session."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        terminate(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
