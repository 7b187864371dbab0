"""The page's directory in content mode `bind`, on the real file system: it never exists without its marker,
even when the deploy making it is killed (SIGKILL of a real process), and what a kill leaves is found by name
and by content, never a user's directory."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from graphsite.atomic import TEMPORARY_SUFFIX, temporary_prefix
from graphsite.errors import DeployError, GraphsiteError, UnknownVersions
from graphsite.publisher import bind, bind_removal
from graphsite.publisher.deployment import MARKER, Claim, Leftover, PageDirectory, Stamp
from graphsite.publisher.stores import BindDirectories
from graphsite.usecases.deploy import DeployRequest, deploy
from graphsite.usecases.inventory import DIRECTORIES, SurveySettings, Unread, known, survey
from tests.publisher.fakes import Recorder, fake_world
from tests.publisher.nobody import as_nobody

# Bind mode chowns the page to uid 1000, as production does: root only (CI and `make test` run as root).
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bind mode chowns to uid 1000: run as root")

STAMP = Stamp("gs-bind", "gs-bind.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z", "2026-07-08T12:00:00Z")


def _stamp(name: str) -> Stamp:
    return Stamp(name, f"{name}.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z")


def _ensure(directory: Path, page: bytes, stamp: Stamp, sha256: str) -> bool:
    """Return what ensure_bind_dir returns when its caller looked at `directory` right before (as deploy does)."""
    return bind.ensure_bind_dir(directory, page, stamp, sha256, bind.page_directory(directory))


_FILLER = """
import sys
from pathlib import Path
from graphsite.publisher.bind import ensure_bind_dir
from graphsite.publisher.deployment import PageDirectory, Stamp
root, page = Path(sys.argv[1]), b"<p>page</p>" * 200_000
print("ready", flush=True)
for turn in range(100_000):
    stamp = Stamp(f"gs-{turn}", f"gs-{turn}.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z")
    ensure_bind_dir(root / f"gs-{turn}", page, stamp, "0" * 64, PageDirectory(root / f"gs-{turn}"))
    print("made", flush=True)
"""


def test_a_new_directory_appears_whole_with_its_marker_and_its_page(tmp_path):
    directory = tmp_path / "root" / STAMP.name
    assert _ensure(directory, b"<p>one</p>", STAMP, "a" * 64) is True
    assert (directory / "index.html").read_bytes() == b"<p>one</p>" and bind.bind_stamp(directory) == STAMP
    assert directory.stat().st_uid == 1000 and oct(directory.stat().st_mode & 0o777) == "0o755"
    assert _ensure(directory, b"<p>two</p>", STAMP, "b" * 64) is False
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
        found = {path for paths in bind.temporaries(parent, "example.com").values() for path in paths}
        for directory in parent.iterdir():
            if directory.name.startswith("."):
                assert directory in found, f"{directory} is left and nothing would find it"
            else:
                assert bind.bind_stamp(directory) == _stamp(directory.name), directory
                finished += 1
        for path in found:
            assert bind_removal.remove_temporary(path, bind.bind_stamp(path)) and not path.exists()
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

    page_temporary = temporary_prefix(Path("index.html")) + "0a1b2c3d4e5f" + TEMPORARY_SUFFIX
    empty = make(".gs-a.k3j2_k3j" + TEMPORARY_SUFFIX)  # mkdtemp's shape, of an earlier release
    half = make(".gs-b.0123456789ab" + TEMPORARY_SUFFIX, page_temporary, marker_for="gs-b")
    make(".gs-c.x9x9x9x9" + TEMPORARY_SUFFIX, "notes.txt")  # a file graphsite never writes there: not ours
    make(".gs-d.x9x9x9x9" + TEMPORARY_SUFFIX, marker_for="gs-other")  # the marker names another deployment
    make(".gs-e" + TEMPORARY_SUFFIX)  # no random part: not a name mkdtemp gives
    # a page temporary with a random part graphsite never writes: a file of someone else's, so not ours (removal,
    # which judges each file the same way, would refuse it)
    make(".gs-m.x9x9x9x9" + TEMPORARY_SUFFIX, temporary_prefix(Path("index.html")) + "mine" + TEMPORARY_SUFFIX)
    for chosen in ("\x1b[2J\x1b]0;owned\x07", "x9", "0123456789abc", "X9X9X9X9"):  # nor is what graphsite never writes
        make(f".gs-l.{chosen}" + TEMPORARY_SUFFIX)
    make("gs-f")
    (tmp_path / (".gs-g.x9x9x9x9" + TEMPORARY_SUFFIX)).symlink_to(empty)
    whole = make("gs-h", marker_for="gs-h")
    foreign = make("gs-i", marker_for="gs-other")
    staging = make(".gs-k.x9x9x9x9" + TEMPORARY_SUFFIX)  # another configuration's killed deploy, on a shared root
    (staging / MARKER).write_text(Stamp("gs-k", "gs-k.staging.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z")
                                  .marker())
    # killed before its marker, it names no domain yet: ours only beside a proven resource of its name
    assert bind.temporaries(tmp_path, "example.com") == {"gs-a": {empty: Leftover(Claim.UNFINISHED)},
                                                         "gs-b": {half: Leftover(Claim.OURS, _stamp("gs-b"))}}
    assert bind.temporaries(tmp_path, "staging.example.com")["gs-k"] == {
        staging: Leftover(Claim.OURS, Stamp("gs-k", "gs-k.staging.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z"))}
    # A temporary directory holds a marker too: it is no deployment of its own (list showed `.gs-b.0123456789ab.tmp`).
    # One judgement for list, list NAME, teardown and deploy: the marker must name the directory.
    assert bind.bind_dirs(tmp_path) == {"gs-h": (whole, _stamp("gs-h"))}
    assert not bind.made_by_graphsite(foreign) and not bind.made_by_graphsite(half)
    with pytest.raises(DeployError, match="graphsite did not make it"):
        bind_removal.remove_bind_dir(foreign, _stamp("gs-i"))


def test_gc_says_why_a_name_left_only_temporary_files_is_collected(tmp_path):
    from datetime import UTC, datetime

    from graphsite.usecases.gc import reason
    from graphsite.usecases.inventory import Holding

    held = Holding("gs-a", "gs-a.example.org", temporary_dirs=(tmp_path / ".gs-a.x.tmp",),
                   stamps=(_stamp("gs-a"),))
    assert reason(held, datetime(2026, 7, 1, 13, tzinfo=UTC), 900) == \
        "partial for over 15 min (no service, route, record, directory; temporary files left)"


def _state(directory: Path) -> tuple:
    """Return what a deploy must never change in a directory it does not own: owner, mode, every file's bytes."""
    status = directory.stat()
    return (status.st_uid, status.st_gid, status.st_mode,
            {p.name: (p.stat().st_uid, p.stat().st_mode, p.read_bytes()) for p in sorted(directory.iterdir())})


