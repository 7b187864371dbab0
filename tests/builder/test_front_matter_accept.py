"""A report's own `accept:` front matter: the findings its author keeps, carried wherever the report is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsite.cli import main

BODY = "# R\n\n## One\n\nSee [[1](https://example.org/a)].\n\n## References\n\n1. A — https://example.org/b\n"


def build(tmp_path: Path, front: str, *args: str):
    source = tmp_path / "r.md"
    source.write_text(f"---\ntitle: R\n{front}---\n{BODY}", encoding="utf-8")
    return CliRunner().invoke(main, ["build", str(source), "--out", str(tmp_path / "site"), "--json", *args],
                              env={"GRAPHSITE_CONFIG": None})


def test_an_accepted_finding_no_longer_fails_strict(tmp_path: Path) -> None:
    refused = build(tmp_path, "", "--strict")
    assert refused.exit_code == 1 and "citation-mismatch" in json.loads(refused.stdout)["error"]
    accepted = build(tmp_path, 'accept:\n  - code: mismatch\n    number: 1\n    reason: "kept on purpose"\n',
                     "--strict")
    assert accepted.exit_code == 0, accepted.output
    mismatch = [w for w in json.loads(accepted.stdout)["warnings"] if w["code"] == "citation-mismatch"]
    assert mismatch and all(w["accepted"] == "kept on purpose" for w in mismatch)


@pytest.mark.parametrize(("front", "message", "line"), [
    ("accept:\n  - code: mismatch\n", "`accept[0]`: an acceptance needs a code and a reason", 4),
    ('accept:\n  - code: nonsense\n    reason: "x"\n', "`accept[0].code`: unknown code 'nonsense'", 4),
    ('accept:\n  - code: mismatch\n    reason: "x"\n    why: "y"\n', "`accept[0]`: unknown key `why`", 6),
    ('accept:\n  - code: mismatch\n    reason: "x"\n    number: "one"\n', "`accept[0].number`: expected a citation "
     "number", 6),
    ("accept: all\n", "`accept`: expected a list of acceptances", 3),
])
def test_a_wrong_acceptance_names_its_field_and_line(tmp_path: Path, front: str, message: str, line: int) -> None:
    result = build(tmp_path, front)
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert f"r.md:{line}: front matter field {message}" in error, error
    assert not (tmp_path / "site").exists()
