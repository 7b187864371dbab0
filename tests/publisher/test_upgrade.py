"""What graphsite 0.1.0 made (fixtures/v01-deployment.json, written by that release's own code) as this release
judges it: the service proves its domain by its fqdn label and the record by its own name; the configs and the
route file name no domain, so they are this configuration's only beside a proven resource of their name; and a
redeploy writes this release's stamp everywhere, keeping the creation time and the expiry: the plan's, and on the
record and configs it keeps."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphsite import __version__
from graphsite.publisher import outcomes, route, route_files
from graphsite.publisher.access import Access
from graphsite.publisher.clients import Clients
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import ID, STAMP, VERSION, Claim, Deployment, Stamp, iso
from graphsite.publisher.plan import make_plan
from graphsite.publisher.records import RecordDecision, decide_record
from graphsite.publisher.swarm import config_labels
from graphsite.publisher.undo import Undo
from graphsite.usecases.deploy import _apply, _Prepared, _undo, config_change
from graphsite.usecases.inventory import SurveySettings, record_owner, survey
from tests.publisher.fakes import FakeDns, FakeEdge, FakeSwarm, Recorder

NAME, DOMAIN = "gs-older-0a1b2c", "example.com"
CREATED = datetime(2026, 7, 1, 12, tzinfo=UTC)
EXPIRES = CREATED + timedelta(days=7)
V01_STAMP = Stamp(NAME, created=iso(CREATED), expires=iso(EXPIRES), version=1)


@pytest.fixture
def older(v01, production):
    """What 0.1 made for the fixture's page deployed as NAME under DOMAIN."""
    return v01(production.replace("site", domain=DOMAIN), NAME, CREATED, EXPIRES)


def _record(older: dict) -> Record:
    made = older["record"]
    return Record(made["name"], made["type"], made["content"], made["ttl"], made["proxied"], made["comment"],
                  id="r1")


def _route(older: dict, dynamic_dir: Path) -> Path:
    dynamic_dir.mkdir(exist_ok=True)
    path = dynamic_dir / older["route"]["file"]
    path.write_text(older["route"]["text"], encoding="utf-8")
    return path


def _systems(older: dict, tmp_path: Path, kept: tuple[str, ...]) -> Clients:
    """Return the systems (fakes of the ports, a real route directory) holding what 0.1 made: its configs and
    route file, and of its service and record the ones `kept` names."""
    swarm, dns = FakeSwarm(), FakeDns()
    if "service" in kept:
        swarm.add_service(NAME, older["service"]["labels"], tuple(sorted(c["name"] for c in older["configs"])))
    for config in older["configs"]:
        swarm.add_config(config["name"], config["labels"])
    if "record" in kept:
        dns.add(older["record"]["name"], older["record"]["comment"], older["record"]["content"])
    _route(older, tmp_path / "dynamic")
    return Clients(dns=dns, swarm=swarm, edge=FakeEdge(swarm, [tmp_path / "dynamic"], b""))


def _configured(production, tmp_path: Path, domain: str = DOMAIN):
    return production.replace("site", domain=domain).replace(
        "deploy", dynamic_dir=str(tmp_path / "dynamic"), bind_root=str(tmp_path / "srv"))


def test_each_resource_of_0_1_says_as_much_as_its_stamp_can(older, tmp_path):
    service = Deployment.from_labels(older["service"]["labels"])
    assert service is not None and (service.made_by, service.stamp_version, service.id) == ("", 1, "")
    assert not service.current and service.fqdn == f"{NAME}.{DOMAIN}"
    assert service.stamp.claim(NAME, DOMAIN) == Claim.OURS  # its fqdn label names the domain
    assert service.stamp.claim(NAME, "other.org") == Claim.OTHER
    record = _record(older)
    assert record.claim(DOMAIN) == Claim.OURS and record_owner(record, DOMAIN) == NAME  # its own name does
    assert record.claim("other.org") == Claim.OTHER and record_owner(record, "other.org") == ""
    for config in older["configs"]:
        stamp = Stamp.from_labels(config["labels"])
        assert stamp == V01_STAMP and stamp.claim(NAME, DOMAIN) == Claim.OLDER  # names no domain
    stamp = route_files.route_stamp(_route(older, tmp_path))
    assert stamp == V01_STAMP and stamp.claim(NAME, DOMAIN) == Claim.OLDER


@pytest.mark.parametrize("kept", [("service", "record"), ("service",), ("record",)])
def test_the_configs_and_route_of_0_1_are_adopted_beside_a_proven_resource(older, production, tmp_path, kept):
    config = _configured(production, tmp_path)
    inventory = survey(SurveySettings.from_config(config), _systems(older, tmp_path, kept))
    held = inventory.holdings[NAME]
    assert held.configs == tuple(sorted(c["name"] for c in older["configs"]))
    assert held.route == tmp_path / "dynamic" / f"{NAME}.yml"
    assert (held.deployment is not None, bool(held.records)) == ("service" in kept, "record" in kept)
    assert held.created == iso(CREATED) and held.expires == iso(EXPIRES)
    assert held.state(CREATED + timedelta(days=1)) == ("deployed" if len(kept) == 2 else "partial")
    assert inventory.foreign == ()


def test_the_configs_and_route_of_0_1_alone_are_kept_as_an_older_graphsite_s(older, production, tmp_path):
    inventory = survey(SurveySettings.from_config(_configured(production, tmp_path)),
                       _systems(older, tmp_path, kept=()))
    assert inventory.holdings == {}  # nothing proves they are this configuration's: nothing would remove them
    assert {(f.kind, f.name, f.claim) for f in inventory.foreign} == {
        *(("config", c["name"], Claim.OLDER) for c in older["configs"]),
        ("route", str(tmp_path / "dynamic" / f"{NAME}.yml"), Claim.OLDER)}