@pytest.fixture
def planted(tmp_path) -> tuple[Path, Path, tuple]:
    """A link `root/gs-x` to a directory outside the root that holds a marker for gs-x, owned by uid 4242, 0700:
    what a root deploy wrote into, chowned and chmodded before, and what teardown then failed on forever."""
    target, root = tmp_path / "outside", tmp_path / "root"
    target.mkdir()
    root.mkdir()
    (target / MARKER).write_text(Stamp("gs-x", "2026-07-01T12:00:00Z").marker())
    (target / "index.html").write_bytes(b"not graphsite's")
    for path in (target, target / MARKER, target / "index.html"):
        os.chown(path, 4242, 4242)
    target.chmod(0o700)
    (root / "gs-x").symlink_to(target)
    return root / "gs-x", target, _state(target)


def test_a_link_named_like_a_deployment_is_never_ours_even_with_a_marker_behind_it(planted):
    link, target, before = planted
    assert bind.bind_stamp(link) is None and bind.own_stamp(link) is None and not bind.made_by_graphsite(link)
    assert bind.bind_dirs(link.parent) == {} and bind.temporaries(link.parent, "example.com") == {}
    assert bind.read_page(link) is None
    assert _state(target) == before


def test_the_write_refuses_a_page_directory_that_is_not_as_its_caller_looked_at_it(tmp_path):
    """The last look before a deploy writes the page directory is the write's own, its marker read through the
    descriptor the write goes through: another configuration's directory made or swapped in since the caller's
    look (even since deploy's look right before the write) is refused and left as it is; one removed since is
    not made again."""
    directory = tmp_path / "root" / STAMP.name
    theirs = Stamp(STAMP.name, f"{STAMP.name}.other.org", "99999999", "2026-07-01T12:00:00Z")
    _ensure(directory, b"<p>theirs</p>", theirs, "a" * 64)
    (directory / "notes").write_text("not graphsite's")
    before = _state(directory)
    mine = PageDirectory(directory, there=True, stamp=STAMP)
    for seen, said in ((PageDirectory(directory), "appeared"), (mine, "changed")):
        with pytest.raises(DeployError) as refused:
            bind.ensure_bind_dir(directory, b"<p>mine</p>", STAMP, "b" * 64, seen)
        assert refused.value.detail == (f"{directory} {said} since this deploy's plan read it: another graphsite "
                                        "configuration's (gs-bind.other.org); left as it is")
        assert _state(directory) == before
    shutil.rmtree(directory)
    with pytest.raises(DeployError) as refused:
        bind.ensure_bind_dir(directory, b"<p>mine</p>", STAMP, "b" * 64, mine)
    assert refused.value.detail == f"{directory} was removed since this deploy's plan read it; nothing written"
    assert not directory.exists() and os.listdir(directory.parent) == []

