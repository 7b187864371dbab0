"""The suite's own rules for sharing the lab (tests/schedule.py): which unit a test runs in, and the turns between
processes, proven with real processes and real file locks (the lab's tests rely on them under xdist)."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.schedule import ALONE_TAIL, CLUSTER_TEST, LAB_ALONE, LAB_B, LAB_SPANS, LabTurns, next_unit, unit_of

ALONE = LAB_ALONE[0] + "::test_x"
SHARED = "tests/publisher/test_lab_lifecycle.py::test_x"


@pytest.mark.parametrize("nodeid, unit", [
    ("tests/reliability/test_docker_stall.py::test_x[content]", "lab-alone"),
    ("tests/publisher/test_lab_routes.py::test_an_unparsable_file_keeps_it", "lab-alone"),
    ("tests/publisher/test_lab_routes.py::test_the_route_file_alone_decides", "lab-b"),
    (LAB_B[-1] + "::test_x", "lab-b"),
    (SHARED, "lab-a"),
    ("tests/lab/test_cold.py::test_x", "tests/lab/test_cold.py"),
    ("tests/builder/test_markdown.py::test_x[a::b]", "tests/builder/test_markdown.py"),
])
def test_each_test_has_one_unit(nodeid, unit):
    assert unit_of(nodeid) == unit


@pytest.mark.parametrize("queued, alone_left, unit", [
    (["tests/a.py", "lab-alone", "lab-a", "lab-b"], ALONE_TAIL + 40, "lab-alone"),
    (["lab-a", "lab-b", "tests/a.py"], ALONE_TAIL + 1, "tests/a.py"),  # lab-a would only wait at the gate
    (["lab-a", "lab-b", "tests/a.py"], ALONE_TAIL, "lab-a"),
    (["lab-b"], ALONE_TAIL + 1, "lab-b"),  # nothing else to do
    (["tests/a.py", "lab-b"], None, "lab-b"),  # a run without lab-alone (-k, a file)
    (["tests/a.py", "tests/b.py"], 0, "tests/a.py"),
])
def test_the_lab_s_units_are_handed_out_alone_first_then_the_shared_ones_as_it_ends(queued, alone_left, unit):
    assert next_unit(queued, alone_left) == unit


def _turn(directory: str, nodeid: str, seconds: float, log: str) -> None:
    """In a process of its own: take the turn of `nodeid`, hold it `seconds`, and log when it was held."""
    turns = LabTurns(Path(directory))
    turns.before(SimpleNamespace(nodeid=nodeid), None)
    entered = time.monotonic()
    time.sleep(seconds)
    left = time.monotonic()
    turns.after(SimpleNamespace(nodeid=nodeid), None)
    with open(log, "a") as handle:
        handle.write(f"{os.getpid()} {entered} {left}\n")


def _start(tmp_path: Path, nodeid: str, seconds: float) -> multiprocessing.Process:
    process = multiprocessing.get_context("fork").Process(
        target=_turn, args=(str(tmp_path), nodeid, seconds, str(tmp_path / "log")))
    process.start()
    return process


def _held(tmp_path: Path, processes: list[multiprocessing.Process]) -> list[tuple[float, float]]:
    """Wait for the processes; return each one's (entered, left), in the order of `processes`."""
    for process in processes:
        process.join(20)
        assert process.exitcode == 0, process
    spans = {int(pid): (float(a), float(b)) for pid, a, b in
             (line.split() for line in (tmp_path / "log").read_text().splitlines())}
    return [spans[process.pid] for process in processes]


def _holds_lock(pid: int, path: Path, within: float = 10.0) -> None:
    """Return once `pid` holds a lock on `path` (/proc/locks), so that the next step starts behind it."""
    inode, deadline = os.stat(path).st_ino, time.monotonic() + within
    while time.monotonic() < deadline:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if str(pid) in fields and any(field.endswith(f":{inode}") for field in fields):
                return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} never held {path}")


def _free(path: Path) -> bool:
    """Whether no other open file holds a lock on `path` (tried from a file of its own, not blocking)."""
    with path.open("ab") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(probe, fcntl.LOCK_UN)
        return True


def test_shared_turns_overlap_and_an_alone_turn_waits_for_them_then_holds_the_lab_alone(tmp_path):
    for name in ("gate", "room"):  # there before the children, for _holds_lock to look at
        (tmp_path / f"tests-{name}.lock").touch()
    first, second = _start(tmp_path, SHARED, 3.0), _start(tmp_path, SHARED, 3.0)  # long enough to overlap
    _holds_lock(first.pid, tmp_path / "tests-room.lock")
    _holds_lock(second.pid, tmp_path / "tests-room.lock")
    alone = _start(tmp_path, ALONE, 0.5)
    _holds_lock(alone.pid, tmp_path / "tests-gate.lock")  # at the gate, waiting for the room
    late = _start(tmp_path, SHARED, 0.1)  # comes after the alone one: waits for it, though the room is shared now
    (a, b, c, d) = _held(tmp_path, [first, second, alone, late])
    assert a[0] < b[1] and b[0] < a[1], "two shared turns did not overlap"
    assert c[0] >= max(a[1], b[1]), "the alone turn began while a shared one held the lab"
    assert d[0] >= c[1], "a shared turn that came later passed the waiting alone turn"


def test_consecutive_alone_tests_keep_the_lab_and_the_last_test_of_a_lab_worker_holds_it_shared(tmp_path):
    turns, room = LabTurns(tmp_path), tmp_path / "tests-room.lock"
    alone, shared, plain = (SimpleNamespace(nodeid=n) for n in (ALONE, SHARED, "tests/test_values.py::test_x"))
    turns.before(alone, alone)
    turns.after(alone, alone)
    assert turns.held == "alone" and not _free(room)  # kept for the next alone test
    turns.before(alone, shared)
    turns.after(alone, shared)
    assert turns.held == "" and _free(room)
    turns.before(plain, None)  # the session's lab fixtures end after the last test: a shared turn for it
    assert turns.held == "shared" and not _free(room)
    turns.after(plain, None)
    assert turns.held == "" and _free(room)
    no_lab = LabTurns(tmp_path / "absent")  # no lab directory: its tests skip or fail; nothing to hold
    no_lab.before(shared, None)
    assert no_lab.held == "" and not (tmp_path / "absent").exists()


def test_a_module_whose_work_spans_its_tests_keeps_the_lab_shared_to_its_last_test(tmp_path):
    turns, room = LabTurns(tmp_path), tmp_path / "tests-room.lock"
    first, second = (SimpleNamespace(nodeid=f"{LAB_SPANS[0]}::test_{n}") for n in "ab")
    turns.before(first, second)
    turns.after(first, second)
    assert turns.held == "shared" and not _free(room)
    turns.before(second, None)
    turns.after(second, None)
    assert turns.held == "" and _free(room)
    cluster = SimpleNamespace(nodeid=CLUSTER_TEST + "::test_x")  # waits on a lab of its own
    turns.before(cluster, SimpleNamespace(nodeid=SHARED))
    assert turns.held == ""
