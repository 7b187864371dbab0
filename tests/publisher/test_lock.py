"""Per-subdomain locks: a second run on the same name waits or fails clearly; other names are free."""

import os
import threading

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
    of the name's next run). Without `create`, a missing file stays missing."""
    from graphsite.publisher.lock import sweep

    with pytest.raises(FileNotFoundError), subdomain_lock(tmp_path, "gone", create=False):
        pass
    assert not (tmp_path / "gone.lock").exists()
    (tmp_path / "left.lock").write_text("pid 1")  # a killed run's
    assert sweep(tmp_path) == ["left"] and list(tmp_path.iterdir()) == []
