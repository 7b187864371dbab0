"""list reads the systems (orphans included); gc tears down only what has expired."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytestmark = pytest.mark.lab


def _entries(publab) -> dict:
    result = publab.run("list", "--json")
    assert result.exit_code == 0, result.stderr
    return {e["subdomain"]: e for e in json.loads(result.stdout)["deployments"]
            if e["subdomain"].startswith(publab.prefix + "-")}


def test_list_shows_deployments_and_orphans(publab):
    from graphsite.publisher.deployment import Stamp
    from graphsite.publisher.route import RouteSettings, route_document
    from graphsite.publisher.route_files import write_route

    config = publab.config
    whole = publab.name()
    assert publab.run("deploy", "--subdomain", whole, "--no-verify", "--ttl", "1h").exit_code == 0
    lone_route, lone_record, lookalike = publab.name(), publab.name(), publab.name()
    write_route(Path(config.deploy.dynamic_dir) / f"{lone_route}.yml",
                route_document(RouteSettings.from_config(config), lone_route, f"{lone_route}.{config.site.domain}"),
                Stamp(lone_route, f"{lone_route}.{config.site.domain}", "0a1b2c3d", "2026-07-01T12:00:00Z"))
    lone_fqdn = f"{lone_record}.{config.site.domain}"
    publab.api("POST", "dns_records", type="A", name=lone_fqdn, content="127.0.0.1", ttl=60,
               comment=Stamp(lone_record, lone_fqdn, "0a1b2c3d", "2026-07-01T12:00:00Z").record_comment())
    # a hand-made record whose comment merely starts like graphsite's: foreign, shown, never a deployment
    publab.api("POST", "dns_records", type="A", name=f"{lookalike}.{config.site.domain}", content="127.0.0.1",
               ttl=60, comment=f"graphsite: {lookalike} left behind")
    entries = _entries(publab)
    assert entries[whole]["orphan"] is None and entries[whole]["replicas"] == "1/1"
    assert len(entries[whole]["nodes"]) == 1 and entries[whole]["nodes"][0]  # the node the task runs on
    assert entries[whole]["expires"] and entries[whole]["expired"] is False
    assert entries[whole]["state"] == "deployed" and entries[whole]["missing"] == []
    assert entries[lone_route]["orphan"] == "orphan: no service, record, configs"
    assert entries[lone_route]["state"] == "partial"
    assert entries[lone_record]["orphan"] == "orphan: no service, route, configs"
    assert lookalike not in entries
    foreign = [f for f in json.loads(publab.run("list", "--json").stdout)["foreign"] if lookalike in f["name"]]
    assert [f["claim"] for f in foreign] == ["not proven"], foreign
    table = publab.run("list").stdout.splitlines()
    assert table[0].split() == ["FQDN", "AGE", "EXPIRES", "SHA256", "REPLICAS", "NODES", "ACCESS",
                                "VERSIONS", "STATE"]
    assert entries[whole]["versions"] == 1
    assert any(line.startswith(f"{lone_route}.") and "partial: no service, record" in line for line in table)
    (Path(config.deploy.dynamic_dir) / f"{whole}.yml").unlink()  # and the reverse: a service without its route
    assert _entries(publab)[whole]["orphan"] == "orphan: no route"
    for name in (whole, lone_route, lone_record):  # teardown handles half-deployed names too
        assert publab.run("teardown", name).exit_code == 0
    assert set(_entries(publab)) == set()


def test_list_name_shows_that_deployment_alone_or_says_nothing_is_deployed(publab):
    name, never = publab.name(), publab.name()
    deployed = publab.run("deploy", "--subdomain", name, "--no-verify")
    assert deployed.exit_code == 0, deployed.stderr
    fqdn = f"{name}.{publab.config.site.domain}"
    one = publab.run("list", fqdn.upper(), "--json")
    assert one.exit_code == 0, one.stderr
    shown = json.loads(one.stdout)
    assert shown["name"] == name and shown["unreadable"] == {}
    assert [(d["subdomain"], d["state"]) for d in shown["deployments"]] == [(name, "deployed")]
    table = publab.run("list", name)
    assert table.exit_code == 0, table.stderr
    assert [line.split()[0] for line in table.stdout.splitlines()] == ["FQDN", fqdn]
    nothing = publab.run("list", never)
    assert nothing.exit_code == 0, nothing.stderr
    assert nothing.stdout == "" and f"nothing deployed for {never}: " in nothing.stderr


def test_gc_removes_only_expired_deployments(publab):
    short, long, forever = publab.name(), publab.name(), publab.name()
    for name, ttl in ((short, ["--ttl", "1s"]), (long, ["--ttl", "1h"]), (forever, [])):
        result = publab.run("deploy", "--subdomain", name, "--no-verify", *ttl)
        assert result.exit_code == 0, result.stderr
    # gc's clock two seconds ahead: `short` (--ttl 1s) has expired by then, without the test waiting for it
    now = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    dry = publab.run("gc", "--dry-run", "--json", "--prefix", publab.prefix, "--now", now)
    assert dry.exit_code == 0, dry.stderr
    collected = json.loads(dry.stdout)["collected"]
    assert [(c["subdomain"], c["outcome"]) for c in collected] == [(short, "would tear down")]
    assert set(_entries(publab)) == {short, long, forever}  # the dry run touched nothing
    later = (datetime.now(UTC) + timedelta(hours=2)).isoformat()  # gc judges by the clock it is given
    dry = publab.run("gc", "--dry-run", "--json", "--prefix", publab.prefix, "--now", later)
    assert dry.exit_code == 0, dry.stderr
    assert sorted(c["subdomain"] for c in json.loads(dry.stdout)["collected"]) == sorted([short, long])
    done = publab.run("gc", "--prefix", publab.prefix, "--now", now)
    assert done.exit_code == 0, done.stderr
    assert f"tore down {short} (expired " in done.stdout
    assert set(_entries(publab)) == {long, forever}
    for name in (long, forever):
        assert publab.run("teardown", name).exit_code == 0
