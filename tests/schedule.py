"""How the suite's tests share the one lab, under xdist (scripts/test runs `-n 3`) and without it.

Every module with a test that uses the lab, or that starts, stops or stalls Docker daemons and lab instances of
its own on the machine's one dockerd, is in LAB_MODULES. Their tests run in three units of work, each in one
worker, one test at a time:

- `lab-alone`: the tests in LAB_ALONE change what every other lab test relies on (the fake Cloudflare's one fault
  slot and its latency, a stalled fake Cloudflare or dockerd, an unparsable route file, a restarted edge, a cleanup
  or a check over the whole lab, failed requests counted under load). Each holds the lab alone: no other lab test
  runs meanwhile.
- `lab-a` and `lab-b` (LAB_B: about half of the time): every other lab test, holding the lab shared, so one of
  each unit runs at once. Each test's names are its own (a prefix per session, a name per test).

`LabTurns` is that rule between processes: two file locks in the lab's directory. Every other module is a unit
of its own (its module-scoped browser or fake Cloudflare starts once) and runs beside them; OWN_LABS are lab
tests with a lab of their own, in private namespaces, that touch nothing of the shared one.

A lab test outside LAB_MODULES, or a test that shows the signs of changing the shared lab (ALONE_SIGNS) outside
LAB_ALONE, stops the run at collection (`misplaced`).
"""

from __future__ import annotations

import fcntl
import inspect
import re
from pathlib import Path
from typing import IO

import pytest

LAB_MODULES = ("tests/lab/test_cluster.py", "tests/lab/test_edge.py",
               "tests/lab/test_lifecycle.py", "tests/ops/test_doctor_lab.py", "tests/ops/test_readme.py",
               "tests/publisher/cluster/", "tests/publisher/test_adapter_errors.py", "tests/publisher/test_lab_",
               "tests/reliability/")
LAB_ALONE = (
    "tests/reliability/test_cloudflare_faults.py",  # stops the fake Cloudflare; its fault slot
    "tests/reliability/test_cloudflare_lies.py",  # its fault slot, lies on the zone-wide listing
    "tests/reliability/test_docker_stall.py",  # stops dockerd
    "tests/reliability/test_signals.py",  # stops the fake Cloudflare
    "tests/publisher/test_lab_failures.py::test_throttling_is_retried",  # the fault slot
    "tests/publisher/test_lab_failures.py::test_server_errors_past_the_retries",
    "tests/publisher/test_lab_routes.py::test_an_unparsable_file",  # blocks every deploy while it is there
    "tests/lab/test_edge.py",  # restarts the edge; its cleanup removes every lab-test service
    "tests/ops/test_doctor_lab.py",  # checks the whole lab; the fault slot
    "tests/ops/test_readme.py",  # lists everything; gc --dry-run over everything
    # Count failed requests under constant load through the edge: the lab's edge (Caddy) reloads its whole
    # configuration on any other test's route change and may close a connection it is accepting (docs/lab.md).
    "tests/publisher/test_lab_versions.py",
    "tests/publisher/test_lab_redeploy.py::test_redeploy_under_constant_requests",
)
# The shared lab tests of the second unit (the others are in `lab-a`), chosen for an even split of their time.
LAB_B = ("tests/publisher/test_lab_routes.py", "tests/reliability/test_concurrency.py",
         "tests/reliability/test_property.py", "tests/lab/test_lifecycle.py")
# Modules whose module-scoped fixture keeps lab work running between their tests (test_kill's pool of kill
# scenarios, four at a time): a worker keeps the lab shared from their first test to their last.
LAB_SPANS = ("tests/reliability/test_kill.py",)
# Waits for a three-node lab of its own, in private namespaces (tests/lab/conftest.py): it holds no turn.
CLUSTER_TEST = "tests/lab/test_cluster.py"
OWN_LABS = ("tests/lab/test_cold.py",)
# Fixtures that make lab instances on the machine's one dockerd without the `lab` fixture (tests/lab/conftest.py):
# a test using one must live in LAB_MODULES too.
DOCKERD_FIXTURES = ("run_lab", "isolated_instance")
# What a test (or a fixture it uses) does when it changes the shared lab for everyone: a fault or latency set on
# the fake Cloudflare (clearing one, `fail_next(0)`, is not) or its records reset, a daemon stopped, the edge
# restarted or stopped, requests sent without pause to count the failed ones (a `hammer`).
ALONE_SIGNS = re.compile(r"\.(fail_next|lie_next|latency)\((?!0\))|\bstopped\(|\b(dockerd|cloudflare)_pid\("
                         r'|cloudflare_quiet\(|docker\(\s*"(restart|stop|kill)"|\bSIGSTOP\b|cloudflare\.reset\('
                         r"|\bhammer\b|\b_hammer\b")
UNITS = ("lab-alone", "lab-a", "lab-b")  # first in the run: the lab's units are its critical path
# The shared units are handed out once `lab-alone` has no more than this many tests left: a worker that took one
# earlier would only wait at the gate, where it could have run other modules.
ALONE_TAIL = 4


def in_lab(nodeid: str) -> bool:
    return nodeid.startswith(LAB_MODULES)


