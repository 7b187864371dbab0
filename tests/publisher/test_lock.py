"""Per-subdomain locks: a second run on the same name waits or fails clearly; other names are free."""

import os
import tempfile
import threading
from pathlib import Path

import pytest

from graphsite.errors import DeployError
from graphsite.publisher.lock import subdomain_lock


def test_a_second_holder_of_the_same_name_fails_clearly(tmp_path):
    with subdomain_lock(tmp_path, "s1"), pytest.raises(DeployError) as info, subdomain_lock(tmp_path, "s1"):
        pass
    assert "s1 is being deployed or torn down by pid" in info.value.message
    assert "--wait" in info.value.message


def test_other_names_are_not_blocked(tmp_path):
    with subdomain_lock(tmp_path, "s1") as first, subdomain_lock(tmp_path, "s2") as second:
        assert first != second
        assert first.read_text() == second.read_text() == f"pid {os.getpid()}"


def test_a_waiting_run_gets_the_lock_when_it_is_released(tmp_path):
    entered = threading.Event()
    release = threading.Event()

    def holder():
        with subdomain_lock(tmp_path, "s1"):
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    entered.wait(5)
    threading.Timer(0.3, release.set).start()
    with subdomain_lock(tmp_path, "s1", wait=10):
        assert release.is_set()
    thread.join()


def test_an_unwritable_lock_dir_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DeployError, match="deploy.lock_dir"), subdomain_lock(blocker / "locks", "s1"):
        pass


def test_a_holder_still_writing_its_pid_is_named_not_called_another_process(tmp_path):
    """The holder takes the lock, then writes `pid N`: a second run in between read an empty file and said
    'another process' (a two-deploys test saw it once). The empty file is read again for a moment."""
    import fcntl

    path = tmp_path / "s1.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, nothing written yet: the holder's moment between
    writer = threading.Timer(0.05, os.pwrite, (fd, b"pid 4242", 0))
    writer.start()
    try:
        with pytest.raises(DeployError, match=r"s1 is being deployed or torn down by pid 4242"), \
                subdomain_lock(tmp_path, "s1"):
            pass
    finally:
        writer.join()
        os.close(fd)


def test_a_sweep_takes_only_existing_lock_files_and_never_makes_one(tmp_path):
    """gc's sweep listed a lock file, its holder removed it, and the sweep made it again (locked, in the way
    of the name's next run). A missing file stays missing."""
    from graphsite.publisher.lock import _remove_stale, sweep

    with pytest.raises(FileNotFoundError):
        _remove_stale(tmp_path, "gone")
    assert not (tmp_path / "gone.lock").exists()
    (tmp_path / "left.lock").write_text("pid 1")  # a killed run's
    assert sweep(tmp_path).removed == ("left",) and list(tmp_path.iterdir()) == []


def test_a_sweep_never_touches_nor_names_a_file_not_named_as_graphsite_names_a_lock(tmp_path):
    """deploy.lock_dir may be a shared directory (/run/lock): another program's empty lock file there, held with
    a POSIX lock flock does not see, was removed. Only `NAME.lock` with NAME a DNS label is graphsite's shape."""
    from graphsite.publisher.lock import sweep

    for name in ("Xorg.lock", "dpkg_frontend.lock", "-x.lock", "a.b.lock", "x" * 64 + ".lock"):
        (tmp_path / name).write_text("")
    (tmp_path / "s1.lock").write_text("")  # graphsite's shape: a run killed before it wrote its pid
    swept = sweep(tmp_path)
    assert (swept.removed, swept.left) == (("s1",), ())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["Xorg.lock", "dpkg_frontend.lock", "-x.lock", "a.b.lock", "x" * 64 + ".lock"])


def test_a_sweep_writes_its_own_pid_before_it_removes_a_stale_lock(tmp_path, monkeypatch):
    """A run refused while the sweep held a stale lock was told the dead run's pid: the sweep now says it holds
    it, in the file, before removing it."""
    from graphsite.publisher import lock

    (tmp_path / "s1.lock").write_text("pid 999999")
    seen: list[str] = []
    unlink = os.unlink

    def looking(path, *args, **kwargs):  # what a run opening the name just before the removal would read
        seen.append(Path(path).read_text())
        unlink(path, *args, **kwargs)

    monkeypatch.setattr(lock.os, "unlink", looking)
    assert lock.sweep(tmp_path).removed == ("s1",)
    monkeypatch.undo()
    assert seen == [f"pid {os.getpid()}"]


