"""The JSON Schemas of graphsite's --json outputs are valid schemas, and strict: they refuse a key they do not
name (real outputs are validated against them in tests/publisher/test_lab_ci_preview.py)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from graphsite.paths import schema_path
from graphsite.usecases.teardown import TeardownSettings, teardown
from tests.publisher.fakes import Fault, Recorder
from tests.publisher.test_rules import _clients, _config, _deploy

NAMES = ["deploy", "verify", "teardown", "diff", "history"]


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_is_a_valid_2020_12_schema(name: str) -> None:
    schema = json.loads(schema_path(f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False and schema["required"]


def test_the_verify_schema_refuses_a_check_it_does_not_know() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(schema_path("verify.schema.json").read_text()))
    check = {"name": "service", "status": "PASS", "evidence": "1/1 replicas", "fix": "", "seconds": 0.1}
    report = {"name": "pr-1-x", "ok": True, "content_checked": True, "made_by": None, "created": None,
              "checks": [check] * 7}
    assert not list(validator.iter_errors(report))
    assert list(validator.iter_errors({**report, "checks": [{**check, "status": "MAYBE"}] * 7}))
    assert list(validator.iter_errors({**report, "token": "x"}))


def test_teardown_reports_finished_or_not_match_their_schema(tmp_path: Path) -> None:
    """The lab test validates a clean teardown; here, on the in-memory fakes, one that could not finish too."""
    validator = jsonschema.Draft202012Validator(json.loads(schema_path("teardown.schema.json").read_text()))
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, "site-1")
    clients.dns.faults.inject("records", Fault.error(), times=2)
    unfinished = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder()).as_json()
    assert unfinished["clean"] is False and not list(validator.iter_errors(unfinished))
    finished = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder()).as_json()
    assert finished["left"] == [] and not list(validator.iter_errors(finished))


def test_the_deploy_schema_takes_known_unknown_or_no_changes_and_no_unknown_that_claims_a_count() -> None:
    """`changes` (what a deploy changes against the live page) is null, known with its counts, or unknown with
    why: an unknown never carries counts, nor a note (tests/publisher/test_deploy_changes.py validates real
    outputs)."""
    schema = json.loads(schema_path("deploy.schema.json").read_text())
    validator = jsonschema.Draft202012Validator({**schema["$defs"]["changes"], "$defs": schema["$defs"]})
    unknown = jsonschema.Draft202012Validator({**schema["properties"]["changes"], "$defs": schema["$defs"]})
    known = {"known": True, "changed": False, "noted": False, "since": None,
             "sections": {"added": 0, "removed": 0, "rewritten": 0}, "citations": 0,
             "references": {"added": 0, "removed": 0, "changed": 0}, "front_matter": []}
    assert not list(validator.iter_errors(known))
    for good in (None, known, {"known": False, "unknown": "HTTP 502, not the page", "noted": False}):
        assert not list(unknown.iter_errors(good)), good
    for bad in ({"known": False, "unknown": "", "noted": False}, {"known": False, "unknown": "x", "noted": True},
                {**known, "known": False}, {"known": False, "unknown": "x", "noted": False, "citations": 0}):
        assert list(unknown.iter_errors(bad)), bad