def unit_of(nodeid: str) -> str:
    """Return the unit of work of a test: one of UNITS for the lab's tests, its module for any other."""
    module = nodeid.split("::", 1)[0]
    if not in_lab(module):
        return module
    if nodeid.startswith(LAB_ALONE):
        return "lab-alone"
    return "lab-b" if module.startswith(LAB_B) else "lab-a"


def next_unit(queued: list[str], alone_left: int | None) -> str:
    """Return the unit to hand to a worker asking for work, of those `queued` (in the collection's order):
    `lab-alone` first, the shared lab units once it is nearly done (`alone_left` tests, None when it never was
    queued) or when nothing else is left, any other module meanwhile."""
    lab = [unit for unit in queued if unit in UNITS]
    others = [unit for unit in queued if unit not in UNITS]
    if "lab-alone" in lab:
        return "lab-alone"
    if lab and (alone_left is None or alone_left <= ALONE_TAIL or not others):
        return lab[0]
    return others[0] if others else queued[0]


def run_order(item: pytest.Item) -> tuple[int, bool]:
    """Sort key of the collection: the lab's units first (in that order the scheduler hands them out), the cluster
    test last of its unit (it waits for a lab started in the background when its unit begins)."""
    unit = unit_of(item.nodeid)
    return (UNITS.index(unit) if unit in UNITS else len(UNITS), item.nodeid.startswith(CLUSTER_TEST))


def misplaced(items: list[pytest.Item]) -> list[str]:
    """Return what is wrong with the collection's placement of lab tests, one line each."""
    wrong = []
    for item in items:
        names = getattr(item, "fixturenames", ())
        shares_dockerd = any(name in DOCKERD_FIXTURES for name in names)
        if (item.get_closest_marker("lab") is not None or shares_dockerd) \
                and not item.nodeid.startswith((*LAB_MODULES, *OWN_LABS)):
            wrong.append(f"{item.nodeid}: a lab or dockerd test outside LAB_MODULES; add its module there")
        elif in_lab(item.nodeid) and not item.nodeid.startswith(LAB_ALONE) and (sign := _alone_sign(item)):
            wrong.append(f"{item.nodeid}: needs the lab alone ({sign!r}) but is outside LAB_ALONE; add it there")
    return wrong


def _alone_sign(item: pytest.Item) -> str:
    """Return the first of ALONE_SIGNS in the source of the test or of a fixture of the suite it uses."""
    functions = [getattr(item, "function", None)]
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    for definitions in (fixtureinfo.name2fixturedefs.values() if fixtureinfo else ()):
        functions += [definition.func for definition in definitions]
    for function in functions:
        try:
            source, where = inspect.getsource(function), inspect.getsourcefile(function) or ""
        except (OSError, TypeError):
            continue
        if "/tests/" in where and (found := ALONE_SIGNS.search(source)):
            return found.group(0)
    return ""


class LabTurns:
    """The lab held alone or shared by this process's tests, writer first: a test of LAB_ALONE takes the gate, then
    the room alone (new shared tests wait at the gate, the running ones finish); a shared test passes the gate and
    holds the room shared. Consecutive tests of LAB_ALONE keep the room between them, as do the tests of a module
    of LAB_SPANS. Without a lab directory (no lab: its tests skip or fail on their own) nothing is held."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.held = ""  # "alone", "shared" or ""
        self.used = False  # a lab test ran here: the session's lab fixtures end at this process's last test
        self._files: dict[str, IO[bytes]] = {}

    def wanted(self, item: pytest.Item, last: bool) -> str:
        if item.nodeid.startswith(LAB_ALONE):
            return "alone"
        if (in_lab(item.nodeid) and not item.nodeid.startswith(CLUSTER_TEST)) or (last and self.used):
            return "shared"
        return ""

    def before(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        want = self.wanted(item, nextitem is None)
        self.used = self.used or bool(want)
        if want != self.held:
            self.release()
            if want and self.directory.is_dir():
                self._take(want)

    def after(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        module = item.nodeid.split("::", 1)[0]
        if nextitem is not None and nextitem.nodeid.split("::", 1)[0] == module and module.startswith(LAB_SPANS):
            return  # the module's work goes on between its tests
        if self.held == "shared" or nextitem is None or self.wanted(nextitem, False) != "alone":
            self.release()

    def finishing(self) -> None:
        """The session's fixtures end: hold the lab shared for it if a lab test ran here (a run stopped early,
        by -x or Ctrl-C, ends them here rather than in its last test)."""
        if self.used and not self.held and self.directory.is_dir():
            self._take("shared")

    def _file(self, name: str) -> IO[bytes]:
        if name not in self._files:
            self._files[name] = (self.directory / f"tests-{name}.lock").open("ab")
        return self._files[name]

    def _take(self, mode: str) -> None:
        gate, room = self._file("gate"), self._file("room")
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(room, fcntl.LOCK_EX if mode == "alone" else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        self.held = mode

    def release(self) -> None:
        if self.held:
            fcntl.flock(self._file("room"), fcntl.LOCK_UN)
            self.held = ""
