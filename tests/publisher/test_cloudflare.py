"""The Cloudflare adapter's errors, against a real socket where nothing listens (no lab needed)."""

import os
import socket
from dataclasses import replace

import pytest

from graphsite.errors import ConfigError
from graphsite.publisher.cloudflare import Dns, DnsError
from graphsite.publisher.deployment import Claim

SECRET = "gs-test-secret-token-unreachable"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_an_unreachable_api_names_the_url_and_never_the_token(production, monkeypatch):
    base = f"http://127.0.0.1:{_closed_port()}/client/v4"
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", SECRET)
    config = production.replace("dns", api_base_url=base, zone_id="0" * 32, retries=0, timeout=2.0)
    dns = Dns(config)
    try:
        with pytest.raises(DnsError) as info:
            dns.records("gs-x.hhdevs.space")
    finally:
        dns.close()
    assert f"cannot reach {base} (ConnectError)" in info.value.message
    assert "dns.api_base_url" in info.value.message and SECRET not in info.value.message


def test_a_zone_id_cloudflare_does_not_know_points_at_the_setting(private_cf):
    config, _ = private_cf
    dns = Dns(config.replace("dns", zone_id="f" * 32))
    try:
        with pytest.raises(DnsError) as info:
            dns.records("gs-x.lab.graphsite.test")
    finally:
        dns.close()
    assert "HTTP 404: 7003" in info.value.message and "check dns.zone_id" in info.value.message


def test_no_token_is_a_config_error(production, monkeypatch):
    monkeypatch.delenv("CLOUDFLARE_API_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="no Cloudflare API token"):
        Dns(production)


def test_a_create_whose_answer_was_lost_takes_the_record_cloudflare_made(private_cf, fixed_plan):
    """The first POST creates the record but answers 500; the SDK's retry is refused as identical (81058):
    graphsite returns the record that exists instead of failing and leaving it behind."""
    config, control = private_cf
    stamp = replace(fixed_plan.stamp, name="gs-lost", fqdn="gs-lost.lab.graphsite.test")
    wanted = replace(fixed_plan.record, name=stamp.fqdn, content="127.0.0.1", comment=stamp.record_comment())
    control.fail_next(1, status=500, match=wanted.name, after=True)
    dns = Dns(config)
    try:
        made = dns.create(wanted)
    finally:
        dns.close()
    stored = control.records()
    assert [(r["id"], r["name"], r["content"]) for r in stored] == [(made.id, wanted.name, "127.0.0.1")]
    answers = [(r["method"], r["status"], r["fault"]) for r in control.requests()]
    assert answers[:2] == [("POST", 500, True), ("POST", 400, False)]
    assert made.claim(config.site.domain) == Claim.OURS


def test_a_create_refused_for_another_reason_still_fails(private_cf, fixed_plan):
    """Only 81058 with an identical A record found is taken as success: a CNAME conflict (81053) is an error."""
    import httpx

    from graphsite.config import TOKEN_ENV

    config, control = private_cf
    name = "gs-cname.lab.graphsite.test"
    made = httpx.post(f"{config.dns.api_base_url}/zones/{config.dns.zone_id}/dns_records",
                      headers={"Authorization": f"Bearer {os.environ[TOKEN_ENV]}"},
                      json={"type": "CNAME", "name": name, "content": "elsewhere.example.com", "ttl": 60})
    assert made.status_code == 200, made.text
    dns = Dns(config)
    try:
        with pytest.raises(DnsError, match="HTTP 400: 81053"):
            dns.create(replace(fixed_plan.record, name=name, content="127.0.0.1"))
    finally:
        dns.close()
    assert [r["type"] for r in control.records()] == ["CNAME"]


@pytest.mark.parametrize("content", [None, "not a certificate\n"])
def test_a_ca_bundle_that_cannot_load_names_the_setting(production, monkeypatch, tmp_path, content):
    from graphsite.usecases.verify import VerifySettings, run_checks

    bundle = tmp_path / "ca.pem"
    if content is not None:
        bundle.write_text(content)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", SECRET)
    with pytest.raises(ConfigError, match=f"dns.ca_bundle: cannot load {bundle}"):
        Dns(production.replace("dns", ca_bundle=str(bundle)))
    with pytest.raises(ConfigError, match=f"verify.ca_bundle: cannot load {bundle}"):
        run_checks(VerifySettings.from_config(production.replace("verify", ca_bundle=str(bundle))), target=None,
                   clients=None)


def test_a_restamp_changes_the_comment_alone_and_can_put_it_back(private_cf, fixed_plan):
    """An earlier deploy's record (here graphsite 0.1's comment) is kept, its comment made this deploy's stamp;
    the undo of a failed redeploy puts the earlier comment back the same way."""
    config, control = private_cf
    stamp = replace(fixed_plan.stamp, name="gs-older", fqdn="gs-older.lab.graphsite.test")
    earlier = replace(fixed_plan.record, name=stamp.fqdn, content="127.0.0.1",
                      comment=f"graphsite: gs-older (created {stamp.created}, expires {stamp.expires})")
    dns = Dns(config)
    try:
        made = dns.create(earlier)
        restamped = dns.restamp(made, stamp.record_comment())
        assert restamped == replace(made, comment=stamp.record_comment())
        assert [(r["id"], r["comment"]) for r in control.records()] == [(made.id, stamp.record_comment())]
        assert dns.restamp(restamped, made.comment) == made
    finally:
        dns.close()
    assert [r["method"] for r in control.requests()] == ["POST", "PATCH", "PATCH"]
