"""A part of a deployment that is there but whose stamp cannot be read (a route file edited by hand, an A record
whose comment was rewritten) is an unproven occupant of its place, never its absence: `list` shows it, gc does not
collect the deployment as partial and says why, and teardown keeps it, saying so. The real use cases on the
in-memory fakes (tests/publisher/fakes.py) and real route files in a temporary directory."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from graphsite.commands import present
from graphsite.config import Config
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import Claim, Stamp, claim, whose
from graphsite.publisher.outcomes import KEPT, REMOVED
from graphsite.publisher.route import RouteSettings, dump, route_document
from graphsite.usecases import gc as gc_module
from graphsite.usecases.inventory import SurveySettings, survey
from graphsite.usecases.teardown import TeardownSettings, teardown
from tests.publisher.fakes import FakeDns, Recorder
from tests.publisher.test_rules import NOW, _clients, _config, _deploy, _state

NAME, FQDN = "live-1", "live-1.example.com"


def _live(tmp_path: Path) -> tuple[Config, Clients]:
    """A deployment made an hour ago that expires in a week: past deploy.gc_grace, far from its expiry."""
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, NAME, ttl=timedelta(days=7), now=NOW - timedelta(hours=1))
    return config, clients


def _add_a_middleware(route: Path) -> None:
    """What an operator does by hand: a rate limit defined in the route file and put on its router; the stamp on
    the first line stays, the document is no longer graphsite's shape."""
    text = route.read_text()
    first, document = text.splitlines(keepends=True)[0], yaml.safe_load(text)
    document["http"].setdefault("middlewares", {})["ratelimit"] = {"rateLimit": {"average": 100, "burst": 50}}
    router = document["http"]["routers"][f"{NAME}-websecure"]
    router["middlewares"] = [*router.get("middlewares", []), "ratelimit"]
    route.write_text(first + yaml.safe_dump(document, sort_keys=False))


def _served(clients: Clients, config: Config) -> int:
    return clients.edge.fetch("https", FQDN, config.verify.origin_address).status


def _gc(config: Config, clients: Clients, **options: object) -> gc_module.GcReport:
    return gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(), now=NOW, **options)


def test_gc_keeps_a_live_deployment_whose_route_file_was_edited_by_hand_and_names_the_file(tmp_path, capsys):
    config, clients = _live(tmp_path)
    route = Path(config.deploy.dynamic_dir) / f"{NAME}.yml"
    _add_a_middleware(route)
    text, before = route.read_text(), _state(clients, config)
    for dry_run in (True, False):
        report = _gc(config, clients, dry_run=dry_run)
        assert [(c.name, c.outcome) for c in report.collected] == [(NAME, gc_module.RENEWED)]
        why = report.collected[0].reason
        assert str(route) in why and "graphsite's shape" in why and f"graphsite teardown {NAME}" in why, why
        assert report.ok
    assert _state(clients, config) == before and route.read_text() == text
    assert _served(clients, config) == 200
    seen = survey(SurveySettings.from_config(config), clients)
    assert [(f.kind, f.name, str(f.claim)) for f in seen.foreign] == [("route", str(route), "not proven")]
    assert seen.holdings[NAME].occupied == seen.foreign
    present.listing(seen, NOW, as_json=False)
    assert f"not this configuration's, left alone: route {route}: not proven" in capsys.readouterr().err
    present.listing(seen, NOW, as_json=True)
    listed = json.loads(capsys.readouterr().out)
    assert [(f["kind"], f["name"], f["claim"]) for f in listed["foreign"]] == [("route", str(route), "not proven")]
    assert "graphsite's shape" in listed["foreign"][0]["why"]
    # unproven, not absent: as the row's `partial: route not proven` (before, "missing": ["route"], "orphan":
    # "orphan: no route" and "route": false beside "occupied")
    mine = listed["deployments"][0]
    assert (mine["state"], mine["missing"], mine["orphan"], mine["route"], mine["record"]) == (
        "partial", [], None, None, True)


def test_gc_keeps_a_live_deployment_whose_record_comment_was_rewritten_and_names_the_record(tmp_path, capsys):
    config, clients = _live(tmp_path)
    dns = clients.dns
    assert isinstance(dns, FakeDns)
    for comment in ("the blog: do not touch", "graphsite: live-1 (by hand)"):  # no stamp at all, a lookalike
        record = next(r for r in dns.zone.values() if r.name == FQDN)
        dns.zone[record.id] = record.__class__(**{**record.__dict__, "comment": comment})
        before = _state(clients, config)
        report = _gc(config, clients)
        assert [(c.name, c.outcome) for c in report.collected] == [(NAME, gc_module.RENEWED)]
        why = report.collected[0].reason
        assert f"A {FQDN} id={record.id}" in why and f"graphsite teardown {NAME}" in why, why
        assert _state(clients, config) == before and _served(clients, config) == 200
        seen = survey(SurveySettings.from_config(config), clients)
        assert [(f.kind, f.name, str(f.claim)) for f in seen.foreign] == [
            ("record", f"A {FQDN} id={record.id}", "not proven")]
        assert seen.holdings[NAME].occupied == seen.foreign
        present.listing(seen, NOW, as_json=True)
        mine = json.loads(capsys.readouterr().out)["deployments"][0]
        assert (mine["missing"], mine["orphan"], mine["route"], mine["record"]) == ([], None, True, None)


