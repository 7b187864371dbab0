"""The JSON Schemas of graphsite's --json outputs are valid schemas, and strict: they refuse a key they do not
name (real outputs are validated against them in tests/publisher/test_lab_ci_preview.py)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from graphsite.paths import schema_path

NAMES = ["deploy", "verify", "teardown", "diff"]


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_is_a_valid_2020_12_schema(name: str) -> None:
    schema = json.loads(schema_path(f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False and schema["required"]


def test_the_verify_schema_refuses_a_check_it_does_not_know() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(schema_path("verify.schema.json").read_text()))
    check = {"name": "service", "status": "PASS", "evidence": "1/1 replicas", "seconds": 0.1}
    report = {"name": "pr-1-x", "ok": True, "content_checked": True, "made_by": None, "created": None,
              "checks": [check] * 7}
    assert not list(validator.iter_errors(report))
    assert list(validator.iter_errors({**report, "checks": [{**check, "status": "MAYBE"}] * 7}))
    assert list(validator.iter_errors({**report, "token": "x"}))
