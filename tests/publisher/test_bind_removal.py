"""Removing a page directory of content mode `bind` when the world moves under it: a directory renamed into its
place while it is emptied, a folder the filesystem will not let go (EPERM of an append-only parent), a
temporary that holds more than a deploy puts there or was rewritten since it was judged, names nobody should see
raw on a terminal, a link where v/ is. Real directories under tmp_path; the other hand is a real second process
(an audit hook that acts at the step) or the filesystem itself (chattr). tests/publisher/test_bind.py has the
rest of the removal's rules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphsite.errors import DeployError
from graphsite.publisher import bind, bind_removal
from graphsite.publisher.deployment import Stamp

# Bind mode chowns the page to uid 1000, as production does; chattr needs root too.
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bind mode chowns to uid 1000: run as root")

STAMP = Stamp("gs-bind", "gs-bind.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z", "2026-07-08T12:00:00Z")
SHA12 = "a" * 12


def _deployed(root: Path) -> Path:
    """Return gs-bind's page directory under `root`, with two kept versions."""
    directory = root / "gs-bind"
    bind.ensure_bind_dir(directory, b"<p>live</p>", STAMP, "c" * 64)
    for sha12 in (SHA12, "b" * 12):
        bind.keep_version(directory, sha12, b"<p>kept</p>", STAMP.marker("a" * 64))
    return directory


def _tree(directory: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in directory.rglob("*")}


def test_a_stray_name_is_shown_escaped_on_one_line_whatever_bytes_it_holds(tmp_path):
    """Before, the names of strays went into the refusal raw: one that is no UTF-8 made a UnicodeEncodeError
    traceback on a strict UTF-8 stdout, an escape sequence reached the terminal, a newline cut the advice off.
    Now each is shown as a title is: as it is when printable, else quoted with what is not escaped."""
    directory = _deployed(tmp_path)
    os.close(os.open(bytes(directory) + b"/notes\xff", os.O_CREAT | os.O_WRONLY))
    (directory / "esc\x1b[2Jname").write_text("x")
    (directory / "two\nlines").write_text("x")
    with pytest.raises(DeployError) as refused:
        bind_removal.remove_bind_dir(directory, STAMP)
    message = refused.value.message
    assert message == (f"{directory}: not removed: graphsite did not put 'esc\\x1b[2Jname', 'notes\\udcff', "
                       "'two\\nlines' there; left in place with its marker: move them out of it, then run "
                       "`graphsite teardown gs-bind` again")
    shown = subprocess.run([sys.executable, "-c", "import sys; print(sys.argv[1])", message], capture_output=True,
                           env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"}, check=False)
    assert shown.returncode == 0 and shown.stdout.decode() == message + "\n", shown.stderr
