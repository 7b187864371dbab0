"""`graphsite config show` and the JSON Schema of graphsite.toml: the schema is generated from the typed
configuration and the checked-in copy must equal it; every real configuration validates against it."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from graphsite.cli import main
from graphsite.config import load_config
from graphsite.paths import schema_path
from graphsite.usecases.configdoc import json_schema, schema_text

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict | None = None):
    base = {"NO_COLOR": "1", "GRAPHSITE_CONFIG": None, "CLOUDFLARE_API_TOKEN": None}
    return CliRunner().invoke(main, list(args), env={**base, **(env or {})})


def test_the_checked_in_schema_is_the_generated_one():
    checked_in = schema_path("graphsite.schema.json").read_text(encoding="utf-8")
    assert checked_in == schema_text(), "run: graphsite config schema > graphsite/schemas/graphsite.schema.json"
    result = run("config", "schema")
    assert result.exit_code == 0 and result.stdout == checked_in


@pytest.mark.parametrize("path", ["deploy/graphsite.toml"])
def test_real_configurations_validate(path):
    jsonschema.Draft202012Validator(json_schema()).validate(tomllib.loads((ROOT / path).read_text()))


def test_the_lab_configuration_validates(tmp_path):
    from graphsite_lab.instance import LabInstance, render_config

    data = tomllib.loads(render_config(LabInstance(root=tmp_path)))
    jsonschema.Draft202012Validator(json_schema()).validate(data)


@pytest.mark.parametrize(("document", "where"), [
    ({"deploy": {"netwrok": "x"}}, "netwrok"),
    ({"deploy": {"port": "80"}}, "'80' is not of type 'integer'"),
    ({"deploy": {"tls": "star"}}, "'star' is not one of"),
    ({"links": {"fail_on": ["gone"]}}, "'gone' is not one of"),
    ({"citations": {"accept": [{"code": "nope", "reason": "x"}]}}, "'nope' is not one of"),
    ({"deploy": {"keep_versions": 0}}, "0 is less than the minimum of 1"),
    ({"deploy": {"keep_versions": 51}}, "51 is greater than the maximum of 50"),
])
def test_the_schema_rejects_what_the_loader_rejects(tmp_path, document, where):
    errors = [e.message for e in jsonschema.Draft202012Validator(json_schema()).iter_errors(document)]
    assert any(where in e for e in errors), errors


def test_every_field_is_described():
    for section in json_schema()["properties"].values():
        assert section["description"]
        for field in section["properties"].values():
            assert field["description"], field


def test_show_names_each_source_and_round_trips(tmp_path):
    config = tmp_path / "site.toml"
    config.write_text('[site]\ndomain = "example.org"\n[deploy]\nreplicas = 2\n')
    result = run("config", "show", "--config", str(config), env={"GRAPHSITE_DEPLOY_PORT": "8080"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"# configuration file: {config} (flag --config)" in lines
    assert f'domain = "example.org"  # file {config}' in lines
    assert "replicas = 2  # file " + str(config) in lines
    assert "port = 8080  # environment GRAPHSITE_DEPLOY_PORT" in lines
    assert 'prefix = "graph-eng"  # default' in lines
    shown = tmp_path / "shown.toml"
    shown.write_text(result.stdout)
    assert load_config(shown, environ={}) == load_config(config, environ={"GRAPHSITE_DEPLOY_PORT": "8080"})


def test_show_names_the_variable_a_value_came_from_in_any_case_and_the_upper_case_one_wins(tmp_path, monkeypatch):
    """`GRAPHSITE_links_timeout` was applied but shown as 'default' (show looked for the upper-case name only);
    with both spellings set, which won depended on the environment's order."""
    from graphsite.usecases.configdoc import effective

    monkeypatch.chdir(tmp_path)  # no ./graphsite.toml
    lower = {"GRAPHSITE_links_timeout": "7"}
    config, settings, _ = effective(None, lower)
    shown = {s.name: s for s in settings}["links.timeout"]
    assert config.links.timeout == shown.value == 7 and shown.source == "environment GRAPHSITE_links_timeout"
    for both in ({**lower, "GRAPHSITE_LINKS_TIMEOUT": "9"}, {"GRAPHSITE_LINKS_TIMEOUT": "9", **lower}):
        config, settings, _ = effective(None, both)
        assert config.links.timeout == 9
        assert {s.name: s for s in settings}["links.timeout"].source == "environment GRAPHSITE_LINKS_TIMEOUT"
    chosen_file = tmp_path / "chosen.toml"
    chosen_file.write_text("[links]\ntimeout = 3.0\n")
    config, settings, chosen = effective(None, {"GRAPHSITE_CONFIG": str(chosen_file)})  # the mapping's, not ours
    assert chosen == "environment GRAPHSITE_CONFIG" and config.links.timeout == 3 and config.path == chosen_file


def test_show_json_redacts_the_token(tmp_path):
    token = "t0ken-" + "x" * 34
    result = run("config", "show", "--json", env={"CLOUDFLARE_API_TOKEN": token, "GRAPHSITE_CONFIG": str(
        ROOT / "deploy" / "graphsite.toml")})
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert token not in result.output
    assert data["token"] == {"value": "<redacted>", "source": "environment CLOUDFLARE_API_TOKEN",
                             "doc": "Cloudflare API token (never shown)"}
    assert data["config_file_source"] == "environment GRAPHSITE_CONFIG"
    assert data["values"]["deploy.network"]["source"].startswith("file ")
    assert data["values"]["deploy.network"]["doc"].startswith("Attachable overlay network Traefik shares")


def test_show_reports_a_bad_configuration_as_one_error(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[deploy]\nport = 'x'\n")
    result = run("config", "show", "--config", str(config))
    assert result.exit_code == 1 and "deploy.port: expected int" in result.output and "Traceback" not in result.output


def test_shell_completion_completes_the_lazy_commands():
    result = CliRunner().invoke(main, [], env={"_GRAPHSITE_COMPLETE": "bash_complete", "COMP_WORDS": "graphsite do",
                                               "COMP_CWORD": "1"}, prog_name="graphsite")
    assert "plain,doctor" in result.output.splitlines(), result.output
