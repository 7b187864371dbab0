import json

import pytest

from graphsite.errors import ConfigError, DeployError
from graphsite.publisher.plan import MAX_CONFIG_BYTES, make_plan, parse_ttl


def test_service_spec_matches_the_golden_file(fixed_plan, golden):
    text = json.dumps(fixed_plan.service.describe(), indent=2, sort_keys=True) + "\n"
    assert json.loads(text) == json.loads(golden("service-config.json", text))


def test_plan_names_everything_after_the_subdomain(fixed_plan):
    spec = fixed_plan.service.describe()
    assert fixed_plan.fqdn == "graph-eng-0a1b2c.hhdevs.space"
    assert fixed_plan.url == "https://graph-eng-0a1b2c.hhdevs.space/"
    assert str(fixed_plan.route_path) == "/etc/dokploy/traefik/dynamic/graph-eng-0a1b2c.yml"
    assert spec["published_ports"] == [] and spec["update_order"] == "start-first"
    assert spec["labels"]["graphsite.expires"] == "2026-07-08T12:00:00Z"
    assert [c["target"] for c in spec["configs"]] == ["/srv/index.html", "/etc/caddy/Caddyfile"]
    assert all(c["name"].startswith("graph-eng-0a1b2c-") for c in spec["configs"])
    record = fixed_plan.record
    assert (record.type, record.content, record.ttl, record.proxied) == ("A", "129.146.163.180", 60, False)
    assert record.comment.startswith("graphsite:")


def test_config_names_change_with_the_content(production, fixed_plan, sample):
    HTML, NOW = sample
    other = make_plan(production, "graph-eng-0a1b2c", html=HTML + " ", sha256="f" * 64, title="t",
                      content="config", now=NOW)
    assert other.service.configs[0].name != fixed_plan.service.configs[0].name
    assert other.service.configs[1].name == fixed_plan.service.configs[1].name  # same Caddyfile


def test_bind_mode_binds_read_only_and_pins_to_the_node(production, sample):
    HTML, NOW = sample
    plan = make_plan(production, "s1", html=HTML, sha256="a" * 64, title="t", content="bind", now=NOW,
                     node_id="node123")
    spec = plan.service.describe()
    assert spec["bind"] == {"source": "/srv/graphsite/s1", "target": "/srv", "read_only": True}
    assert spec["constraints"] == ["node.id==node123"]
    assert [c["target"] for c in spec["configs"]] == ["/etc/caddy/Caddyfile"]


def test_a_page_too_big_for_a_config_suggests_bind(production, sample):
    _, NOW = sample
    with pytest.raises(DeployError) as info:
        make_plan(production, "s1", html="x" * (MAX_CONFIG_BYTES + 1), sha256="a" * 64, title="t",
                  content="config", now=NOW)
    assert "--content bind" in info.value.message
    make_plan(production, "s1", html="x" * (MAX_CONFIG_BYTES + 1), sha256="a" * 64, title="t",
              content="bind", now=NOW)


@pytest.mark.parametrize("text,seconds", [("30m", 1800), ("12h", 43200), ("7d", 604800), ("2w", 1209600)])
def test_ttl_durations(text, seconds):
    assert parse_ttl(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "7", "0d", "7y", "-1d", "1.5h"])
def test_bad_ttl_is_a_clear_error(text):
    with pytest.raises(ConfigError, match="--ttl"):
        parse_ttl(text)


def test_gc_refuses_a_now_that_is_not_a_stamp():
    from click.testing import CliRunner

    from graphsite.cli import main

    result = CliRunner().invoke(main, ["gc", "--now", "in a second"])
    assert result.exit_code == 2, result.output
    assert "--now" in result.output and "2026-07-01T12:00:00Z" in result.output


