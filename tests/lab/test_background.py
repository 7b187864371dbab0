"""The lab's long-running processes are started by one function: a process that never answers, or whose
readiness check fails, is stopped with its whole session (real processes, no lab needed)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from graphsite_lab import LabError
from graphsite_lab.background import start


def _gone(pid: int, within: float = 5.0) -> bool:
    """Return True once `pid` has exited: no such process, or a zombie (the orphaned child is reaped by init
    whenever init gets round to it, which took up to 2 s here; it had ended long before)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
                return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.05)
    return False


def _appears(path, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.parametrize("ready", ["never", "fails"])
def test_a_process_that_never_answers_is_stopped_with_its_children(tmp_path, ready):
    """The shell ignores SIGTERM and keeps a child: only the KILL of its whole session ends them both."""
    child = tmp_path / "child.pid"
    argv = ["sh", "-c", f'trap "" TERM; sleep 60 & echo $! > {child}; while :; do sleep 1; done']
    seen: list[int] = []

    def check(process) -> bool:
        seen.append(process.pid)
        if ready == "never":  # not ready, once the shell has its child: a short wait cannot outrun a slow start
            assert _appears(child), "the shell did not start its child"
        elif child.exists():
            raise LabError("the readiness check itself failed")
        return False

    with pytest.raises(LabError, match="never answered" if ready == "never" else "check itself failed"):
        start(argv, tmp_path / "log", what="a shell", ready=check, wait=0.5 if ready == "never" else 60.0,
              late="a shell never answered", poll=0.05, grace=0.5)
    assert seen and child.exists()
    assert _gone(seen[0]) and _gone(int(child.read_text()))