def test_deploy_refuses_a_link_in_one_line_and_leaves_its_target_alone(planted):
    link, target, before = planted
    with pytest.raises(DeployError) as refused:
        _ensure(link, b"<p>page</p>", Stamp("gs-x"), "a" * 64)
    message = refused.value.message
    assert "\n" not in message, message
    assert str(link) in message and f"symbolic link to {target}" in message and "remove the link" in message
    with pytest.raises(OSError):
        bind.put_back_page(link, b"<p>old</p>", [Stamp("gs-x")])
    assert _state(target) == before and link.is_symlink()
    assert sorted(p.name for p in link.parent.iterdir()) == ["gs-x"]  # no temporary directory left either


def test_removing_a_link_is_refused_and_its_target_untouched(planted):
    """Before, remove_bind_dir judged the target's marker as the link's, then rmtree refused the link, and its
    hint said a rerun would finish: it never could."""
    link, target, before = planted
    with pytest.raises(DeployError) as refused:
        bind_removal.remove_bind_dir(link, _stamp("gs-x"))
    assert "symbolic link to" in refused.value.message and "run the command again" not in str(refused.value)
    temporary = link.parent / (".gs-x.k3j2" + TEMPORARY_SUFFIX)
    temporary.symlink_to(target)
    with pytest.raises(DeployError, match="not removed: a symbolic link to") as kept:
        bind_removal.remove_temporary(temporary, None)
    assert "run the command again" not in str(kept.value)
    assert _state(target) == before and link.is_symlink() and temporary.is_symlink()


def test_links_inside_the_directory_are_replaced_or_removed_never_followed(tmp_path):
    """A link planted where the page or the marker goes: the marker is not read through it (not ours), the page
    replaces the link; a link in the directory stops its removal (graphsite makes none), its target untouched."""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious")
    os.chown(outside, 4242, 4242)
    outside.chmod(0o600)
    directory = tmp_path / "root" / "gs-l"
    _ensure(directory, b"<p>one</p>", _stamp("gs-l"), "a" * 64)
    (directory / "index.html").unlink()
    (directory / "index.html").symlink_to(outside)
    assert bind.read_page(directory) is None
    assert _ensure(directory, b"<p>two</p>", _stamp("gs-l"), "b" * 64) is False
    assert not (directory / "index.html").is_symlink() and (directory / "index.html").read_bytes() == b"<p>two</p>"
    (directory / MARKER).unlink()
    (directory / MARKER).symlink_to(outside)
    outside.write_text(_stamp("gs-l").marker())
    assert bind.own_stamp(directory) is None  # a marker that is a link is no marker
    (directory / MARKER).unlink()
    _ensure(directory, b"<p>three</p>", _stamp("gs-l"), "c" * 64)
    (directory / "extra").symlink_to(outside)
    with pytest.raises(DeployError, match="graphsite did not put extra there"):  # a link is never graphsite's
        bind_removal.remove_bind_dir(directory, _stamp("gs-l"))
    (directory / "extra").unlink()
    (directory / "index.html").unlink()
    (directory / "index.html").symlink_to(outside)  # where the page goes: no page, a stray
    with pytest.raises(DeployError, match="graphsite did not put index.html there"):
        bind_removal.remove_bind_dir(directory, _stamp("gs-l"))
    (directory / "index.html").unlink()
    assert bind_removal.remove_bind_dir(directory, _stamp("gs-l")) is True and not directory.exists()
    assert outside.read_text() == _stamp("gs-l").marker() and outside.stat().st_uid == 4242
    assert stat.S_IMODE(outside.stat().st_mode) == 0o600


def test_a_fifo_where_the_marker_goes_does_not_hang_the_judgement(tmp_path):
    directory = tmp_path / "gs-f"
    directory.mkdir()
    os.mkfifo(directory / MARKER)
    assert bind.bind_stamp(directory) is None


def test_the_undo_of_a_redeploy_puts_the_previous_page_back_as_caddy_s(tmp_path):
    """deploy's undo of a bind redeploy: the old page back in place, owned by uid 1000 like the rest (it was
    written back as root's before)."""
    directory = tmp_path / STAMP.name
    _ensure(directory, b"<p>one</p>", STAMP, "a" * 64)
    old = bind.read_page(directory)
    _ensure(directory, b"<p>two</p>", STAMP, "b" * 64)
    assert old == b"<p>one</p>" and bind.put_back_page(directory, old, [STAMP]) is True
    page = directory / "index.html"
    assert page.read_bytes() == b"<p>one</p>" and (page.stat().st_uid, stat.S_IMODE(page.stat().st_mode)) == (
        1000, 0o644)


