"""deploy/graphsite.toml holds the report's production defaults; the built-in defaults must equal them."""

import dataclasses
import tomllib
from pathlib import Path

from graphsite.config import Config, load_config

DEPLOY_TOML = Path(__file__).resolve().parents[2] / "deploy" / "graphsite.toml"
SECTIONS = ("site", "deploy", "dns", "verify")


def test_deploy_toml_equals_the_built_in_defaults():
    loaded = load_config(DEPLOY_TOML, environ={})
    for section in SECTIONS:
        assert getattr(loaded, section) == getattr(Config(), section), section


def test_deploy_toml_spells_out_every_field():
    data = tomllib.loads(DEPLOY_TOML.read_text())
    for section in SECTIONS:
        fields = {f.name for f in dataclasses.fields(getattr(Config(), section))}
        assert set(data[section]) == fields, section


def test_the_report_values():
    config = load_config(DEPLOY_TOML, environ={})
    assert (config.site.domain, config.site.prefix) == ("hhdevs.space", "graph-eng")
    assert (config.deploy.network, config.deploy.dynamic_dir) == ("dokploy-network", "/etc/dokploy/traefik/dynamic")
    assert (config.deploy.image, config.deploy.port) == ("caddy:2-alpine", 20128)
    assert (config.dns.ttl, config.dns.proxied) == (60, False)
