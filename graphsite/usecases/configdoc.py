"""The configuration as documentation: every effective value with where it came from (`graphsite config show`),
and a JSON Schema of `graphsite.toml` generated from the typed configuration (`graphsite config schema`), whose
descriptions are the fields' docstrings."""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphsite.codes import LINK_STATES
from graphsite.config import CHOICES, CONFIG_ENV, TOKEN_ENV, Config, load_config_sources, number_limits

SCHEMA_ID = "https://graphsite.invalid/graphsite.schema.json"  # an identifier only: nothing is fetched from it
SECTION_DOCS = {
    "site": "Where the pages live.",
    "deploy": "The Swarm service, its content and its Traefik route.",
    "dns": "Cloudflare: the zone and the page's A record.",
    "verify": "How `graphsite verify` reaches the page.",
    "citations": "Citation findings the author accepts.",
    "links": "The live link check (`graphsite links`).",
}


def _choices() -> dict[str, tuple[str, ...]]:
    from graphsite.citations.integrity import CODES

    codes = (*CODES, *(code.removeprefix("citation-") for code in CODES))  # both spellings are accepted
    return {**CHOICES, "citations.accept[].code": codes, "links.fail_on[]": tuple(LINK_STATES)}


@dataclass(frozen=True)
class Setting:
    """One effective value: its dotted name, value, and source (default, file, environment)."""

    name: str
    value: Any
    source: str
    doc: str

    def as_json(self) -> dict[str, Any]:
        return {"value": _plain(self.value), "source": self.source, "doc": self.doc}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    return value


def _sections() -> list[tuple[str, Any]]:
    """Return (name, default value) of each table of graphsite.toml."""
    defaults = Config()
    return [(f.name, getattr(defaults, f.name)) for f in dataclasses.fields(Config) if f.name != "path"]


def effective(explicit: str | Path | None = None, environ: Mapping[str, str] | None = None
              ) -> tuple[Config, list[Setting], str]:
    """Return the configuration, each value with its source, and where the file choice came from."""
    env = os.environ if environ is None else environ
    config, sources = load_config_sources(explicit, environ=env)
    chosen = ("flag --config" if explicit else f"environment {CONFIG_ENV}" if env.get(CONFIG_ENV)
              else "./graphsite.toml" if config.path else "none: built-in defaults")
    settings = []
    for section, _ in _sections():
        values = getattr(config, section)
        for field in dataclasses.fields(values):
            name = f"{section}.{field.name}"
            settings.append(Setting(name, getattr(values, field.name), sources.get(name, "default"),
                                    field.metadata.get("doc", "")))
    return config, settings, chosen


def token_setting(config: Config, environ: Mapping[str, str] | None = None) -> Setting:
    """Return the Cloudflare token as a setting whose value is redacted: whether it is set, and from where."""
    env = os.environ if environ is None else environ
    if env.get(TOKEN_ENV, "").strip():
        source = f"environment {TOKEN_ENV}"
    elif config.dns.token_file:
        source = f"dns.token_file {config.dns.token_file}"
    else:
        source = "none"
    try:
        present = bool(config.token())
    except Exception:  # noqa: BLE001 -- an unreadable token file is shown as such, never raised here
        present = False
        source += " (unreadable)"
    return Setting("token", "<redacted>" if present else "", source, "Cloudflare API token (never shown)")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value > 0 and value.bit_length() > 4096:  # hex, as tomllib read it: repr()
        return hex(value)  # refuses an integer past sys.get_int_max_str_digits()
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def render_toml(settings: list[Setting]) -> str:
    """Return the settings as a TOML document (loadable as graphsite.toml), each value's source as a comment."""
    lines: list[str] = []
    section = ""
    for setting in settings:
        table, _, key = setting.name.partition(".")
        if table != section:
            section = table
            lines.append(f"\n[{table}]")
        if isinstance(setting.value, tuple) and setting.value and dataclasses.is_dataclass(setting.value[0]):
            lines.append(f"# {key}: {len(setting.value)} entries ({setting.source})")
            for entry in setting.value:
                lines.append(f"[[{table}.{key}]]")
                lines += [f"{k} = {_toml_value(v)}" for k, v in dataclasses.asdict(entry).items()]
            continue
        lines.append(f"{key} = {_toml_value(setting.value)}  # {setting.source}")
    return "\n".join(lines).lstrip("\n") + "\n"


# --- JSON Schema ----------------------------------------------------------------------------------------------


def _schema_of(annotation: Any, name: str) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in simple:
        schema: dict[str, Any] = {"type": simple[annotation]}
        if name in _choices():
            schema["enum"] = list(_choices()[name])
        return schema
    if origin is tuple:
        item = typing.get_args(annotation)[0]
        return {"type": "array", "items": _schema_of(item, name + "[]")}
    if dataclasses.is_dataclass(annotation):
        return _table(annotation, name)
    raise TypeError(f"{name}: no JSON Schema for {annotation!r}")


def _table(cls: Any, prefix: str) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties = {}
    for field in dataclasses.fields(cls):
        name = f"{prefix}.{field.name}" if prefix else field.name
        schema = _schema_of(hints[field.name], name)
        schema["description"] = field.metadata.get("doc", "")
        if "bounds" in field.metadata:
            schema["minimum"], schema["maximum"] = field.metadata["bounds"]
        if name in number_limits():
            positive, most = number_limits()[name]
            schema["exclusiveMinimum" if positive else "minimum"], schema["maximum"] = 0, most
        default = field.default if field.default is not dataclasses.MISSING else (
            field.default_factory() if field.default_factory is not dataclasses.MISSING else None)
        if default is not None:
            schema["default"] = _plain(default)
        properties[field.name] = schema
    return {"type": "object", "properties": properties, "additionalProperties": False}


def json_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of graphsite.toml, made from the typed configuration."""
    properties = {}
    for section, value in _sections():
        table = _table(type(value), section)
        table["description"] = SECTION_DOCS.get(section, f"[{section}]")
        properties[section] = table
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "graphsite.toml", "description": "graphsite's configuration (see `graphsite config show`).",
            "type": "object", "properties": properties, "additionalProperties": False}


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=False) + "\n"