def test_the_undo_of_a_redeploy_puts_no_page_into_another_configuration_s_directory(tmp_path):
    """Swapped for another configuration's after the redeploy wrote it: the marker, read through the descriptor
    the write would go through, is not the deployment's; before, the previous page was written into it."""
    directory = tmp_path / STAMP.name
    theirs = Stamp(STAMP.name, "gs-bind.other.org", "99999999", "2026-07-01T12:00:00Z")
    _ensure(directory, b"<p>theirs</p>", theirs, "a" * 64)
    before = _state(directory)
    with pytest.raises(DeployError, match="its marker is no longer this deployment's; the previous page was not"):
        bind.put_back_page(directory, b"<p>one</p>", [STAMP])
    assert _state(directory) == before


@pytest.mark.parametrize("marker", [
    Stamp("gs-m", "gs-m.staging.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z"),  # another domain's
    Stamp("gs-m", "gs-m.example.com", "ffffffff", "2026-07-01T12:00:00Z"),  # another deployment of the name
    Stamp("gs-m", "gs-m.example.com", "0a1b2c3d", "2026-07-02T12:00:00Z"),  # made at another time
    Stamp("gs-m", created="2026-07-01T12:00:00Z", version=1),  # an older graphsite's, naming no domain
], ids=["domain", "id", "created", "older"])
def test_a_directory_is_removed_only_while_its_marker_is_the_whole_stamp_judged_ours(tmp_path, marker):
    """Before, the marker's name was all remove_bind_dir checked: another configuration's directory of the same
    name, or one rewritten since it was judged, was removed."""
    directory = tmp_path / "gs-m"
    _ensure(directory, b"<p>theirs</p>", marker, "a" * 64)
    if marker.version == 1:
        (directory / MARKER).write_text("made by graphsite deploy: name=gs-m created=2026-07-01T12:00:00Z expires=\n")
    judged = Stamp("gs-m", "gs-m.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z")
    with pytest.raises(DeployError, match=r"gs-m: its marker says \(fqdn=.*, not the deployment's .*left in place"):
        bind_removal.remove_bind_dir(directory, judged)
    assert (directory / "index.html").read_bytes() == b"<p>theirs</p>"


# --- kept versions: v/<sha12>/ --------------------------------------------------------------------------------------


def test_a_version_is_kept_under_v_owned_by_1000_read_back_and_removed_without_following_a_link(tmp_path):
    from graphsite.publisher.versions import marker_labels, version_marker

    directory = tmp_path / "gs-bind"
    _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
    assert bind.version_markers(directory) == {}
    marker = version_marker(STAMP, "a" * 64, {"graphsite.title": "T", "graphsite.deployed": "2026-07-01T12:00:00Z"})
    assert bind.keep_version(directory, "a" * 12, b"<p>live</p>", marker)
    assert not bind.keep_version(directory, "a" * 12, b"<p>other</p>", marker)  # content-addressed: kept as it was
    kept = directory / "v" / ("a" * 12)
    assert (kept / "index.html").read_bytes() == b"<p>live</p>"
    assert {os.stat(p).st_uid for p in (directory / "v", kept, kept / "index.html", kept / MARKER)} == {1000}
    markers = bind.version_markers(directory)
    assert list(markers) == ["a" * 12]
    assert marker_labels(markers["a" * 12])["graphsite.title"] == "T"
    assert Stamp.from_labels(marker_labels(markers["a" * 12])) == STAMP
    assert bind.version_page(directory, "a" * 12) == b"<p>live</p>"
    assert marker_labels("made by graphsite deploy: no stamp") == {}
    nested = STAMP.marker("a" * 64) + "[" * 100_000 + "\n"  # past json's depth: no extra labels, no traceback
    assert Stamp.from_labels(marker_labels(nested)) == STAMP and "graphsite.title" not in marker_labels(nested)

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ("b" * 12)).mkdir(parents=True)
    (directory / "v" / ("b" * 12)).symlink_to(elsewhere / ("b" * 12))  # a link named like a version
    assert bind.version_markers(directory) == {"a" * 12: markers["a" * 12], "b" * 12: None}
    with pytest.raises(DeployError, match="no directory"):
        bind_removal.remove_version(directory, "b" * 12)
    assert (elsewhere / ("b" * 12)).is_dir()
    assert bind_removal.remove_version(directory, "a" * 12) and not kept.exists()
    assert not bind_removal.remove_version(directory, "a" * 12)


def test_a_link_where_the_versions_are_is_never_graphsites_nor_written_through(tmp_path):
    directory = tmp_path / "gs-bind"
    _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
    target = tmp_path / "target"
    (target / ("c" * 12)).mkdir(parents=True)
    (directory / "v").symlink_to(target)
    with pytest.raises(DeployError, match=f"kept versions of {directory} are unknown: {directory / 'v'} is a "
                                          f"symbolic link to {target}"):
        bind.version_markers(directory)  # not "none": what is behind the link was never read
    with pytest.raises(DeployError, match="cannot keep version"):
        bind.keep_version(directory, "a" * 12, b"<p>live</p>", "marker\n")
    assert sorted(p.name for p in target.iterdir()) == ["c" * 12]


