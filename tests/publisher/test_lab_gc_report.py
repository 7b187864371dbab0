"""teardown and gc against the lab, through the command, when what they meet is not right: a `verify.ca_bundle`
that cannot be loaded refuses them before anything is removed; an entry of the lock directory that is not a lock
file graphsite made is named in gc's report, which still shows every teardown."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.publisher.test_lab_failures import _left

pytestmark = pytest.mark.lab

LATER = (datetime.now(UTC) + timedelta(days=3)).isoformat()  # gc's clock: a --ttl 1h deployment has expired


def _deploy(publab) -> str:
    name = publab.name()
    result = publab.run("deploy", "--subdomain", name, "--no-verify", "--ttl", "1h")
    assert result.exit_code == 0, result.stderr
    return name


def test_a_ca_bundle_that_cannot_load_refuses_teardown_and_gc_before_anything_is_removed(publab, tmp_path):
    """The proof asked the edge with the bundle after the route, service, configs, directory and record were
    gone: the teardown ended in the bundle's error alone (no outcome, none in --json) and gc called a name it
    had torn down `failed`."""
    name = _deploy(publab)
    made = _left(publab, name)
    assert len(made) == 5 and made[-1] == "route", made  # service, its two configs, record, route
    nope = {"GRAPHSITE_VERIFY_CA_BUNDLE": str(tmp_path / "nope.pem")}
    for args in (["teardown", name, "--json"], ["gc", "--prefix", name, "--now", LATER, "--json"]):
        refused = publab.run(*args, env=nope)
        assert refused.exit_code == 1, refused.stdout + refused.stderr
        assert json.loads(refused.stdout)["error"] == (f"verify.ca_bundle: cannot load {tmp_path / 'nope.pem'}: "
                                                       "No such file or directory"), refused.stdout
        assert " … " not in refused.stderr and "Traceback" not in refused.stderr  # not one step was begun
        assert _left(publab, name) == made
    done = publab.run("gc", "--prefix", name, "--now", LATER, "--json")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert [(c["subdomain"], c["outcome"]) for c in json.loads(done.stdout)["collected"]] == [(name, "tore down")]
    assert _left(publab, name) == []


def test_gc_names_lock_entries_it_cannot_sweep_and_still_shows_what_it_tore_down(publab):
    """A directory and a symbolic link named like lock files made gc's sweep raise after its teardowns: the
    command ended in `deploy.lock_dir: cannot create a lock …: Is a directory`, and what it destroyed was never
    shown."""
    name = _deploy(publab)
    locks = Path(publab.config.deploy.lock_dir)
    strays = [locks / f"{name}-dir.lock", locks / f"{name}-link.lock"]
    strays[0].mkdir()
    strays[1].symlink_to("x")
    try:
        done = publab.run("gc", "--prefix", name, "--now", LATER, "--json")
        assert done.exit_code == 0, done.stdout + done.stderr
        data = json.loads(done.stdout)
        assert [(c["subdomain"], c["outcome"]) for c in data["collected"]] == [(name, "tore down")]
        assert data["locks_left"] == [
            {"path": str(strays[0]), "why": "not a lock file graphsite made: a directory"},
            {"path": str(strays[1]), "why": "not a lock file graphsite made: a symbolic link (graphsite follows "
                                            "none)"}]
        assert f"warning: left in the lock directory: {strays[0]}: not a lock file graphsite made: a directory" \
            in done.stderr
        assert _left(publab, name) == [] and strays[0].is_dir() and strays[1].is_symlink()
    finally:
        strays[0].rmdir()
        strays[1].unlink()
