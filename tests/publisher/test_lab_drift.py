"""What someone changes by hand after a deploy, against the lab: verify fails it, naming the change, and a
redeploy refuses what it cannot put right."""

from __future__ import annotations

import json
import subprocess

import pytest

pytestmark = pytest.mark.lab

SHORT = {"GRAPHSITE_VERIFY_DEADLINE": "5"}  # a check that fails fails in seconds, not after a minute of retries


def _deployed(publab) -> str:
    name = publab.name()
    result = publab.run("deploy", "--subdomain", name, "--no-verify")
    assert result.exit_code == 0, result.stderr
    return name


def _checks(publab, name: str) -> dict[str, dict]:
    result = publab.run("verify", name, "--json", env=SHORT)
    assert result.exit_code == 1, result.stdout + result.stderr
    return {check["name"]: check for check in json.loads(result.stdout)["checks"]}


def test_a_service_scaled_to_zero_fails_the_service_check(publab):
    """Before, `docker service scale NAME=0` left verify saying `service PASS 0/0 replicas running`."""
    name = _deployed(publab)
    scaled = subprocess.run(["docker", "service", "scale", "--detach", f"{name}=0"], capture_output=True, text=True,
                            check=False)
    assert scaled.returncode == 0, scaled.stderr
    service = _checks(publab, name)["service"]
    assert (service["status"], service["evidence"]) == (
        "FAIL", f"service {name} is scaled to 0 replicas: nothing serves the page; deploy it again (it sets "
                "deploy.replicas)")


@pytest.mark.parametrize("kind,content", [("A", "203.0.113.9"), ("AAAA", "2001:db8::9")])
def test_an_address_record_added_beside_graphsite_s_fails_verify_and_refuses_a_redeploy(publab, kind, content):
    """Before, verify kept only the A records and said `dns PASS` while the record added through Cloudflare's API
    sent some readers to another host, and a redeploy said `EXISTS`."""
    name = _deployed(publab)
    fqdn = f"{name}.{publab.config.site.domain}"
    clients = publab.clients()
    try:
        (ours,) = clients.dns.records(fqdn)
    finally:
        clients.close()
    made = publab.api("POST", "dns_records", type=kind, name=fqdn, content=content, ttl=60)
    assert made.status_code == 200, made.text
    other = made.json()["result"]
    try:
        dns = _checks(publab, name)["dns"]
        assert (dns["status"], dns["evidence"]) == (
            "FAIL", f"A id={ours.id} → 127.0.0.1, but {fqdn} also has {kind} {content} (id={other['id']}, "
                    "graphsite did not make it): readers are split between hosts; remove the records beside it in "
                    "Cloudflare")
        again = publab.run("deploy", "--subdomain", name, "--no-verify")
        assert again.exit_code == 1, again.stderr
        assert f"{kind} {content} (id={other['id']}, graphsite did not make it)" in again.stderr, again.stderr
    finally:
        assert publab.api("DELETE", f"dns_records/{other['id']}").status_code == 200
    assert publab.run("verify", name, env=SHORT).exit_code == 0  # graphsite's record alone passes again
