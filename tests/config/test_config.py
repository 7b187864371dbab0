"""The configuration: files, environment, unknown keys and wrong types named by their field path."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from graphsite.config import Config, load_config, settings_errors
from graphsite.errors import ConfigError
from graphsite.paths import schema_path


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "graphsite.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_production(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)
    config = load_config(environ={})
    assert config.path is None
    assert config.deploy.dynamic_dir == "/etc/dokploy/traefik/dynamic"
    assert config.deploy.image == "caddy:2-alpine"
    assert config.dns.api_base_url == "https://api.cloudflare.com/client/v4"


def test_file_values_and_types(tmp_path):
    path = _write(tmp_path, '[deploy]\nreplicas = 3\nimage = "x:1"\n[dns]\nproxied = true\n')
    config = load_config(path, environ={})
    assert (config.deploy.replicas, config.deploy.image, config.dns.proxied) == (3, "x:1", True)
    assert config.path == path


def test_every_error_is_collected_and_named(tmp_path):
    path = _write(tmp_path, '[deploy]\nreplicas = "many"\nimgae = "x"\n[nope]\na = 1\n')
    with pytest.raises(ConfigError) as err:
        load_config(path, environ={})
    message = err.value.message
    assert str(path) in message
    assert "deploy.replicas: expected int" in message
    assert "deploy.imgae: unknown key" in message
    assert "nope: unknown key" in message


def test_environment_overrides_file(tmp_path):
    path = _write(tmp_path, '[deploy]\nreplicas = 2\n')
    config = load_config(path, environ={"GRAPHSITE_DEPLOY_REPLICAS": "4", "GRAPHSITE_DNS_TTL": "120"})
    assert (config.deploy.replicas, config.dns.ttl) == (4, 120)


def test_environment_with_wrong_type_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="deploy.port: expected int"):
        load_config(_write(tmp_path, ""), environ={"GRAPHSITE_DEPLOY_PORT": "eighty"})


def test_invalid_toml_names_the_file(tmp_path):
    path = _write(tmp_path, "[deploy\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(path, environ={})


def test_missing_explicit_file(tmp_path):
    with pytest.raises(ConfigError, match="configuration file not found"):
        load_config(tmp_path / "absent.toml", environ={})


def test_token_comes_from_environment_or_file_and_is_not_in_repr(tmp_path, monkeypatch):
    secret = "cf-secret-token-123"
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    monkeypatch.delenv("CLOUDFLARE_API_TOKEN", raising=False)
    config = load_config(_write(tmp_path, f'[dns]\ntoken_file = "{token_file}"\n'), environ={})
    assert config.token() == secret
    assert secret not in repr(config)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", "from-env")
    assert config.token() == "from-env"


def test_acceptance_needs_a_reason(tmp_path):
    path = _write(tmp_path, '[citations]\naccept = [{code = "citation-mismatch"}]\n')
    with pytest.raises(ConfigError, match="needs a code and a reason"):
        load_config(path, environ={})


def test_replace_overrides_one_section():
    config = Config().replace("deploy", replicas=5)
    assert config.deploy.replicas == 5 and Config().deploy.replicas == 1


def _bounded() -> list[tuple[str, str, tuple[int, int]]]:
    return [(section.name, setting.name, setting.metadata["bounds"]) for section in dataclasses.fields(Config)
            if dataclasses.is_dataclass(section.default_factory)
            for setting in dataclasses.fields(section.default_factory) if "bounds" in setting.metadata]


def test_every_bound_a_field_declares_is_checked_and_is_the_schemas():
    """A field's bounds are written once, on the field: the check and the JSON Schema read them there."""
    bounded = _bounded()
    assert ("deploy", "keep_versions", (1, 50)) in bounded
    schema = json.loads(schema_path("graphsite.schema.json").read_text(encoding="utf-8"))
    for section, name, (low, high) in bounded:
        field = schema["properties"][section]["properties"][name]
        assert (field["minimum"], field["maximum"]) == (low, high)
        for value in (low - 1, high + 1, True):
            assert settings_errors(Config().replace(section, **{name: value})) == [
                f"{section}.{name}: expected a whole number from {low} to {high}, got {value!r}"]
        assert settings_errors(Config().replace(section, **{name: high})) == []