def test_a_sweep_judges_each_entry_on_its_own_and_names_what_it_leaves(tmp_path):
    """gc's sweep opened every `*.lock` entry as a lock file: a directory or a symbolic link named like one
    raised, after gc's teardowns, and their report was lost. Each entry is now judged alone: a stale lock file
    graphsite made goes, anything else is left and named, a held lock is left alone, and the sweep goes on."""
    from graphsite.publisher.lock import sweep

    (tmp_path / "a-dir.lock").mkdir()
    (tmp_path / "b-link.lock").symlink_to("x")
    (tmp_path / "c-link.lock").symlink_to(tmp_path / "d-killed.lock")  # a link to a real lock file
    (tmp_path / "d-killed.lock").write_text("pid 1")
    (tmp_path / "e-empty.lock").write_text("")  # a run killed between making it and writing its pid
    (tmp_path / "f-notes.lock").write_text("do not delete")
    os.mkfifo(tmp_path / "g-fifo.lock")
    (tmp_path / "h-other.txt").write_text("pid 1")
    with subdomain_lock(tmp_path, "i-running"):
        swept = sweep(tmp_path)
        assert swept.removed == ("d-killed", "e-empty")
        assert [(path.name, why) for path, why in swept.left] == [
            ("a-dir.lock", "not a lock file graphsite made: a directory"),
            ("b-link.lock", "not a lock file graphsite made: a symbolic link (graphsite follows none)"),
            ("c-link.lock", "not a lock file graphsite made: a symbolic link (graphsite follows none)"),
            ("f-notes.lock", "not a lock file graphsite made: it holds 13 bytes that are not 'pid N'"),
            ("g-fifo.lock", "not a lock file graphsite made: not a regular file")]
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "a-dir.lock", "b-link.lock", "c-link.lock", "f-notes.lock", "g-fifo.lock", "h-other.txt",
            "i-running.lock"]
        assert (tmp_path / "f-notes.lock").read_text() == "do not delete"


@pytest.mark.skipif(os.geteuid() != 0, reason="it chowns to nobody and back: run as root")
def test_a_sweep_leaves_another_user_s_lock_file_and_one_it_cannot_open_and_names_them():
    """As nobody (root opens everything): root's lock file is another user's; one of nobody's own it may not
    open, or not remove, fails with EACCES; a lock directory it may not list: each is named, never a traceback
    nor silence."""
    from graphsite.publisher.lock import Swept, sweep
    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        locks = Path(base) / "locks"
        locks.mkdir()
        os.chmod(base, 0o755)
        os.chown(locks, 65534, 65534)
        (locks / "root-killed.lock").write_text("pid 1")
        sealed = locks / "sealed.lock"
        sealed.write_text("pid 2")
        os.chown(sealed, 65534, 65534)
        sealed.chmod(0)
        with as_nobody():
            swept = sweep(locks)
        assert swept.removed == ()
        assert [(path.name, why) for path, why in swept.left] == [
            ("root-killed.lock", "owned by uid 0, not this user (uid 65534): left to its owner"),
            ("sealed.lock", "cannot open it: Permission denied")]
        assert sorted(p.name for p in locks.iterdir()) == ["root-killed.lock", "sealed.lock"]
        locks.chmod(0o300)  # nobody's own directory it may not list
        with as_nobody():
            assert sweep(locks).left == ((locks, "cannot list it: Permission denied"),)
        rooted = Path(base) / "rooted"  # root's directory: nobody's stale lock file in it cannot be unlinked
        rooted.mkdir(mode=0o755)
        (rooted / "stuck.lock").write_text("pid 3")
        os.chown(rooted / "stuck.lock", 65534, 65534)
        with as_nobody():
            assert sweep(rooted) == Swept(left=((rooted / "stuck.lock", "cannot remove it: Permission denied"),))
        assert (rooted / "stuck.lock").read_text() == "pid 3"