def test_a_link_or_a_file_where_a_version_goes_is_refused_never_taken_as_kept(tmp_path):
    directory = tmp_path / "gs-bind"
    _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
    (directory / "v").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (directory / "v" / ("a" * 12)).symlink_to(elsewhere)
    (directory / "v" / ("b" * 12)).write_text("not a version")
    for sha12 in ("a" * 12, "b" * 12):
        with pytest.raises(DeployError, match=f"v/{sha12} is no directory: graphsite did not make it; left in place"):
            bind.keep_version(directory, sha12, b"<p>live</p>", "marker\n")
    assert list(elsewhere.iterdir()) == [] and (directory / "v" / ("b" * 12)).read_text() == "not a version"


@pytest.mark.parametrize("planted", ["link", "file", "versions file"])
def test_a_name_directory_that_is_no_directory_of_graphsites_makes_its_versions_unknown_never_none(tmp_path,
                                                                                                   planted):
    """Before, a link (or a file) where the name's directory or its v/ should be read as "no versions": history
    said none were kept, and a rollback had nothing to roll back to."""
    real = tmp_path / "real"
    _ensure(real, b"<p>live</p>", STAMP, "a" * 64)
    bind.keep_version(real, "a" * 12, b"<p>live</p>", "marker\n")
    directory = tmp_path / "gs-bind"
    if planted == "link":
        directory.symlink_to(real)
        why = f"{directory} is a symbolic link to {real}, where graphsite keeps its own page directory"
    elif planted == "file":
        directory.write_text("not a directory")
        why = f"{directory} is not a directory: graphsite did not make it"
    else:
        _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
        (directory / "v").write_text("not a directory")
        why = f"{directory / 'v'} is not a directory: graphsite did not make it"
    with pytest.raises(DeployError, match=re.escape(f"the kept versions of {directory} are unknown: {why}")) as info:
        bind.version_markers(directory)
    assert type(info.value) is UnknownVersions  # unknown, not a read that failed
    assert "choose another subdomain" not in info.value.detail  # list shows it beside the count: no deploy advice
    assert sorted(p.name for p in (real / "v").iterdir()) == ["a" * 12]


def test_a_version_is_restamped_in_place_never_through_a_link(tmp_path):
    """How a rerun of a killed first deploy takes over the version its killed run kept (and its undo gives it
    back): the marker rewritten atomically in the folder that is there, owned by 1000, the page untouched."""
    directory = tmp_path / "gs-bind"
    _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
    bind.keep_version(directory, "a" * 12, b"<p>live</p>", "earlier\n")
    assert bind.restamp_version(directory, "a" * 12, "this run's\n")
    kept = directory / "v" / ("a" * 12)
    assert (kept / MARKER).read_text() == "this run's\n" and (kept / MARKER).stat().st_uid == 1000
    assert (kept / "index.html").read_bytes() == b"<p>live</p>"
    assert not bind.restamp_version(directory, "b" * 12, "this run's\n")
    target = tmp_path / "target"
    target.mkdir()
    (directory / "v" / ("c" * 12)).symlink_to(target)
    with pytest.raises(DeployError, match="cannot restamp the version"):
        bind.restamp_version(directory, "c" * 12, "this run's\n")
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("planted", ["file", "link loop"])
def test_a_bind_root_that_is_no_directory_is_named_never_blamed_on_the_names_directory(tmp_path, planted):
    """Before, a deploy.bind_root that is a file or a symbolic link loop was reported as the name's directory
    (`the kept versions of ROOT/site-1 are unknown: … is no directory`), by the versions' read, before the
    preflight that checks deploy.bind_root ran (which took a link loop for a missing directory, to be made). Now
    the read names deploy.bind_root, and a deploy stops on the preflight's own line about it first."""
    config, clients = fake_world(tmp_path)
    root = Path(config.deploy.bind_root)
    root.rmdir()
    if planted == "file":
        root.write_text("not a directory")
    else:
        root.symlink_to(root)
    with pytest.raises(DeployError, match=re.escape(f"the kept versions of {root / 'gs-x'} are unknown: "
                                                    f"deploy.bind_root {root} is no directory")) as info:
        bind.version_markers(root / "gs-x")
    assert type(info.value) is UnknownVersions
    clients.binds = BindDirectories()
    source = tmp_path / "report.md"
    source.write_text("# Report\n\nOne.\n")
    request = DeployRequest(source=source, subdomain="site-1", verify=False, content="bind")
    with pytest.raises(GraphsiteError, match=re.escape(f"deploy.bind_root: cannot create files in {root}: {root} "
                                                      "is not a directory")) as refused:
        deploy(config, request, clients, Recorder())
    assert str(root / "site-1") not in refused.value.detail