def test_a_redeploy_keeps_creation_and_expiry_unless_given(fixed_plan):
    from dataclasses import replace

    from graphsite.publisher.deployment import Deployment

    previous = Deployment(name="graph-eng-0a1b2c", fqdn="x", created="2026-06-01T00:00:00Z",
                          expires="2026-06-30T00:00:00Z")
    unset = replace(fixed_plan, deployment=replace(fixed_plan.deployment, expires=""))
    kept = unset.renewing(previous)
    labels = dict(kept.service.labels)
    assert labels["graphsite.created"] == kept.deployment.created == "2026-06-01T00:00:00Z"
    assert labels["graphsite.expires"] == kept.deployment.expires == "2026-06-30T00:00:00Z"
    assert "c=20260601T000000Z" in kept.record.comment  # every resource carries the same stamp
    renewed = dict(fixed_plan.renewing(previous).service.labels)
    assert renewed["graphsite.expires"] == "2026-07-08T12:00:00Z"


@pytest.mark.parametrize("section,values,field", [
    ("deploy", {"endpoint_mode": "ipvs"}, "deploy.endpoint_mode"),
    ("deploy", {"tls": "dns"}, "deploy.tls"),
    ("site", {"domain": "not a domain"}, "site.domain"),
    ("dns", {"ttl": 5}, "dns.ttl"),
    ("deploy", {"replicas": 0}, "deploy.replicas"),  # its bounds, as the loader checks them (settings_errors)
    ("deploy", {"image": " "}, "deploy.image"),
    ("dns", {"record_content": "hhdevs.space"}, "dns.record_content"),
])
def test_settings_a_deploy_cannot_use_are_named(production, sample, section, values, field):
    html, now = sample
    with pytest.raises(ConfigError) as info:
        make_plan(production.replace(section, **values), "s1", html=html, sha256="a" * 64, title="t",
                  content="config", now=now)
    assert info.value.message.startswith(field + ":")


@pytest.mark.parametrize("content", ["config", "bind"])
def test_the_longest_subdomain_is_41_characters_in_both_modes(production, sample, content):
    html, now = sample
    plan = make_plan(production, "s" * 41, html=html, sha256="a" * 64, title="t", content=content, now=now)
    assert max(len(c.name) for c in plan.service.configs) == 64
    with pytest.raises(ConfigError, match="has 42 characters, more than the 41 .* over 64 characters"):
        make_plan(production, "s" * 42, html=html, sha256="a" * 64, title="t", content=content, now=now)


def test_an_unknown_content_mode_is_refused(production, sample):
    html, now = sample
    with pytest.raises(ConfigError, match="--content"):
        make_plan(production, "s1", html=html, sha256="a" * 64, title="t", content="volume", now=now)


@pytest.mark.parametrize("running, wanted, same", [
    ("caddy:2-alpine@sha256:" + "a" * 64, "caddy:2-alpine", True),    # Swarm resolved the tag
    ("caddy:2-alpine", "caddy:2-alpine", True),                      # a local image: no digest
    ("caddy:2-alpine@sha256:" + "a" * 64, "caddy:2-alpine@sha256:" + "a" * 64, True),  # pinned
    ("caddy:2-alpine@sha256:" + "a" * 64, "caddy:2-alpine@sha256:" + "b" * 64, False),  # a new pin
    ("caddy:2-alpine@sha256:" + "a" * 64, "caddy:2.8-alpine", False),
])
def test_an_image_pinned_by_digest_is_the_same_image(running, wanted, same):
    from graphsite.publisher.swarm import same_image

    assert same_image(running, wanted) is same


def test_replicas_spread_over_nodes_and_bind_refuses_more_than_one(production, sample):
    HTML, NOW = sample
    three = production.replace("deploy", replicas=3)
    plan = make_plan(three, "s1", html=HTML, sha256="a" * 64, title="t", content="config", now=NOW)
    assert plan.service.describe()["spread"] == ["node.id"] and plan.service.describe()["replicas"] == 3
    single = make_plan(production, "s1", html=HTML, sha256="a" * 64, title="t", content="config", now=NOW)
    assert single.service.describe()["spread"] == []
    with pytest.raises(ConfigError) as info:
        make_plan(three, "s1", html=HTML, sha256="a" * 64, title="t", content="bind", now=NOW, node_id="n1")
    assert info.value.message.startswith("deploy.replicas: 3 replicas with --content bind")
    assert "hint: deploy with --content config" in info.value.message
