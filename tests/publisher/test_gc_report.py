"""gc's report survives what it meets after its teardowns: an entry of the lock directory that is not a lock file
graphsite made is named in it (a warning, `locks_left` with --json), never an exception that hides what was torn
down. The real use case and command on the in-memory fakes (tests/publisher/fakes.py) and a real lock directory."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

from graphsite.commands import present
from graphsite.usecases import gc as gc_module
from tests.publisher.fakes import Recorder
from tests.publisher.test_rules import NOW, _clients, _config, _deploy, _state


def test_gc_names_the_lock_entries_it_cannot_sweep_and_still_reports_its_teardowns(tmp_path, capsys):
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, "gone-1", now=NOW - timedelta(days=2))
    locks = Path(config.deploy.lock_dir)
    locks.mkdir()
    (locks / "foo.lock").mkdir()
    (locks / "bar.lock").symlink_to("x")
    (locks / "killed.lock").write_text(f"pid {os.getpid()}")
    report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(), now=NOW)
    assert [(c.name, c.outcome) for c in report.collected] == [("gone-1", gc_module.TORE_DOWN)]
    assert _state(clients, config) == ((), (), (), ())
    assert report.locks_left == (
        (locks / "bar.lock", "not a lock file graphsite made: a symbolic link (graphsite follows none)"),
        (locks / "foo.lock", "not a lock file graphsite made: a directory"))
    assert report.ok  # the deployments are all handled: the lock directory holds no deployment's state
    assert sorted(p.name for p in locks.iterdir()) == ["bar.lock", "foo.lock"]
    present.gc(report, as_json=True)
    out, err = capsys.readouterr()
    assert json.loads(out)["locks_left"] == [
        {"path": str(locks / "bar.lock"), "why": "not a lock file graphsite made: a symbolic link (graphsite "
                                                 "follows none)"},
        {"path": str(locks / "foo.lock"), "why": "not a lock file graphsite made: a directory"}]
    assert f"warning: left in the lock directory: {locks / 'foo.lock'}: not a lock file graphsite made: a " \
           "directory" in err.splitlines()


def test_a_dry_run_sweeps_nothing(tmp_path):
    config = _config(tmp_path)
    locks = Path(config.deploy.lock_dir)
    locks.mkdir()
    (locks / "killed.lock").write_text("pid 1")
    (locks / "foo.lock").mkdir()
    report = gc_module.collect(gc_module.GcSettings.from_config(config), _clients(config), Recorder(), now=NOW,
                               dry_run=True)
    assert report.locks_left == () and sorted(p.name for p in locks.iterdir()) == ["foo.lock", "killed.lock"]
