"""The undo and the signal handling, without the lab: every step runs whatever one raises, a failed step is
tried once more, a second signal that comes before the undo's handler is in place is held for it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from graphsite.errors import DeployError
from graphsite.publisher.undo import Undo


def test_every_step_runs_and_a_failed_one_is_tried_once_more_in_the_undos_order():
    calls: list[str] = []
    flaky = iter([DeployError("Docker: remove service a: the Docker daemon did not answer in time"), True])

    def once_stalled() -> bool:
        calls.append("service")
        outcome = next(flaky)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def broken() -> bool:
        calls.append("record")
        raise RuntimeError("a bug")

    undo = Undo()
    undo.push("config c", "removed config c", lambda: calls.append("config") is None)
    undo.push("service a", "removed service a", once_stalled)
    undo.push("record A a.example", "deleted record A a.example", broken)
    lines = undo.run()
    assert calls == ["record", "service", "config", "record", "service"]
    assert lines == ["undone: removed config c", "NOT undone: record A a.example: a bug",
                     "undone: removed service a"]
    assert undo.pending() == []


def test_a_second_signal_before_the_undo_starts_is_held_for_it_and_ends_the_run_naming_what_is_left():
    script = textwrap.dedent("""
        import os, signal
        from graphsite.signals import Interrupted, interruptible, last_chance
        try:
            with interruptible():
                try:
                    os.kill(os.getpid(), signal.SIGTERM)
                except Interrupted:
                    os.kill(os.getpid(), signal.SIGHUP)  # before the undo's handler: held, not raised
                    print("undo starts", flush=True)
                    with last_chance(lambda: "service x. Remove it with: graphsite teardown x"):
                        print("undo ran to the end", flush=True)
        except Interrupted:
            print("raised again", flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 128 + 1, done  # SIGHUP
    assert done.stdout == "undo starts\n", done
    assert "stopped by a second SIGHUP during the undo: service x. Remove it with: graphsite teardown x" in done.stderr


def test_gc_sweeps_the_lock_files_of_killed_runs_and_leaves_a_held_one(tmp_path):
    from graphsite.publisher.lock import subdomain_lock, sweep

    (tmp_path / "gsx-killed.lock").write_text("pid 1")  # what a SIGKILLed run leaves
    (tmp_path / "other-killed.lock").write_text("pid 2")
    with subdomain_lock(tmp_path, "gsx-running"):
        assert sweep(tmp_path, "gsx").removed == ("gsx-killed",)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["gsx-running.lock", "other-killed.lock"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-killed.lock"]
