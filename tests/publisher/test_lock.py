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