def test_what_cannot_be_looked_at_beside_the_versions_is_a_failed_read_never_a_traceback_or_none(tmp_path):
    """Once opening v/ was refused as no directory, the look at what is there used os.path.lexists (an EACCES
    read as "absent") then Path.is_dir (an EACCES raised: a traceback), so a permission that changed between the
    two gave a false line or a traceback. Each path is now looked at once, and a look that failed is a failed
    read, named, one line: list counts the page directories unreadable rather than a version count unknown. Only
    a race reaches this from version_markers; the look itself is proven here as a user who may not search
    deploy.bind_root's parents."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        directory = Path(base) / "srv" / "gs-bind"
        _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
        (directory / "v").write_text("not a directory")
        directory.chmod(0o700)  # owned by 1000: nobody may search deploy.bind_root, not this directory
        with as_nobody():
            refused = bind._unknown_versions(directory)
    assert type(refused) is DeployError  # not UnknownVersions: a read that failed
    assert refused.detail == f"{directory / 'v'}: cannot look at it: Permission denied", refused.detail


def test_strays_names_every_entry_graphsite_did_not_put_in_a_page_directory_or_its_v(tmp_path):
    """What a switch to config mode would remove with the directory unread: every entry of v/ that is no version
    folder (whatever its name or kind), of the directory beside the page, the marker and v/, and of a version
    folder beside its page and marker; a killed write's temporaries are graphsite's own."""
    directory = tmp_path / "gs-bind"
    assert bind.strays(directory) == ()
    _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
    bind.keep_version(directory, "a" * 12, b"<p>live</p>", "marker\n")
    for own in ("v/.bbbbbbbbbbbb.0123456789ab.tmp", ".index.html.0123456789ab.tmp", "..graphsite.0123456789ab.tmp"):
        (directory / own).write_text("")
    assert bind.strays(directory) == ()
    (directory / "v" / "notes").mkdir()
    (directory / "v" / "AAAAAAAAAAAA").mkdir()
    (directory / "v" / "backup.tar").write_text("")
    (directory / "notes.txt").write_text("")
    (directory / "v" / ("a" * 12) / "notes").write_text("")  # in a version folder: it would go with it too
    (directory / "v" / ("a" * 12) / ".index.html.k1ll3d00.tmp").write_text("")  # a killed write's: graphsite's
    (directory / "v" / ("a" * 12) / ".index.html.x1.tmp").write_text("")  # a random part graphsite never writes
    assert bind.strays(directory) == ("notes.txt", "v/AAAAAAAAAAAA", "v/backup.tar", "v/notes",
                                      f"v/{'a' * 12}/.index.html.x1.tmp", f"v/{'a' * 12}/notes")


def test_a_bind_root_or_directory_that_cannot_be_looked_at_is_a_failed_read_never_absent(tmp_path):
    """Before, has_root used Path.is_dir (EACCES raised: a traceback) and exists used os.path.lexists (EACCES
    read as absent: "does not exist on this host"). Both now look with one stat and a look that failed is a
    DeployError naming the path; absent stays absent."""
    hidden = tmp_path / "hidden"
    (hidden / "srv" / "gs-bind").mkdir(parents=True)
    hidden.chmod(0o700)  # owned by root: nobody may not search it
    store = BindDirectories()
    with as_nobody():
        for look in (lambda: store.has_root(hidden / "srv"), lambda: store.exists(hidden / "srv" / "gs-bind")):
            with pytest.raises(DeployError, match=re.escape(f"{hidden / 'srv'}") + ".*cannot look at it: "
                                                  "Permission denied"):
                look()
    assert store.has_root(hidden / "srv") and store.exists(hidden / "srv" / "gs-bind")
    assert not store.has_root(tmp_path / "none") and not store.exists(tmp_path / "none")


def test_a_switch_from_bind_mode_names_a_bind_root_that_is_no_directory(tmp_path):
    """Before, the preflight looked at deploy.bind_root only for a deploy in bind mode: a switch from it, with a
    file at deploy.bind_root, said the name's versions were "unknown here: ROOT does not exist on this host".
    Now the switch's preflight names the file, as a bind deploy's does."""
    config, clients = fake_world(tmp_path)
    source = tmp_path / "report.md"
    source.write_text("# Report\n\nOne.\n")
    deploy(config, DeployRequest(source=source, subdomain="site-1", verify=False, content="bind"), clients,
           Recorder())
    root = Path(config.deploy.bind_root)
    root.rmdir()
    root.write_text("not a directory")
    clients.binds = BindDirectories()
    request = DeployRequest(source=source, subdomain="site-1", verify=False, content="config")
    with pytest.raises(GraphsiteError, match=re.escape(f"deploy.bind_root: cannot create files in {root}: {root} "
                                                      "is not a directory")):
        deploy(config, request, clients, Recorder())


def _with_versions(root: Path) -> Path:
    """Return a page directory of gs-bind under `root` with two kept versions and a killed write's temporaries
    (of the page, of the marker, of a version folder): everything graphsite makes there."""
    directory = root / "gs-bind"
    _ensure(directory, b"<p>live</p>", STAMP, "a" * 64)
    for sha12 in ("a" * 12, "b" * 12):
        bind.keep_version(directory, sha12, b"<p>kept</p>", STAMP.marker("a" * 64))
    (directory / ".index.html.0123456789ab.tmp").write_text("")
    (directory / "..graphsite.0123456789ab.tmp").write_text("")
    (directory / "v" / ".cccccccccccc.0123456789ab.tmp").mkdir()
    (directory / "v" / ".cccccccccccc.0123456789ab.tmp" / ".index.html.k1ll3d00.tmp").write_text("")
    return directory


def _tree(directory: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else None for p in directory.rglob("*")}


def test_removal_takes_what_graphsite_made_and_a_stray_keeps_the_directory_whole_until_moved_out(tmp_path):
    """Before, remove_bind_dir removed the directory as a tree once its marker was the deployment's: a note an
    operator dropped beside the page, in v/ or in a version folder went with it, unread. Now nothing is removed
    while a stray is there; the refusal names a few and counts the rest; once they are moved out the directory
    goes, the page, the versions and the temporaries with it."""
    directory = _with_versions(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious")
    strays = {"notes": "file", "v/notes": "file", f"v/{'a' * 12}/notes": "file", "v/backup": "directory",
              "v/AAAAAAAAAAAA": "directory", "link": "link"}
    for path, kind in strays.items():
        if kind == "file":
            (directory / path).write_text("mine")
        elif kind == "directory":
            (directory / path).mkdir()
            (directory / path / "inside").write_text("mine")
        else:
            (directory / path).symlink_to(outside)
    before = _tree(directory)
    with pytest.raises(DeployError) as refused:
        bind_removal.remove_bind_dir(directory, STAMP)
    assert refused.value.message == (
        f"{directory}: not removed: graphsite did not put link, notes, v/AAAAAAAAAAAA and 3 more there; left in place "
        "with its marker: move them out of it, then run `graphsite teardown gs-bind` again")
    assert _tree(directory) == before and outside.read_bytes() == b"precious"
    moved = tmp_path / "moved"
    moved.mkdir()
    for n, path in enumerate(strays):
        os.rename(directory / path, moved / str(n))
    assert bind_removal.remove_bind_dir(directory, STAMP) is True and not directory.exists()
    assert bind_removal.remove_bind_dir(directory, STAMP) is False
    assert len(list(moved.iterdir())) == len(strays) and outside.read_bytes() == b"precious"


_LATE = """
import sys
from pathlib import Path
from graphsite.errors import DeployError
from graphsite.publisher import bind, bind_removal
directory, at, late = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
stamp = bind.bind_stamp(directory)
def arrive(event, args):  # another hand drops a file in the folder just before graphsite's rmdir of it
    if event == "os.rmdir" and args[0] == at and not (directory / late).exists():
        (directory / late).write_text("late")
