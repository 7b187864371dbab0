"""teardown and gc against the lab, through the command, when what they meet is not right: a `verify.ca_bundle`
that cannot be loaded refuses them before anything is removed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

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

