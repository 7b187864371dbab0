"""Redeploy under constant requests: start-first rolls the new page out with no failed request."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

pytestmark = pytest.mark.lab


def _first_then_second(publab, tmp_path) -> tuple[str, dict, object]:
    """Deploy a fresh name; return it, the first deploy's JSON, and the source of a second edition."""
    name = publab.name()
    first = publab.run("deploy", "--subdomain", name, "--no-verify", "--json")
    assert first.exit_code == 0, first.stderr
    source = tmp_path / "second.md"
    source.write_text("# Second edition\n\n## 1. What changed\n\nA new page for the same name.\n", encoding="utf-8")
    return name, json.loads(first.stdout), source


def test_redeploy_under_constant_requests_sees_no_failure(publab, tmp_path):
    from graphsite.publisher import probe

    name, old, source = _first_then_second(publab, tmp_path)
    config, seen, failures, stop = publab.config, [], [], threading.Event()
    for _ in range(100):  # --no-verify returns before the edge serves the route (and has its certificate)
        if probe.fetch("https", old["fqdn"], config.verify.origin_address,
                       ca_bundle=config.verify.ca_bundle).status == 200:
            break
        stop.wait(0.1)
    else:
        pytest.fail(f"the edge never served {old['fqdn']} in 10 s")

    def hammer():
        while not stop.is_set():
            result = probe.fetch("https", old["fqdn"], config.verify.origin_address,
                                 ca_bundle=config.verify.ca_bundle)
            if result.status != 200:
                failures.append(result.error or f"HTTP {result.status}")
            else:
                seen.append(hashlib.sha256(result.body).hexdigest())

    thread = threading.Thread(target=hammer, daemon=True)
    thread.start()
    try:
        second = publab.run("deploy", str(source), "--subdomain", name, "--json")
        for _ in range(20):  # a few more requests after the switch
            stop.wait(0.05)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert second.exit_code == 0, second.stderr
    new = json.loads(second.stdout)
    assert {c["status"] for c in new["checks"]} == {"PASS"}, new["checks"]
    assert failures == [], f"{len(failures)} failed of {len(failures) + len(seen)}: {failures[:3]}"
    assert seen[0] == old["sha256"] and seen[-1] == new["sha256"] and len(seen) > 20
    assert {r["resource"]: r["outcome"] for r in new["resources"]}["service"] == "updated"
    clients = publab.clients()
    try:
        assert set(clients.swarm.configs(name)) == {c["name"] for c in new["service"]["configs"]}
    finally:
        clients.close()
    assert publab.run("teardown", name).exit_code == 0


def test_a_failed_redeploy_leaves_the_previous_version_serving(publab):
    name = publab.name()
    first = publab.run("deploy", "--subdomain", name, "--no-verify", "--json")
    assert first.exit_code == 0, first.stderr
    bad = publab.run("deploy", "--subdomain", name, "--no-verify",
                     env={"GRAPHSITE_DEPLOY_IMAGE": "graphsite-lab/no-such:0"})
    assert bad.exit_code == 1
    assert "rolled the update back; the previous version still runs" in bad.stderr
    assert "No such image" in bad.stderr
    verify = publab.run("verify", name, "--json")
    assert verify.exit_code == 0, verify.stderr
    again = publab.run("deploy", "--subdomain", name, "--no-verify", "--json")  # the rollback is no obstacle
    assert again.exit_code == 0, again.stderr
    assert {r["resource"]: r["outcome"] for r in json.loads(again.stdout)["resources"]}["service"] == "unchanged"
    assert publab.run("teardown", name).exit_code == 0


def test_a_redeploy_that_fails_verification_restores_the_previous_version(publab, tmp_path):
    """The new version converges but verify fails: the service goes back to the previous spec and the new
    page's config is removed (it was 'in use' while the service still pointed at it)."""
    import certifi

    name, old, source = _first_then_second(publab, tmp_path)
    bad = publab.run("deploy", str(source), "--subdomain", name,
                     env={"GRAPHSITE_VERIFY_CA_BUNDLE": certifi.where(), "GRAPHSITE_VERIFY_DEADLINE": "1"})
    assert bad.exit_code == 1
    undone = [line.split("undone: ")[1] for line in bad.stderr.splitlines() if "undone: " in line]
    assert "NOT undone" not in bad.stderr, bad.stderr
    assert undone[0] == f"restored the previous version of service {name}"
    # the new page, and the new Caddyfile (it sends the page's own CSP as a header, so it changes with the page)
    assert [u.split()[:2] for u in undone[1:]] == [["removed", "config"], ["removed", "config"]]
    clients = publab.clients()
    try:
        service = clients.swarm.service(name)
        assert service.labels["graphsite.sha256"] == old["sha256"]
        assert set(service.configs) == {c["name"] for c in old["service"]["configs"]}
        assert set(clients.swarm.configs(name)) == set(service.configs)
    finally:
        clients.close()
    verify = publab.run("verify", name, "--json")
    assert verify.exit_code == 0, verify.stderr
    assert publab.run("teardown", name).exit_code == 0