def test_a_foreign_route_file_beside_no_deployment_of_its_name_is_nobody_s_business(tmp_path):
    """A file of another tool in Traefik's directory (Dokploy's own) occupies no deployment's place: not listed."""
    config, clients = _live(tmp_path)
    other = Path(config.deploy.dynamic_dir) / "dokploy.yml"
    other.write_text(yaml.safe_dump({"http": {"routers": {"dokploy": {"rule": "Host(`d.example.com`)",
                                                                      "service": "dokploy"}}}}))
    seen = survey(SurveySettings.from_config(config), clients)
    assert seen.foreign == () and seen.holdings[NAME].occupied == ()
    assert [(c.name, c.outcome) for c in _gc(config, clients).collected] == []


def test_gc_still_collects_an_expired_deployment_and_teardown_says_it_kept_the_edited_route(tmp_path):
    """Expiry is proven by the deployment's own stamps: it is torn down; the route file it cannot prove its own
    is kept, and the report says so, naming the file and what to do with it."""
    config, clients = _live(tmp_path)
    route = Path(config.deploy.dynamic_dir) / f"{NAME}.yml"
    _add_a_middleware(route)
    report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(),
                               now=NOW + timedelta(days=8))
    assert [(c.name, c.outcome) for c in report.collected] == [(NAME, gc_module.TORE_DOWN)]
    assert route.exists() and _state(clients, config)[:3] == ((), (), ())
    torn = report.collected[0].report
    assert torn is not None
    kept = next(o for o in torn.outcomes if o.resource == "route")
    assert kept.outcome == KEPT and "graphsite's shape" in kept.detail and str(route) in kept.detail, kept.detail


def test_teardown_of_a_name_whose_route_was_edited_removes_the_rest_and_says_it_kept_the_file(tmp_path, capsys):
    config, clients = _live(tmp_path)
    route = Path(config.deploy.dynamic_dir) / f"{NAME}.yml"
    _add_a_middleware(route)
    report = teardown(TeardownSettings.from_config(config), NAME, clients, Recorder())
    outcomes = {(o.resource, o.outcome) for o in report.outcomes}
    assert ("route", KEPT) in outcomes and ("service", REMOVED) in outcomes and ("record", REMOVED) in outcomes
    kept = next(o for o in report.outcomes if o.resource == "route")
    assert kept.name == str(route) and "graphsite's shape" in kept.detail and "rm" in kept.detail, kept.detail
    assert route.exists() and _state(clients, config)[:3] == ((), (), ())
    present.teardown(report, as_json=False)
    err = capsys.readouterr().err
    assert f"kept route {route}" in err, err



@pytest.mark.parametrize("stamp", [
    Stamp(NAME, f"{NAME}.other.org", "99999999", "2026-07-01T12:00:00Z"),  # another configuration's
    Stamp(NAME, created="2026-07-01T12:00:00Z", version=1),  # an older graphsite's, nothing of NAME proving it
], ids=["another configuration's", "an older graphsite's"])
def test_teardown_keeps_a_stamped_route_not_ours_inviting_no_removal_of_another_s(tmp_path, stamp):
    """Before, every route file not this configuration's was called "edited by hand, or someone else's … remove
    it by hand (`rm PATH`) if it was NAME's", another configuration's live route included. Now the stamp says
    whose it is, and only a file with none is offered to the user's hand."""
    config = _config(tmp_path)
    clients = _clients(config)
    route_file = Path(config.deploy.dynamic_dir) / f"{NAME}.yml"
    document = dump(route_document(RouteSettings.from_config(config), NAME, f"{NAME}.other.org"))
    # as each wrote its first line: the older graphsite with no domain and no id
    head = stamp.route_comment() if stamp.version > 1 else \
        f"# graphsite: name={NAME} created={stamp.created} expires=\n"
    text = head + document
    route_file.write_text(text)
    report = teardown(TeardownSettings.from_config(config), NAME, clients, Recorder())
    kept = next(o for o in report.outcomes if o.resource == "route")
    owner = claim(stamp, NAME, config.site.domain)
    said = f"{whose(owner, stamp)}: left in place, and Traefik still reads it"
    if owner == Claim.OTHER:  # another configuration's live route: no removal offered
        assert (kept.outcome, kept.detail) == (KEPT, said)
        assert "`rm" not in kept.detail
    else:  # an older graphsite's nothing proves: what to do if it was NAME's is said, as for a hand-edited one
        assert (kept.outcome, kept.detail) == (KEPT, f"{said}; if it was {NAME}'s, remove it by hand "
                                                     f"(`rm {route_file}`)")
    assert route_file.read_text() == text


def test_an_edit_that_keeps_graphsite_s_shape_is_still_the_route_teardown_removes(tmp_path):
    """What docs/publisher.md and docs/reliability.md say: only a router, service or middleware definition added,
    removed or renamed takes a route file out of graphsite's shape. A middleware of another provider put on a
    router, a rule changed, a server added: still the deployment's route, removed by teardown, edit and all."""
    config, clients = _live(tmp_path)
    route_file = Path(config.deploy.dynamic_dir) / f"{NAME}.yml"
    text = route_file.read_text()
    first, document = text.splitlines(keepends=True)[0], yaml.safe_load(text)
    router = document["http"]["routers"][f"{NAME}-websecure"]
    router["middlewares"] = [*router.get("middlewares", []), "ratelimit@file"]
    router["rule"] = f"Host(`{FQDN}`) || Host(`www.{FQDN}`)"
    servers = document["http"]["services"][f"{NAME}-service"]["loadBalancer"]["servers"]
    servers.append({"url": "http://elsewhere:80"})
    route_file.write_text(first + yaml.safe_dump(document, sort_keys=False))
    assert survey(SurveySettings.from_config(config), clients).holdings[NAME].route == route_file
    report = teardown(TeardownSettings.from_config(config), NAME, clients, Recorder())
    assert ("route", REMOVED) in {(o.resource, o.outcome) for o in report.outcomes} and not route_file.exists()
