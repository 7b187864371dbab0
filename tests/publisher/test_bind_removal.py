"""Removing a page directory of content mode `bind` when the world moves under it: a directory renamed into its
place while it is emptied, a folder the filesystem will not let go (EPERM of an append-only parent), a
temporary that holds more than a deploy puts there or was rewritten since it was judged, names nobody should see
raw on a terminal, a link where v/ is. Real directories under tmp_path; the other hand is a real second process
(an audit hook that acts at the step) or the filesystem itself (chattr). tests/publisher/test_bind.py has the
rest of the removal's rules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from graphsite.errors import DeployError
from graphsite.publisher import bind, bind_removal
from graphsite.publisher.deployment import MARKER, Stamp
from tests.publisher.nobody import as_nobody

# Bind mode chowns the page to uid 1000, as production does; chattr needs root too.
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bind mode chowns to uid 1000: run as root")

STAMP = Stamp("gs-bind", "gs-bind.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z", "2026-07-08T12:00:00Z")
OTHER = Stamp("gs-bind", "gs-bind.example.com", "99999999", "2026-07-02T12:00:00Z", "2026-07-09T12:00:00Z")
SHA12 = "a" * 12


def _deployed(root: Path) -> Path:
    """Return gs-bind's page directory under `root`, with two kept versions."""
    directory = root / "gs-bind"
    bind.ensure_bind_dir(directory, b"<p>live</p>", STAMP, "c" * 64, bind.page_directory(directory))
    for sha12 in (SHA12, "b" * 12):
        bind.keep_version(directory, sha12, b"<p>kept</p>", STAMP.marker("a" * 64))
    return directory


def _tree(directory: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in directory.rglob("*")}


_SWAP = """
import os, sys
from pathlib import Path
from graphsite.errors import DeployError
from graphsite.publisher import bind, bind_removal
directory, at, version = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
folder = directory / "v" / version if version else directory
stamp, done = bind.bind_stamp(directory), []
def swap(event, args):  # another hand renames the folder away and puts its own in its place, at that unlink
    if event == "os.remove" and args[0] == at and not done:
        done.append(1)
        os.rename(folder, folder.with_name("moved"))
        folder.mkdir()
        (folder / "index.html").write_text("the operator's page")
        (folder / ".graphsite").write_text(sys.argv[4])
sys.addaudithook(swap)
try:
    if version:
        bind_removal.remove_version(directory, version)
    else:
        bind_removal.remove_bind_dir(directory, stamp)
except DeployError as exc:
    print(exc.message)
"""


