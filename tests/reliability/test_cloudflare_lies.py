"""Cloudflare answering what it should not, for real: the lab's fake Cloudflare lies (`success: false` on a 200,
JSON cut short, an HTML 502, an empty page that says there are more, totals that do not add up) during
deploy, list, teardown and gc. Nothing is ever decided or removed on an answer that was not a full read, every
failure is one line, and once Cloudflare tells the truth again a teardown leaves nothing.

Each lie is matched on text only this test's name carries, so nothing else on the lab is lied to."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import pytest
import yaml

from graphsite.publisher.deployment import MARKER, Stamp, iso, new_id
from graphsite.publisher.outcomes import KEPT, Outcome
from graphsite_lab.faults import Kind

pytestmark = pytest.mark.lab

QUICK = {"GRAPHSITE_DNS_RETRIES": "0", "GRAPHSITE_DNS_TIMEOUT": "3"}


def _expired(driver, name: str) -> None:
    """Deploy `name` with a TTL that has passed by the time gc looks."""
    made = driver.run("deploy", "--subdomain", name, "--no-verify", "--ttl", "1s")
    assert made.code == 0, made


def _whole(driver, name: str) -> None:
    kinds = {kind for kind, _ in driver.held(name)}
    assert {"service", "config", "route", "record"} <= kinds, kinds


# Every kind of lie on every call is met by the real adapter in tests/publisher/test_cloudflare_answers.py (a
# property test); here a few kinds go through the CLI on the lab, end to end, to prove what each command does.
@pytest.mark.parametrize("kind", [Kind.SUCCESS_FALSE, Kind.EMPTY_PAGE])
def test_a_zone_listing_that_lies_makes_list_fail_and_gc_remove_nothing(driver, names, kind):
    name = names()
    _expired(driver, name)
    driver.cloudflare.lie_next(20, kind, match="type=A")  # the zone-wide listing list and gc make
    try:
        listed = driver.run("list", "--json", env=QUICK)
        assert listed.code == 1 and "could not read Cloudflare" in listed.stderr, listed
        assert not listed.traceback, listed
        collected = driver.run("gc", "--prefix", driver.prefix, env=QUICK)
        assert collected.code == 1 and "nothing was decided or removed" in collected.stderr, collected
        assert "tore down" not in collected.stdout and not collected.traceback, collected
    finally:
        driver.cloudflare.fail_next(0)
    _whole(driver, name)  # the expired deployment is untouched: gc acts only on a full read
    collected = driver.run("gc", "--prefix", driver.prefix)
    assert collected.code == 0 and f"tore down {name}" in collected.stdout, collected
    assert driver.leftovers(name) == []


@pytest.mark.parametrize("kind", [Kind.SUCCESS_FALSE, Kind.HTML])
def test_teardown_whose_record_lookup_lies_says_so_keeps_the_record_and_a_rerun_finishes(driver, names, kind):
    name = names()
    made = driver.run("deploy", "--subdomain", name, "--no-verify", "--ttl", "1h")
    assert made.code == 0, made
    driver.cloudflare.lie_next(20, kind, match=f"name.exact={driver.fqdn(name)}")
    try:
        run = driver.run("teardown", name, env=QUICK)
    finally:
        driver.cloudflare.fail_next(0)
    assert run.code == 1 and f"teardown of {name} is not finished" in run.stderr, run
    assert "nothing is left" not in run.stderr and not run.traceback, run
    assert max(len(line) for line in run.stderr.splitlines()) < 400, run  # an excerpt, never a whole page
    assert {kind for kind, _ in driver.held(name)} == {"record"}  # the page went offline; DNS waits
    again = driver.run("teardown", name)
    assert again.code == 0 and "nothing is left and the page is no longer served" in again.stderr, again
    assert driver.leftovers(name) == []


@pytest.mark.parametrize("kind", [Kind.TRUNCATED])
def test_a_deploy_whose_plan_lookup_lies_stops_in_one_line_before_anything_is_made(driver, names, kind):
    name = names()
    driver.cloudflare.lie_next(5, kind, match=f"name.exact={driver.fqdn(name)}")
    try:
        run = driver.run("deploy", "--subdomain", name, "--no-verify", env=QUICK)
    finally:
        driver.cloudflare.fail_next(0)
    assert run.code == 1 and f"Error: Cloudflare: list records named {driver.fqdn(name)}" in run.stderr, run
    assert not run.traceback, run
    assert driver.leftovers(name) == []


@pytest.mark.parametrize("after", [False, True], ids=["refused", "carried-out"])
def test_a_create_answered_success_false_leaves_no_record_behind(driver, names, after):
    """`200 {"success": false, "result": null}` to the create: an error naming the call (it was an
    AttributeError); when Cloudflare made the record anyway, the undo finds it by name and stamp."""
    name = names()
    driver.cloudflare.lie_next(1, Kind.SUCCESS_FALSE, match=f"graphsite:2 {name}.", after=after)
    run = driver.run("deploy", "--subdomain", name, "--no-verify", env=QUICK)
    assert run.code == 1 and f"Error: Cloudflare: create A {driver.fqdn(name)}: HTTP 200 but success is False" \
        in run.stderr, run
    assert f"proof: nothing of {name} is left" in run.stderr and not run.traceback, run
    assert driver.leftovers(name) == []


def test_records_that_merely_look_like_graphsite_s_are_listed_as_foreign_and_never_removed(driver, names):
    """A hand-made A record whose comment starts with `graphsite:`, and one carrying a whole stamp copied from
    another name: neither is a deployment, gc (past the grace period) and teardown keep both."""
    copied_from, lookalike, copy = names(), names(), names()
    _expired(driver, copied_from)
    comment = next(r["comment"] for r in driver.records(copied_from))
    made = [driver.cloudflare_api("POST", "dns_records", type="A", name=driver.fqdn(lookalike),
                                  content="192.0.2.7", ttl=60, comment=f"graphsite: {lookalike} (by hand)"),
            driver.cloudflare_api("POST", "dns_records", type="A", name=driver.fqdn(copy), content="192.0.2.8",
                                  ttl=60, comment=comment)]
    try:
        listed = driver.run("list", "--json")
        assert listed.code == 0, listed
        foreign = {f["name"].split(" id=")[0]: f["claim"] for f in listed.json()["foreign"]}
        assert foreign.get(f"A {driver.fqdn(lookalike)}") == "not proven", foreign
        assert foreign.get(f"A {driver.fqdn(copy)}") == "not proven", foreign
        names_listed = {d["subdomain"] for d in listed.json()["deployments"]}
        assert lookalike not in names_listed and copy not in names_listed
        collected = driver.run("gc", "--prefix", driver.prefix, env={"GRAPHSITE_DEPLOY_GC_GRACE": "0"})
        assert collected.code == 0 and f"tore down {copied_from}" in collected.stdout, collected
        torn = driver.run("teardown", lookalike)
        assert torn.code == 0 and "kept" in torn.stdout, torn
        assert len(driver.records(lookalike)) == 1 and len(driver.records(copy)) == 1
    finally:
        for answer in made:
            driver.cloudflare_api("DELETE", f"dns_records/{answer['result']['id']}")


def test_two_configurations_on_one_swarm_see_and_touch_only_their_own(driver, names, tmp_path):
    """Staging and production on one Dokploy host: another domain (in the same Cloudflare zone) and another
    dynamic directory, one Swarm. gc under each, run at the same time, removes only its own expired deployment;
    `list` under each shows the other's resources as another configuration's; the live page survives both."""
    routes = tmp_path / "staging-dynamic"
    routes.mkdir()
    (routes / "middlewares.yml").write_text(yaml.safe_dump({"http": {"middlewares": {"redirect-to-https": {
        "redirectScheme": {"scheme": "https", "permanent": True}}}}}))  # the operator's, as in production
    staging = {"GRAPHSITE_SITE_DOMAIN": f"staging.{driver.lab.domain}",
               "GRAPHSITE_DEPLOY_DYNAMIC_DIR": str(routes)}
    live, expired, staged = names(), names(), names()
    try:
        for name, ttl, env in ((live, "1h", None), (expired, "1s", None), (staged, "1s", staging)):
            made = driver.run("deploy", "--subdomain", name, "--no-verify", "--ttl", ttl, env=env)
            assert made.code == 0, made
        seen = driver.run("list", "--json", env=staging)
        assert seen.code == 0, seen
        assert {d["subdomain"] for d in seen.json()["deployments"]} & {live, expired, staged} == {staged}
        other = {f["name"] for f in seen.json()["foreign"] if f["claim"] == "another configuration"}
        assert {live, f"A {driver.fqdn(live)}"} <= {n.split(" id=")[0] for n in other}, other
        both = [driver.start("gc", "--prefix", driver.prefix, env=staging),
                driver.start("gc", "--prefix", driver.prefix)]
        (staged_out, staged_err), (prod_out, prod_err) = (p.communicate(timeout=120) for p in both)
        assert [p.returncode for p in both] == [0, 0], (staged_err, prod_err)
        assert f"tore down {staged}" in staged_out and live not in staged_out and expired not in staged_out
        assert f"tore down {expired}" in prod_out and staged not in prod_out and live not in prod_out
        _whole(driver, live)
        assert driver.page_served(live, within=5)
        assert not any(r["name"].startswith(f"{staged}.") for r in driver.cloudflare.records())
        assert [p.name for p in routes.iterdir()] == ["middlewares.yml"] and driver.leftovers(expired) == []
    finally:
        driver.run("teardown", staged, env=staging)
    assert driver.run("teardown", live).code == 0
    assert driver.leftovers(live) == []


def test_a_config_deploy_leaves_another_configuration_s_page_directory_alone(driver, names):
    """Found by benchmarks/chaos.py: a deploy with `--content config` removed a page directory of its name as
    the previous version's content, judging it by the name in its marker alone. One that staging made (the
    same bind root, another domain) is no old content of this deployment: deploy and teardown keep it."""
    name = names()
    directory = driver.bind_root / name
    directory.mkdir()
    staged = Stamp(name, f"{name}.staging.{driver.lab.domain}", new_id(), iso(datetime.now(UTC)))
    (directory / MARKER).write_text(staged.marker())
    (directory / "index.html").write_text("<p>staging's page</p>")
    before = {path.name: path.read_bytes() for path in directory.iterdir()}
    try:
        made = driver.run("deploy", "--subdomain", name, "--content", "config", "--no-verify")
        assert made.code == 0 and "left in place" not in made.stderr, made
        assert {path.name: path.read_bytes() for path in directory.iterdir()} == before
        torn = driver.run("teardown", name)
        kept = Outcome("directory", str(directory), KEPT, "graphsite did not make it").line()
        assert torn.code == 0 and kept in torn.stdout.splitlines(), torn
        assert {path.name: path.read_bytes() for path in directory.iterdir()} == before
    finally:
        shutil.rmtree(directory, ignore_errors=True)