sys.addaudithook(arrive)
try:
    if sys.argv[4:]:
        bind_removal.remove_version(directory, sys.argv[4])
    else:
        bind_removal.remove_bind_dir(directory, stamp)
except DeployError as exc:
    print(exc.message)
"""


@pytest.mark.parametrize("at, late", [("a" * 12, f"v/{'a' * 12}/late"), ("gs-bind", "late")])
def test_a_stray_that_comes_in_during_the_removal_stops_it_with_the_marker_in_place(tmp_path, at, late):
    """The marker goes last, and only once nothing else is left; what comes into a folder between the look and
    its rmdir (ENOTEMPTY) stops the removal there, named. Into the directory itself after the marker went: the
    marker is written back, so `list` still shows the deployment and a rerun, once the file is moved out,
    finishes. The other writer is a real file written by an audit hook of a real process at that rmdir."""
    directory = _with_versions(tmp_path)
    ran = subprocess.run([sys.executable, "-c", _LATE, str(directory), at, late], capture_output=True, text=True,
                         timeout=60, check=False)
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    assert ran.stdout.strip() == (f"{directory}: not removed: graphsite did not put {late} there; left in place "
                                  "with its marker: move them out of it, then run `graphsite teardown gs-bind` again")
    assert bind.own_stamp(directory) == STAMP and (directory / late).read_text() == "late"
    if at != directory.name:  # a version's folder: a deploy dropping that version stops there the same way
        (directory / late).rename(tmp_path / "late")
        sha12, kept = at, bind.version_markers(directory)[at]
        assert kept == STAMP.marker("a" * 64)  # put back: the folder stays the deployment's version
        (directory / "v" / sha12 / "notes").write_text("mine")
        with pytest.raises(DeployError) as refused:
            bind_removal.remove_version(directory, sha12)
        assert refused.value.message == (
            f"{directory}: version {sha12} not removed: graphsite did not put v/{sha12}/notes there; left in place "
            "with its marker: move them out of it, and the next deploy of gs-bind drops it")
        (directory / "v" / sha12 / "notes").unlink()
        again = subprocess.run([sys.executable, "-c", _LATE, str(directory), at, late, sha12], capture_output=True,
                               text=True, timeout=60, check=False)
        assert again.stdout.strip().startswith(f"{directory}: version {sha12} not removed: graphsite did not put "
                                               f"{late} there; "), again.stdout + again.stderr
        assert bind.version_markers(directory)[sha12] == kept and (directory / late).read_text() == "late"
    assert (directory / MARKER).stat().st_uid == bind.BIND_UID
    assert bind.bind_dirs(tmp_path) == {"gs-bind": (directory, STAMP)}  # what list reads
    (directory / late).unlink()
    assert bind_removal.remove_bind_dir(directory, STAMP) is True and not directory.exists()


def test_a_removal_the_filesystem_refuses_is_one_line_naming_the_path_and_keeps_the_marker(tmp_path):
    """Every OSError of the removal is a DeployError naming the path it was on, never a traceback; the marker
    is still there, so the deployment is still found and a rerun finishes. Before, a directory that could not be
    looked at (os.path.lexists: EACCES read as no directory) was "absent"."""
    directory = _with_versions(tmp_path)
    with as_nobody(), pytest.raises(DeployError) as unseen:  # pytest's tmp_path: nobody may not search it
        bind_removal.remove_bind_dir(directory, STAMP)
    assert unseen.value.detail == f"{directory}: cannot look at it: Permission denied"
    with tempfile.TemporaryDirectory() as base:
        os.chmod(base, 0o755)
        directory = _with_versions(Path(base))
        with as_nobody(), pytest.raises(DeployError) as refused:  # the folders are 1000's: nobody may not unlink
            bind_removal.remove_bind_dir(directory, STAMP)
        where = directory / "v" / ".cccccccccccc.0123456789ab.tmp" / ".index.html.k1ll3d00.tmp"  # the first, deepest
        assert refused.value.detail == f"{where}: cannot remove it: Permission denied"
        assert "deploy.bind_root's permissions" in str(refused.value.hint)
        assert bind.own_stamp(directory) == STAMP and bind.version_page(directory, "a" * 12) == b"<p>kept</p>"
        (directory / "v").chmod(0o700)  # 1000's: nobody may not list it
        with as_nobody(), pytest.raises(DeployError) as unread:
            bind_removal.remove_bind_dir(directory, STAMP)
        assert unread.value.detail == f"{directory / 'v'}: cannot list what it holds: Permission denied"
        assert bind_removal.remove_bind_dir(directory, STAMP) is True and not directory.exists()


def test_one_look_at_a_page_directory_says_whether_it_is_there_a_link_and_its_markers_stamp(tmp_path, planted):
    """What the survey keeps for deploy's refusal of a foreign directory and history's proof that it is the
    deployment's: nothing there; a link (never followed: no stamp, whatever the target holds); a directory with
    the stamp its marker holds, whatever name it gives (whose it is is the caller's judgement)."""
    link, target, before = planted
    root = link.parent
    assert bind.page_directory(root / "gs-none") == PageDirectory(root / "gs-none")
    assert bind.page_directory(link) == PageDirectory(link, there=True, link=str(target))
    other = Stamp("gs-other", "gs-other.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z")
    _ensure(root / "gs-bind", b"<p>one</p>", other, "a" * 64)
    found = bind.page_directory(root / "gs-bind")
    assert (found.there, found.link, found.stamp, found.own_stamp) == (True, None, other, None)
    (root / "gs-file").write_text(STAMP.marker())
    assert bind.page_directory(root / "gs-file") == PageDirectory(root / "gs-file", there=True)
    assert _state(target) == before


def test_a_marker_that_cannot_be_read_is_a_failed_look_the_survey_keeps_never_no_marker():
    """The survey's look at the name's page directory is what a bind deploy decides on: a marker nobody may read
    is kept as that look's failure, naming the file, and raised by whoever would decide on it (`known`)."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        config, clients = fake_world(Path(base))
        clients.binds = BindDirectories()
        directory = Path(config.deploy.bind_root) / "gs-bind"
        _ensure(directory, b"<p>one</p>", STAMP, "a" * 64)
        (directory / MARKER).chmod(0o600)  # owned by 1000: nobody may not read it
        with as_nobody(), pytest.raises(DeployError) as unread:
            bind.page_directory(directory)
        assert unread.value.detail == f"{directory / MARKER}: cannot read the page directory's marker: " \
                                      "Permission denied"
        with as_nobody():
            inventory = survey(SurveySettings.from_config(config), clients, name="gs-bind")
        answers = inventory.holdings["gs-bind"].answers
        assert answers is not None and isinstance(answers.directory, Unread)
        assert inventory.unreadable == {DIRECTORIES: unread.value.detail}
        with pytest.raises(DeployError) as decided:
            known(answers.directory)
        assert decided.value.detail == unread.value.detail