@pytest.mark.parametrize("version, at", [("", "index.html"), ("", MARKER), (SHA12, "index.html")])
def test_a_folder_renamed_into_the_place_of_the_one_being_emptied_is_never_touched(tmp_path, version, at):
    """Before, every step found the directory again by name: a directory renamed into its place after the
    marker was judged was emptied instead (another's page and marker deleted), and the marker was written back
    into it. Now the folder is opened once and emptied through that descriptor; it is removed by name only
    while the name is still it. The newcomer stays as it came, the folder emptied keeps its marker, and the
    refusal is one line."""
    directory = _deployed(tmp_path)
    folder = directory / "v" / version if version else directory
    marker = (folder / MARKER).read_bytes()
    ran = subprocess.run([sys.executable, "-c", _SWAP, str(directory), at, version, OTHER.marker()],
                         capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    assert ran.stdout == (f"{folder}: not removed: another directory took its name while it was emptied; the one "
                          "emptied keeps its marker, the other is left as it is: look at both by hand\n")
    assert _tree(folder) == {"index.html": b"the operator's page", MARKER: OTHER.marker().encode()}
    moved = folder.with_name("moved")
    assert _tree(moved) == {MARKER: marker} and (moved / MARKER).stat().st_uid == bind.BIND_UID


@contextmanager
def _append_only(path: Path) -> Iterator[None]:
    """Make `path` append-only (chattr +a: nothing in it can be removed, EPERM) for the block."""
    subprocess.run(["chattr", "+a", str(path)], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-a", str(path)], check=True, capture_output=True)


def test_a_folder_the_filesystem_keeps_keeps_its_marker_and_a_rerun_finishes(tmp_path):
    """Before, the marker was written back only when the folder's rmdir said ENOTEMPTY: an EPERM (an
    append-only bind_root or v/) or an EBUSY left an emptied folder without its marker, which `list` no longer
    showed and teardown could never finish. Now any failure of the rmdir but "already gone" puts it back."""
    directory = _deployed(tmp_path)
    versions, marker = bind.version_markers(directory), (directory / MARKER).read_bytes()
    with _append_only(directory / "v"), pytest.raises(DeployError) as kept:
        bind_removal.remove_version(directory, SHA12)
    assert kept.value.detail == f"{directory / 'v' / SHA12}: cannot remove the version: Operation not permitted"
    assert bind.version_markers(directory) == versions and _tree(directory / "v" / SHA12) == {
        MARKER: versions[SHA12].encode()}
    with _append_only(tmp_path), pytest.raises(DeployError) as kept:
        bind_removal.remove_bind_dir(directory, STAMP)
    assert kept.value.detail == f"{directory}: cannot remove the page's directory: Operation not permitted"
    assert bind.bind_dirs(tmp_path) == {"gs-bind": (directory, STAMP)}  # what list reads
    assert _tree(directory) == {MARKER: marker}
    assert (directory / MARKER).stat().st_uid == bind.BIND_UID
    assert bind_removal.remove_bind_dir(directory, STAMP) is True and not directory.exists()


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


def test_a_file_named_like_a_killed_writes_temporary_but_not_by_graphsite_is_left_and_named(tmp_path):
    """Before, a page directory's file named `.index.html.<anything>.tmp` (or a v/ folder `.<sha12>.<anything>.tmp`)
    was taken for a killed write's temporary and removed with the directory. Now only a random part graphsite
    writes is its own: the lookalikes stay, named in the refusal, the directory whole with its marker; graphsite's
    own temporaries beside them are no strays, and once the lookalikes are moved out the removal finishes."""
    directory = _deployed(tmp_path)
    (directory / ".index.html.0123456789ab.tmp").write_text("")  # a killed write's, as new_temporary names it
    (directory / ".index.html.mine.tmp").write_text("an operator's")
    (directory / "v" / ".bbbbbbbbbbbb.backup.tmp").mkdir()
    before = _tree(directory)
    with pytest.raises(DeployError) as refused:
        bind_removal.remove_bind_dir(directory, STAMP)
    assert refused.value.detail == (f"{directory}: not removed: graphsite did not put .index.html.mine.tmp, "
                                    "v/.bbbbbbbbbbbb.backup.tmp there; left in place with its marker: move them out "
                                    "of it, then run `graphsite teardown gs-bind` again")
    assert _tree(directory) == before and bind.own_stamp(directory) == STAMP
    (directory / ".index.html.mine.tmp").rename(tmp_path / "mine")
    (directory / "v" / ".bbbbbbbbbbbb.backup.tmp").rename(tmp_path / "backup")
    assert bind_removal.remove_bind_dir(directory, STAMP) is True and not directory.exists()


def _temporary(root: Path) -> Path:
    """Return a temporary directory of gs-bind as a killed deploy leaves it: its marker and its page."""
    directory = root / "gs-bind"
    bind.ensure_bind_dir(directory, b"<p>live</p>", STAMP, "c" * 64, bind.page_directory(directory))
    return directory.rename(root / ".gs-bind.k1ll3d00.tmp")


def test_a_temporary_is_removed_only_as_it_was_judged_and_only_what_a_deploy_puts_there(tmp_path):
    """Before, remove_temporary judged nothing again: a temporary whose marker was rewritten since the survey
    (or that had none then) was removed, and one holding a whole v/<sha12>/ tree went whole. Now its marker must
    still be the stamp the survey read, and anything but the marker, the page and their temporaries is refused."""
    temporary = _temporary(tmp_path)
    before = _tree(temporary)
    for judged in (OTHER, None):
        with pytest.raises(DeployError) as changed:
            bind_removal.remove_temporary(temporary, judged)
        assert changed.value.detail == (f"{temporary}: a deploy's temporary directory whose marker changed since it "
                                        "was judged; left in place")
        assert _tree(temporary) == before
    kept = temporary / "v" / SHA12
    kept.mkdir(parents=True)
    (kept / "index.html").write_text("kept")
    with pytest.raises(DeployError) as refused:
        bind_removal.remove_temporary(temporary, STAMP)
    assert refused.value.detail == (f"{temporary}: not removed: graphsite did not put v there; left in place with "
                                    "its marker: move them out of it, then run `graphsite teardown gs-bind` again")
    assert _tree(temporary) == before | {"v": None, f"v/{SHA12}": None, f"v/{SHA12}/index.html": b"kept"}
    os.rename(temporary / "v", tmp_path / "v")
    assert bind_removal.remove_temporary(temporary, STAMP) is True and not temporary.exists()
    (tmp_path / ".gs-bind.3mpty000.tmp").mkdir()  # killed before its marker: judged with none, removed with none
    assert bind_removal.remove_temporary(tmp_path / ".gs-bind.3mpty000.tmp", None) is True


def test_a_temporary_judged_without_a_marker_is_left_when_one_that_does_not_parse_appeared(tmp_path):
    """Before, a temporary the survey saw with no marker was removed when a marker that does not parse (another
    release's, another's) had appeared since: neither stamp was there to compare. Now what is there must be what
    was judged: no marker at all."""
    temporary = tmp_path / ".gs-bind.0123456789ab.tmp"
    temporary.mkdir()
    (temporary / "index.html").write_text("half")
    assert bind.temporaries(tmp_path, "example.com")["gs-bind"][temporary].stamp is None
    (temporary / MARKER).write_text("graphsite:3 a marker this release cannot parse\n")
    before = _tree(temporary)
    with pytest.raises(DeployError) as changed:
        bind_removal.remove_temporary(temporary, None)
    assert changed.value.detail == (f"{temporary}: a deploy's temporary directory whose marker changed since it "
                                    "was judged; left in place")
    assert _tree(temporary) == before


def test_a_temporary_judged_without_a_marker_is_left_when_one_that_cannot_be_read_appeared():
    """Before, a marker that could not be read counted as none: a temporary the survey saw without one was
    removed, the marker that had appeared unlinked unread (unlinking needs the directory's rights, not the
    file's). Now a marker that cannot be read is a failed read, named, and nothing is removed."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        temporary = Path(base) / ".gs-bind.0123456789ab.tmp"
        temporary.mkdir()
        (temporary / "index.html").write_text("half")
        assert bind.temporaries(Path(base), "example.com")["gs-bind"][temporary].stamp is None
        (temporary / MARKER).write_text("not nobody's to read\n")
        (temporary / MARKER).chmod(0o600)  # root's: nobody may not read it
        temporary.chmod(0o777)  # but may unlink what is in the directory
        before = _tree(temporary)
        with as_nobody(), pytest.raises(DeployError) as unread:
            bind_removal.remove_temporary(temporary, None)
        assert unread.value.detail == f"{temporary / MARKER}: cannot read its marker: Permission denied"
        assert _tree(temporary) == before


def test_a_links_target_is_shown_escaped_in_a_refusal(tmp_path):
    """Before, the target of a link where graphsite keeps its own folder went raw into the refusal: an escape
    sequence whoever made the link chose reached the terminal. Now it is shown as output.shown shows a name."""
    directory = _deployed(tmp_path)
    shutil.rmtree(directory / "v")
    (directory / "v").symlink_to("\x1b[2J\x1b[31mEVIL")
    _refused_for_a_linked_v(directory, "'\\x1b[2J\\x1b[31mEVIL'")
    (tmp_path / "gs-linked").symlink_to("\x07bell")  # where a page directory goes: said by link_said
    with pytest.raises(DeployError) as linked:
        bind_removal.remove_bind_dir(tmp_path / "gs-linked", STAMP)
    assert linked.value.detail.startswith(f"{tmp_path / 'gs-linked'} is a symbolic link to '\\x07bell', where")


def test_a_link_where_v_is_is_named_in_the_refusal_to_remove_a_version(tmp_path):
    """Before, a v/ that is a symbolic link made remove_version say the version was "no directory any more";
    now the refusal names the link and leaves it, its target untouched."""
    directory = _deployed(tmp_path)
    outside = tmp_path / "outside"
    os.rename(directory / "v", outside)
    (directory / "v").symlink_to(outside)
    _refused_for_a_linked_v(directory, str(outside))
    assert (outside / SHA12 / "index.html").read_bytes() == b"<p>kept</p>"


def _refused_for_a_linked_v(directory: Path, said: str) -> None:
    """Assert remove_version refuses a version of `directory` whose v/ is a link, its target said as `said`."""
    with pytest.raises(DeployError) as refused:
        bind_removal.remove_version(directory, SHA12)
    assert refused.value.detail == (
        f"{directory / 'v' / SHA12}: not removed: {directory / 'v'} is a symbolic link to {said}, not something "
        "graphsite made: left as it is, the target untouched (graphsite never follows a link); remove the link by "
        "hand if it is not needed")
