"""teardown and gc against the lab, through the command, when what they meet is not right: a `verify.ca_bundle`
that cannot be loaded refuses them before anything is removed; an entry of the lock directory that is not a lock
file graphsite made is named in gc's report, which still shows every teardown; a route file edited by hand keeps
its live page up through gc, named in gc's report and in list."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from graphsite.atomic import write_atomic
from tests.publisher.test_lab_failures import _left
from tests.publisher.test_lab_routes import _answer, _until

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


def _add_a_header_middleware(route: Path, name: str) -> None:
    """What an operator does by hand: a middleware of their own defined in the route file and put on its router
    (the stamp on the first line stays; the document is no longer graphsite's shape), written as an editor
    saves, whole, so that the edge never reads half of it."""
    text = route.read_text()
    document = yaml.safe_load(text)
    document["http"].setdefault("middlewares", {})["noindex"] = {
        "headers": {"customResponseHeaders": {"X-Robots-Tag": "noindex"}}}
    router = document["http"]["routers"][f"{name}-websecure"]
    router["middlewares"] = [*(router.get("middlewares") or []), "noindex"]
    write_atomic(route, text.splitlines(keepends=True)[0] + yaml.safe_dump(document, sort_keys=False), mode=0o644)


def test_gc_keeps_a_live_page_whose_route_file_was_edited_by_hand_and_names_the_file(publab):
    """The edited file had no stamp graphsite could read: the survey took it for no route, the deployment for
    partial, and gc past deploy.gc_grace removed the service, configs and record, keeping the route: the page
    went down (the edge answered 502). It is an unproven occupant of the route's place now: gc keeps the name
    and names the file, `list` shows it, and `teardown NAME` removes the rest and says it kept the file."""
    name = publab.name()
    deployed = publab.run("deploy", "--subdomain", name, "--no-verify", "--ttl", "7d", "--json")
    assert deployed.exit_code == 0, deployed.stderr
    fqdn, route = json.loads(deployed.stdout)["fqdn"], Path(json.loads(deployed.stdout)["route"])
    past_grace = (datetime.now(UTC) + timedelta(hours=1)).isoformat()  # past the 15 min, far from the expiry
    try:
        _add_a_header_middleware(route, name)
        # the edge loaded the edit: the page is served, with the operator's header
        assert _until(lambda: _answer(publab, fqdn)[0] == 200 and _header(publab, fqdn) == "noindex")
        made = _left(publab, name)
        for args in (["--dry-run"], []):
            kept = publab.run("gc", "--prefix", name, "--now", past_grace, "--json", *args)
            assert kept.exit_code == 0, kept.stdout + kept.stderr
            collected = json.loads(kept.stdout)["collected"]
            assert [(c["subdomain"], c["outcome"]) for c in collected] == [(name, "kept")], collected
            assert str(route) in collected[0]["reason"] and f"graphsite teardown {name}" in collected[0]["reason"]
        said = publab.run("gc", "--prefix", name, "--now", past_grace)
        assert said.exit_code == 0 and said.stdout.startswith(f"kept {name} (partial, not collected: route {route}")
        assert _left(publab, name) == made and len(made) == 5, made  # service, its two configs, record, route
        assert _answer(publab, fqdn)[0] == 200
        listed = json.loads(publab.run("list", name, "--json").stdout)
        assert [(f["kind"], f["name"], f["claim"]) for f in listed["foreign"]] == [("route", str(route), "not proven")]
        assert [o["name"] for o in listed["deployments"][0]["occupied"]] == [str(route)]
        table = publab.run("list", name)
        assert "partial: route not proven" in table.stdout, table.stdout
        assert f"not this configuration's, left alone: route {route}: not proven" in table.stderr, table.stderr
        torn = publab.run("teardown", name)
        assert torn.exit_code == 0, torn.stdout + torn.stderr
        assert f"kept      route {route}: not a route graphsite wrote as it stands" in torn.stdout, torn.stdout
        assert f"kept route {route}: graphsite cannot prove it is {name}'s" in torn.stderr, torn.stderr
        assert _left(publab, name) == ["route"] and _answer(publab, fqdn)[0] != 200
    finally:
        route.unlink(missing_ok=True)


def _header(publab, fqdn: str) -> str:
    from graphsite_lab.probe import fetch

    lab_dir = Path(publab.config.verify.ca_bundle).parent
    got = fetch(fqdn, int(publab.config.verify.resolve_https.rsplit(":", 1)[1]), ca=lab_dir / "ca.pem")
    return {k.lower(): v for k, v in got.headers.items()}.get("x-robots-tag", "")
