"""Values a user can write that Python's own conversions refuse or overflow on: each is a configuration error
naming the field (or the file and line) and where it came from, never a traceback."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import click
import jsonschema
import pytest
from click.testing import CliRunner

from graphsite.cli import main
from graphsite.codes import Exit
from graphsite.config import load_config
from graphsite.errors import ConfigError
from graphsite.paths import schema_path

TOO_MANY_DIGITS = "9" * (sys.get_int_max_str_digits() + 1)


def run(*args: str, env: dict[str, str | None]) -> click.testing.Result:
    return CliRunner().invoke(main, list(args), env={"NO_COLOR": "1", "GRAPHSITE_CONFIG": None, **env})


@pytest.mark.parametrize("value", ["--5", "²", "٣", TOO_MANY_DIGITS])
@pytest.mark.parametrize("command", [["config", "show"], ["build", "{report}", "--out", "{out}"]])
def test_a_whole_number_python_refuses_is_an_error_naming_the_variable(tmp_path, command, value):
    report = tmp_path / "r.md"
    report.write_text("# Report\n\nText.\n", encoding="utf-8")
    argv = [part.format(report=report, out=tmp_path / "site") for part in command]
    for variable in ("GRAPHSITE_LINKS_CONCURRENCY", "GRAPHSITE_BUILD_MAX_BYTES"):
        result = run(*argv, env={variable: value})
        assert result.exit_code == Exit.FAILED, result.output
        assert isinstance(result.exception, SystemExit), result.exception
        key = variable.removeprefix("GRAPHSITE_").lower().replace("_", ".", 1)
        longest = f"a whole number of at most {sys.get_int_max_str_digits():,} digits"
        expected = longest if value == TOO_MANY_DIGITS else "int"
        assert f"{key}: expected {expected}, got str" in result.output and f"(from {variable})" in result.output
        assert len(result.output) < 300, result.output  # a value of 4,301 digits is shown shortened


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "graphsite.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("key,most", [("links.timeout", "100,000,000"), ("links.concurrency", "100,000,000"),
                                      ("build.max_bytes", "1,073,741,824"), ("build.max_image_bytes", "100,000,000")])
def test_an_integer_past_the_largest_float_is_out_of_range(tmp_path, key, most):
    section, _, name = key.partition(".")
    path = _write(tmp_path, f"[{section}]\n{name} = 1{'0' * 400}\n")
    shown = "inf" if key == "links.timeout" else r"10000000000.*… \(401 characters\)"  # a float, or whole
    with pytest.raises(ConfigError, match=rf"{key}: expected at most {most}, got {shown}"):
        load_config(path, environ={})


def test_an_integer_longer_than_python_reads_names_the_file_and_line(tmp_path):
    path = _write(tmp_path, f"[links]\nretries = 2\ntimeout = {TOO_MANY_DIGITS}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, environ={})
    assert err.value.message.startswith(f"{path}: invalid TOML: a number at line 3 has more digits")
    result = run("config", "show", env={"GRAPHSITE_CONFIG": str(path)})
    assert result.exit_code == Exit.FAILED and isinstance(result.exception, SystemExit), result.output


@pytest.mark.parametrize("value", ["[" * 3000 + "]" * 3000, "{a = " * 3000 + "1" + "}" * 3000],
                         ids=["arrays", "inline-tables"])
def test_a_value_nested_too_deeply_to_read_is_invalid_toml(tmp_path, value):
    path = _write(tmp_path, f"[links]\nskip = {value}\n")
    with pytest.raises(ConfigError, match=rf"^{path}: invalid TOML: arrays or tables nested too deeply"):
        load_config(path, environ={})
    result = run("config", "show", env={"GRAPHSITE_CONFIG": str(path)})
    assert result.exit_code == Exit.FAILED and isinstance(result.exception, SystemExit), result.output


def test_a_token_file_that_is_not_utf8_names_the_setting_not_the_token(tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_bytes(b"\xffsecret\xfe")
    monkeypatch.delenv("CLOUDFLARE_API_TOKEN", raising=False)
    config = load_config(_write(tmp_path, f'[dns]\ntoken_file = "{token_file}"\n'), environ={})
    with pytest.raises(ConfigError) as err:
        config.token()
    assert err.value.detail == f"dns.token_file: {token_file} is not UTF-8 text"
    assert "secret" not in str(err.value) and "0xff" not in str(err.value)


HUGE_HEX = "0x" + "f" * 5000  # tomllib reads hex, octal and binary integers of any length, unlike decimal ones


@pytest.mark.parametrize("text,key", [
    (f"[links]\nretries = {HUGE_HEX}\n", "links.retries"),
    (f"[site]\ndomain = {HUGE_HEX}\n", "site.domain"),
    (f"[deploy]\nkeep_versions = {HUGE_HEX}\n", "deploy.keep_versions"),
    (f"[deploy]\nport = {HUGE_HEX}\n", "deploy.port"),
    (f"[dns]\nretries = 0o{'7' * 6000}\n", "dns.retries"),
    (f"[links]\nskip = [0b{'1' * 20000}]\n", r"links.skip\[0\]"),
], ids=["range", "type", "bounds", "port", "octal", "list-item"])
def test_a_hex_octal_or_binary_integer_too_long_to_print_is_shown_by_its_size(tmp_path, text, key):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"{key}: expected .*, got .*an integer of [0-9,]+ bits"):
        load_config(path, environ={})
    result = run("config", "show", env={"GRAPHSITE_CONFIG": str(path)})
    assert result.exit_code == Exit.FAILED and isinstance(result.exception, SystemExit), result.output
    assert "expected" in result.output and "an integer of" in result.output, result.output
    assert len(result.output) < 400, result.output


def test_a_list_holding_an_integer_too_long_to_print_says_so(tmp_path):
    path = _write(tmp_path, f"[site]\ndomain = [{HUGE_HEX}]\n")
    with pytest.raises(ConfigError, match="site.domain: expected str, got a list holding an integer too long"):
        load_config(path, environ={})


def test_config_show_refuses_a_long_hex_integer_by_its_size_never_a_traceback(tmp_path):
    """dns.ttl had no bounds: a hex integer of 20,000 bits was accepted, and a deploy's JSON to Cloudflare raised
    on it. Every whole number a run sends is bounded now; the refusal shows it by its size."""
    path = _write(tmp_path, f"[dns]\nttl = {HUGE_HEX}\n")
    result = run("config", "show", env={"GRAPHSITE_CONFIG": str(path)})
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "dns.ttl: expected a whole number from 1 to 86400, got an integer of 20,000 bits" in result.output


@pytest.mark.parametrize("value", [100 << 20, 128 << 20, 1 << 30])
def test_build_max_bytes_may_be_raised_to_a_gib_as_its_hint_says(tmp_path, value):
    assert load_config(_write(tmp_path, f"[build]\nmax_bytes = {value}\n"), environ={}).build.max_bytes == value
    with pytest.raises(ConfigError, match="build.max_bytes: expected at most 1,073,741,824, got 1073741825"):
        load_config(_write(tmp_path, f"[build]\nmax_bytes = {(1 << 30) + 1}\n"), environ={})


@pytest.mark.parametrize("text,valid", [
    ("[build]\nmax_bytes = 134217728\n", True), ("[build]\nmax_bytes = 1073741825\n", False),
    ("[links]\ntimeout = 100000001\n", False), ("[links]\nretries = 0\n", True), ("[links]\ntimeout = 0\n", False),
])
def test_the_schema_takes_the_numbers_the_loader_takes(tmp_path, text, valid):
    schema = json.loads(schema_path("graphsite.schema.json").read_text(encoding="utf-8"))
    assert jsonschema.Draft202012Validator(schema).is_valid(tomllib.loads(text)) is valid
    try:
        load_config(_write(tmp_path, text), environ={})
    except ConfigError:
        assert not valid
    else:
        assert valid


@pytest.mark.parametrize("port", [0, 65536, 99_999_999])
def test_a_port_outside_1_to_65535_is_refused(tmp_path, port):
    with pytest.raises(ConfigError, match=f"deploy.port: expected a whole number from 1 to 65535, got {port}"):
        load_config(_write(tmp_path, f"[deploy]\nport = {port}\n"), environ={})
    assert load_config(_write(tmp_path, "[deploy]\nport = 65535\n"), environ={}).deploy.port == 65535
