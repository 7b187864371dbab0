"""The page's directory in content mode `bind`, on the real file system: it never exists without its marker,
even when the deploy making it is killed (SIGKILL of a real process), and what a kill leaves is found by name
and by content, never a user's directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphsite.atomic import TEMPORARY_SUFFIX, temporary_prefix
from graphsite.errors import DeployError
from graphsite.publisher import bind
from graphsite.publisher.deployment import MARKER, Stamp

# Bind mode chowns the page to uid 1000, as production does: root only (CI and `make test` run as root).
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bind mode chowns to uid 1000: run as root")

STAMP = Stamp("gs-bind", "gs-bind.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z", "2026-07-08T12:00:00Z")


def _stamp(name: str) -> Stamp:
    return Stamp(name, f"{name}.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z")


_FILLER = """
import sys
from pathlib import Path
from graphsite.publisher.bind import ensure_bind_dir
from graphsite.publisher.deployment import Stamp
root, page = Path(sys.argv[1]), b"<p>page</p>" * 200_000
print("ready", flush=True)
for turn in range(100_000):
    stamp = Stamp(f"gs-{turn}", f"gs-{turn}.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z")
    ensure_bind_dir(root / f"gs-{turn}", page, stamp, "0" * 64)
    print("made", flush=True)
"""


def test_a_new_directory_appears_whole_with_its_marker_and_its_page(tmp_path):
    directory = tmp_path / "root" / STAMP.name
    assert bind.ensure_bind_dir(directory, b"<p>one</p>", STAMP, "a" * 64) is True
    assert (directory / "index.html").read_bytes() == b"<p>one</p>" and bind.bind_stamp(directory) == STAMP
    assert directory.stat().st_uid == 1000 and oct(directory.stat().st_mode & 0o777) == "0o755"
    assert bind.ensure_bind_dir(directory, b"<p>two</p>", STAMP, "b" * 64) is False
    assert (directory / "index.html").read_bytes() == b"<p>two</p>"
    assert sorted(p.name for p in directory.parent.iterdir()) == [STAMP.name]  # no temporary directory left


def test_a_deploy_killed_while_filling_its_directory_leaves_none_without_a_marker(tmp_path):
    """Before, the directory was made first and its marker written next: a kill between the two left a
    directory list did not show and a rerun refused ('graphsite did not make it'). Real SIGKILLs of a process
    making directories of a 2 MB page in a loop, each after it made a few (however slow the disk), at varied
    moments of the next one."""
    root = tmp_path / "root"
    root.mkdir()
    for round_ in range(6):
        process = subprocess.Popen([sys.executable, "-c", _FILLER, str(root / str(round_))], stdout=subprocess.PIPE,
                                   text=True)
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        for _ in range(round_ % 3 + 1):
            assert process.stdout.readline() == "made\n"
        time.sleep(0.002 * round_)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finished = 0
    for parent in root.iterdir():
        found = {path for paths in bind.temporaries(parent).values() for path in paths}
        for directory in parent.iterdir():
            if directory.name.startswith("."):
                assert directory in found, f"{directory} is left and nothing would find it"
            else:
                assert bind.bind_stamp(directory) == _stamp(directory.name), directory
                finished += 1
        for path in found:
            assert bind.remove_temporary(path) and not path.exists()
    assert finished > 0, "no directory was ever finished: the kill came too early to test anything"


def test_only_a_killed_deploys_own_temporary_directories_are_found(tmp_path):
    def make(name: str, *files: str, marker_for: str = "") -> Path:
        path = tmp_path / name
        path.mkdir()
        for file in files:
            (path / file).write_text("x")
        if marker_for:
            (path / MARKER).write_text(_stamp(marker_for).marker())
        return path

    page_temporary = temporary_prefix(Path("index.html")) + "abc" + TEMPORARY_SUFFIX
    empty = make(".gs-a.k3j2" + TEMPORARY_SUFFIX)
    half = make(".gs-b.x9" + TEMPORARY_SUFFIX, page_temporary, marker_for="gs-b")
    make(".gs-c.x9" + TEMPORARY_SUFFIX, "notes.txt")  # a file graphsite never writes there: not ours
    make(".gs-d.x9" + TEMPORARY_SUFFIX, marker_for="gs-other")  # the marker names another deployment
    make(".gs-e" + TEMPORARY_SUFFIX)  # no random part: not a name mkdtemp gives
    make("gs-f")
    (tmp_path / (".gs-g.x9" + TEMPORARY_SUFFIX)).symlink_to(empty)
    whole = make("gs-h", marker_for="gs-h")
    foreign = make("gs-i", marker_for="gs-other")
    assert bind.temporaries(tmp_path) == {"gs-a": [empty], "gs-b": [half]}
    # A temporary directory holds a marker too: it is no deployment of its own (list showed `.gs-b.x9.tmp`).
    # One judgement for list, list NAME, teardown and deploy: the marker must name the directory.
    assert bind.bind_dirs(tmp_path) == {"gs-h": (whole, _stamp("gs-h"))}
    assert not bind.made_by_graphsite(foreign) and not bind.made_by_graphsite(half)
    with pytest.raises(DeployError, match="graphsite did not make it"):
        bind.remove_bind_dir(foreign)


def test_gc_says_why_a_name_left_only_temporary_files_is_collected(tmp_path):
    from datetime import UTC, datetime

    from graphsite.publisher.gc import reason
    from graphsite.publisher.inventory import Holding

    held = Holding("gs-a", "gs-a.example.org", temporary_dirs=(tmp_path / ".gs-a.x.tmp",),
                   stamps=(_stamp("gs-a"),))
    assert reason(held, datetime(2026, 7, 1, 13, tzinfo=UTC), 900) == \
        "partial for over 15 min (no service, route, record, directory; temporary files left)"
