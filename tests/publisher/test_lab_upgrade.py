"""Issue 19's proof: a deployment made by graphsite 0.1.0 (fixtures/v01-deployment.json: that release's own
configs, service, route file and record, put on the lab as 0.1 made them) is listed as deployed, verified,
redeployed (which gives every resource this release's stamp and removes 0.1's old content) and torn down to
nothing. The systems are read directly (Docker's API, the route directory, the fake Cloudflare's store), never
through graphsite's own inventory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphsite import __version__
from graphsite.atomic import write_atomic
from graphsite.publisher.deployment import COMMENT_LIMIT, ID, STAMP, VERSION, Stamp, iso
from graphsite_lab.drive import Driver

pytestmark = pytest.mark.lab

CHECKS = ["service", "origin", "public", "tls", "redirect", "dns", "route"]
SHORT = {"GRAPHSITE_VERIFY_DEADLINE": "5"}  # a check that fails fails in seconds, not after a minute of retries


@pytest.fixture
def driver(lab, publab):
    """The lab read directly and the CLI run as a subprocess, with this session's prefix (publab tears the test's
    names down, and checks that no output held the Cloudflare token)."""
    handle = Driver(lab, publab.prefix)
    yield handle
    publab.outputs.extend(handle.outputs)
    handle.close()


def _made_by_v01(driver: Driver, older: dict) -> str:
    """Make `older` on the lab as graphsite 0.1 did (its configs, its service through the Docker SDK with 0.1's
    arguments, its route file, its record through Cloudflare's API); return the record's id."""
    ids = {c["name"]: driver.docker.create_config(c["name"], c["data"].encode(), labels=c["labels"])["ID"]
           for c in older["configs"]}
    service = older["service"]
    for reference in service["task_template"]["ContainerSpec"]["Configs"]:
        reference["ConfigID"] = ids[reference["ConfigName"]]
    driver.docker.create_service(**service)
    route = older["route"]
    write_atomic(driver.dynamic_dir / route["file"], route["text"], mode=int(route["mode"], 8))
    record = driver.cloudflare_api("POST", "dns_records", **older["record"])["result"]
    assert driver.page_served(service["name"], within=60), f"the edge never served 0.1's {service['name']}"
    return record["id"]


def test_a_deployment_of_graphsite_0_1_is_listed_verified_redeployed_and_torn_down(driver, publab, v01, tmp_path):
    name, created = publab.name(), datetime.now(UTC).replace(microsecond=0)
    older = v01(publab.config, name, created, created + timedelta(days=7))
    assert len(older["record"]["comment"]) <= COMMENT_LIMIT  # else 0.1 would have left the expiry out
    record_id = _made_by_v01(driver, older)
    route = driver.dynamic_dir / f"{name}.yml"

    entry, listed, held, run = driver.compare(name)
    assert listed == held == {("service", name), ("route", str(route)), ("record", record_id),
                              *(("config", c["name"]) for c in older["configs"])}, run
    assert entry is not None and (entry["state"], entry["missing"]) == ("deployed", []), entry
    assert entry["created"] == iso(created) and entry["expires"] == iso(created + timedelta(days=7))
    assert not [f for f in run.json()["foreign"] if name in f["name"]]  # not another configuration's, not unproven

    checked = driver.run("verify", name, "--json", env=SHORT)  # 0.1's Caddyfile sends the security headers too
    assert checked.code == 0, checked
    assert {c["name"]: c["status"] for c in checked.json()["checks"]} == dict.fromkeys(CHECKS, "PASS"), checked
    assert checked.seconds < 20, checked  # far from the minute of retries a failing check would take
    assert checked.json()["made_by"] is None and checked.stderr.splitlines()[0] == (
        f"{name}: made by an older graphsite at {iso(created)}; `graphsite deploy [SOURCE] --subdomain {name}` "
        "brings it up to date"), checked

    source = tmp_path / "upgrade-sample.md"  # the same report, redeployed
    source.write_text(older["page"]["source"], encoding="utf-8")
    redeployed = driver.run("deploy", str(source), "--subdomain", name, "--no-verify", "--json")
    assert redeployed.code == 0, redeployed
    result = redeployed.json()
    caddyfile = next(c["name"] for c in older["configs"] if "-caddyfile-" in c["name"])
    outcomes = {(r["resource"], r["name"]): r["outcome"] for r in result["resources"]}
    # 0.1's Caddyfile config is kept (and restamped) when this release's Caddyfile for the page is the same; the
    # page's CSP follows the builder's output, so a builder change since 0.1 makes it a new config instead
    kept = caddyfile in {c["name"] for c in result["service"]["configs"]}
    assert outcomes.get(("config", caddyfile)) == ("updated" if kept else None), outcomes
    assert outcomes[("record", f"A {name}.{driver.lab.domain}")] == "updated", outcomes
    assert (result["created"], result["expires"]) == (entry["created"], entry["expires"])  # kept, not renewed

    labels = driver.docker.inspect_service(name)["Spec"]["Labels"]
    stamp = Stamp(name, f"{name}.{driver.lab.domain}", labels[ID], iso(created), iso(created + timedelta(days=7)))
    assert Stamp.from_labels(labels) == stamp and (labels[STAMP], labels[VERSION]) == ("2", __version__)
    # the page (built for this name) is a new config and 0.1's page config is gone; so is 0.1's Caddyfile config
    # unless it was kept
    configs = {c["Spec"]["Name"]: c["Spec"]["Labels"] for c in driver.docker.configs(filters={"name": f"{name}-"})
               if c["Spec"]["Name"].startswith(f"{name}-")}
    assert set(configs) == {c["name"] for c in result["service"]["configs"]} and (caddyfile in configs) == kept
    assert {n: Stamp.from_labels(c) for n, c in configs.items()} == dict.fromkeys(configs, stamp)
    assert route.read_text(encoding="utf-8").startswith(stamp.route_comment())
    assert [(r["id"], r["comment"]) for r in driver.records(name)] == [(record_id, stamp.record_comment())]
    entry, listed, held, run = driver.compare(name)
    assert listed == held and entry is not None and entry["state"] == "deployed", run
    assert driver.page_served(name, within=30)
    again = driver.run("verify", name, "--json", env={"GRAPHSITE_VERIFY_DEADLINE": "30"})
    assert again.code == 0 and again.json()["made_by"] == __version__, again
    assert again.stderr.splitlines()[0] == f"{name}: made by graphsite {__version__} at {iso(created)}", again

    gone = driver.run("teardown", name)
    assert gone.code == 0 and "nothing is left and the page is no longer served" in gone.stderr, gone
    assert driver.leftovers(name) == []
