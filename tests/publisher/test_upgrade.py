"""What graphsite 0.1.0 made (fixtures/v01-deployment.json, written by that release's own code) as this release
judges it: the service proves its domain by its fqdn label and the record by its own name; the configs and the
route file name no domain, so they are this configuration's only beside a proven resource of their name; and a
redeploy's plan writes this release's stamp everywhere, keeping the creation time and the expiry."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphsite import __version__
from graphsite.publisher import route
from graphsite.publisher.clients import Clients
from graphsite.publisher.cloudflare import Record
from graphsite.publisher.deployment import ID, STAMP, VERSION, Claim, Deployment, Stamp, iso
from graphsite.publisher.inventory import record_owner, survey
from graphsite.publisher.plan import make_plan
from graphsite.publisher.records import RecordDecision, decide_record
from tests.publisher.fakes import FakeDns, FakeEdge, FakeSwarm

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
    stamp = route.route_stamp(_route(older, tmp_path))
    assert stamp == V01_STAMP and stamp.claim(NAME, DOMAIN) == Claim.OLDER


@pytest.mark.parametrize("kept", [("service", "record"), ("service",), ("record",)])
def test_the_configs_and_route_of_0_1_are_adopted_beside_a_proven_resource(older, production, tmp_path, kept):
    config = _configured(production, tmp_path)
    inventory = survey(config, _systems(older, tmp_path, kept))
    held = inventory.holdings[NAME]
    assert held.configs == tuple(sorted(c["name"] for c in older["configs"]))
    assert held.route == tmp_path / "dynamic" / f"{NAME}.yml"
    assert (held.deployment is not None, bool(held.records)) == ("service" in kept, "record" in kept)
    assert held.created == iso(CREATED) and held.expires == iso(EXPIRES)
    assert held.state(CREATED + timedelta(days=1)) == ("deployed" if len(kept) == 2 else "partial")
    assert inventory.foreign == ()


def test_the_configs_and_route_of_0_1_alone_are_kept_as_an_older_graphsite_s(older, production, tmp_path):
    inventory = survey(_configured(production, tmp_path), _systems(older, tmp_path, kept=()))
    assert inventory.holdings == {}  # nothing proves they are this configuration's: nothing would remove them
    assert {(f.kind, f.name, f.claim) for f in inventory.foreign} == {
        *(("config", c["name"], Claim.OLDER) for c in older["configs"]),
        ("route", str(tmp_path / "dynamic" / f"{NAME}.yml"), Claim.OLDER)}


def test_another_configuration_adopts_nothing_of_0_1_s_deployment(older, production, tmp_path):
    inventory = survey(_configured(production, tmp_path, "other.org"),
                       _systems(older, tmp_path, kept=("service", "record")))
    assert inventory.holdings == {}
    assert {(f.kind, f.claim) for f in inventory.foreign} == {
        ("service", Claim.OTHER), ("record", Claim.OTHER), ("config", Claim.OLDER), ("route", Claim.OLDER)}


def test_a_redeploy_s_plan_stamps_every_resource_with_this_release_s_stamp(older, production, sample):
    html, _ = sample
    previous = Deployment.from_labels(older["service"]["labels"])
    assert previous is not None
    plan = make_plan(production.replace("site", domain=DOMAIN), NAME, html=html,
                     sha256=hashlib.sha256(html.encode()).hexdigest(), title="Graph engineering", content="config",
                     now=CREATED + timedelta(days=1), deployment_id="0a1b2c3d").renewing(previous)
    stamp = Stamp(NAME, f"{NAME}.{DOMAIN}", "0a1b2c3d", iso(CREATED), iso(EXPIRES))  # the first deploy's times
    assert plan.stamp == stamp
    labels = dict(plan.service.labels)
    assert (labels[STAMP], labels[ID], labels[VERSION]) == ("2", "0a1b2c3d", __version__)
    assert plan.record.comment == stamp.record_comment()
    assert route.dump(plan.route, plan.stamp).startswith(stamp.route_comment())
    record = _record(older)  # kept (it points at the same address), its comment made this stamp
    assert decide_record([record], plan.record, DOMAIN) == RecordDecision("restamp", record)
