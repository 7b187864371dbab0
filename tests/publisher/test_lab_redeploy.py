"""Redeploy under constant requests: start-first rolls the new page out with no failed request."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

pytestmark = pytest.mark.lab


def test_redeploy_under_constant_requests_sees_no_failure(publab, tmp_path):
    from graphsite.publisher import probe

    name = publab.name()
    first = publab.run("deploy", "--subdomain", name, "--no-verify", "--json")
    assert first.exit_code == 0, first.stderr
    old = json.loads(first.stdout)
    source = tmp_path / "second.md"
    source.write_text("# Second edition\n\n## 1. What changed\n\nA new page for the same name.\n", encoding="utf-8")
    config, seen, failures, stop = publab.config, [], [], threading.Event()

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