def test_another_configuration_adopts_nothing_of_0_1_s_deployment(older, production, tmp_path):
    inventory = survey(SurveySettings.from_config(_configured(production, tmp_path, "other.org")),
                       _systems(older, tmp_path, kept=("service", "record")))
    assert inventory.holdings == {}
    assert {(f.kind, f.claim) for f in inventory.foreign} == {
        ("service", Claim.OTHER), ("record", Claim.OTHER), ("config", Claim.OLDER), ("route", Claim.OLDER)}


@pytest.fixture
def redeploy(older, production, sample):
    """The plan of a redeploy of 0.1's deployment by this release (the first deploy drew no id: this one does)."""
    html, _ = sample
    previous = Deployment.from_labels(older["service"]["labels"])
    assert previous is not None
    return make_plan(production.replace("site", domain=DOMAIN), NAME, html=html,
                     sha256=hashlib.sha256(html.encode()).hexdigest(), title="Graph engineering", content="config",
                     now=CREATED + timedelta(days=1), deployment_id="0a1b2c3d").renewing(previous)


def test_a_redeploy_s_plan_stamps_every_resource_with_this_release_s_stamp(older, redeploy):
    stamp = Stamp(NAME, f"{NAME}.{DOMAIN}", "0a1b2c3d", iso(CREATED), iso(EXPIRES))  # the first deploy's times
    assert redeploy.stamp == stamp
    labels = dict(redeploy.service.labels)
    assert (labels[STAMP], labels[ID], labels[VERSION]) == ("2", "0a1b2c3d", __version__)
    assert route.dump(redeploy.route, redeploy.stamp).startswith(stamp.route_comment())
    assert redeploy.record.comment == stamp.record_comment()
    record = _record(older)  # kept (it points at the same address), its comment made this stamp
    assert decide_record([record], redeploy.record, DOMAIN) == RecordDecision("restamp", record)


def test_a_config_a_redeploy_keeps_is_given_its_stamp_unless_another_configuration_s(older, redeploy):
    """The same data makes the same config name: a redeploy of an unchanged page keeps 0.1's Caddyfile config,
    and relabels it; another configuration's config of that name is used but never relabelled."""
    caddyfile = redeploy.service.configs[-1]
    v01 = next(c["labels"] for c in older["configs"] if "-caddyfile-" in c["name"])
    assert config_change(redeploy, caddyfile, v01, DOMAIN, proven=True) == outcomes.UPDATED
    assert config_change(redeploy, caddyfile, v01, DOMAIN, proven=False) == outcomes.UNCHANGED  # nothing vouches
    ours = config_labels(redeploy.stamp, caddyfile)
    assert config_change(redeploy, caddyfile, ours, DOMAIN, proven=True) == outcomes.UNCHANGED
    another = config_labels(replace(redeploy.stamp, fqdn=f"{NAME}.other.org"), caddyfile)
    assert config_change(redeploy, caddyfile, another, DOMAIN, proven=True) == outcomes.UNCHANGED
    assert config_change(redeploy, caddyfile, None, DOMAIN, proven=True) == outcomes.CREATED


def test_a_redeploy_of_the_same_page_restamps_all_0_1_made_and_its_undo_puts_it_back(older, production, tmp_path):
    """The same page makes the same configs: the redeploy keeps both of 0.1's, and its record, and gives every
    resource this release's stamp (on the fakes of the ports, through deploy's own steps); a redeploy that fails
    afterwards puts every earlier stamp back."""
    config = _configured(production, tmp_path)
    clients = _systems(older, tmp_path, kept=("service", "record"))
    swarm, dns = clients.docker, clients.dns
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns)
    page = next(c["data"] for c in older["configs"] if "-page-" in c["name"])
    previous = Deployment.from_labels(older["service"]["labels"])
    assert previous is not None
    plan = make_plan(config, NAME, html=page, sha256=older["page"]["sha256"], title=older["page"]["title"],
                     content="config", now=CREATED + timedelta(days=1), deployment_id="0a1b2c3d").renewing(previous)
    assert sorted(c.name for c in plan.service.configs) == sorted(swarm.config_labels)  # 0.1's own names
    seen = survey(SurveySettings.from_config(config), clients, name=NAME).holdings[NAME]  # the plan step's look
    assert seen.answers is not None
    decision = decide_record(list(seen.answers.records), plan.record, DOMAIN)
    prepared, undo = _Prepared(plan, decision, seen.answers.service, Access(), seen, proven=True), Undo()
    made, _ = _apply(prepared, clients, undo, config, Recorder())
    assert {(o.resource, o.outcome) for o in made} == {(kind, outcomes.UPDATED)
                                                       for kind in ("config", "service", "route", "record")}
    route_file = tmp_path / "dynamic" / f"{NAME}.yml"
    stamps = [Stamp.from_labels(swarm.services_by_name[NAME].labels), route_files.route_stamp(route_file)]
    stamps += [Stamp.from_labels(labels) for labels in swarm.config_labels.values()]
    stamps += [r.stamp for r in dns.zone.values()]
    assert stamps == [plan.stamp] * 5 and plan.stamp.version == 2

    _undo(config, clients, prepared, undo, Recorder())  # as if verify had failed next
    assert swarm.services_by_name[NAME].labels == older["service"]["labels"]
    assert swarm.config_labels == {c["name"]: c["labels"] for c in older["configs"]}
    assert route_file.read_text(encoding="utf-8") == older["route"]["text"]
    assert [r.comment for r in dns.zone.values()] == [older["record"]["comment"]]
