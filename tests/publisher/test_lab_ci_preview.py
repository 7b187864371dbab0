"""The CI preview recipe against the lab, in the order a pull request lives: opened → built with --strict, deployed
and verified, its URL printed; a nightly gc that keeps it (not expired); `diff` against the live page; closed → torn
down, nothing left. The steps are docs/ci/preview.sh, the script both CI files run (tests/ci checks they do). Every
--json output is validated against its schema in graphsite/schemas/. One deploy."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from graphsite.paths import schema_path

pytestmark = pytest.mark.lab

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "ci" / "preview.sh"
CHECKS = ["service", "origin", "public", "tls", "redirect", "dns", "route"]
REPORT = """---
title: Preview report
---
# Preview report

What this pull request proposes.

## 1. Findings

The finding, stated plainly [[1](https://example.org/one)].

## 2. Next steps

What we do next.

## References

1. One source. https://example.org/one
"""


def valid(data: Any, schema: str) -> Any:
    jsonschema.Draft202012Validator(json.loads(schema_path(f"{schema}.schema.json").read_text())).validate(data)
    return data


def recipe(publab: Any, out: Path, *args: str, prefix: str = "") -> subprocess.CompletedProcess[str]:
    """Run `preview.sh ARGS` as a CI job would: graphsite from this environment, the lab's configuration."""
    env = {key: value for key, value in os.environ.items() if key != "CLOUDFLARE_API_TOKEN"}
    env.update({"GRAPHSITE_CONFIG": str(publab.config_path), "GRAPHSITE_SITE_PREFIX": publab.prefix,
                "NO_COLOR": "1", "PREVIEW_OUT": str(out), "PYTHON": sys.executable,
                "GRAPHSITE": str(Path(sys.executable).parent / "graphsite"), "PREVIEW_PREFIX": prefix,
                # a session killed before its cleanup leaves a pr-… name gc removes two hours later
                "PREVIEW_TTL": "2h"})
    result = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=240,
                            check=False)
    publab.outputs.append(result.stdout + result.stderr)  # the session's token check reads these too
    return result


def test_a_pull_request_is_previewed_then_torn_down(publab: Any, tmp_path: Path) -> None:
    number, repository = secrets.randbelow(90000) + 10000, f"{publab.prefix}.Report"
    name = f"pr-{number}-{publab.prefix}-report"
    publab.names.append(name)  # torn down after the test whatever happens
    report, out = tmp_path / "report.md", tmp_path / "out"
    report.write_text(REPORT, encoding="utf-8")
    fqdn = f"{name}.{publab.config.site.domain}"

    opened = recipe(publab, out, "open", str(number), repository, str(report))
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout == f"https://{fqdn}/\n"
    deployed = valid(json.loads((out / "deploy.json").read_text()), "deploy")
    assert (deployed["subdomain"], deployed["expires"] is not None) == (name, True)
    assert {c["name"]: c["status"] for c in deployed["checks"]} == dict.fromkeys(CHECKS, "PASS")

    verified = publab.run("verify", name, "--json")
    assert verified.exit_code == 0, verified.stderr
    assert valid(json.loads(verified.stdout), "verify")["ok"] is True

    same = publab.run("diff", name, str(report), "--json")
    assert same.exit_code == 0, same.stderr
    assert valid(json.loads(same.stdout), "diff")["changed"] is False
    report.write_text(REPORT.replace("What we do next.", "What we do next, and when."), encoding="utf-8")
    changed = publab.run("diff", name, str(report), "--json")
    assert changed.exit_code == 0, changed.stderr
    sections = valid(json.loads(changed.stdout), "diff")["sections"]
    assert [(s["change"], s["id"], s["words"]["added"]) for s in sections] == [("rewritten", "2-next-steps", 3)]

    nightly = recipe(publab, out, "nightly", prefix=name)  # this test's name only: the lab is shared
    assert nightly.returncode == 0, nightly.stderr
    assert json.loads((out / "gc.json").read_text())["collected"] == []  # not expired: kept

    closed = recipe(publab, out, "close", str(number), repository)
    assert closed.returncode == 0, closed.stderr
    torn = valid(json.loads((out / "teardown.json").read_text()), "teardown")
    assert (torn["name"], torn["clean"], torn["left"]) == (name, True, [])
    clients = publab.clients()
    try:
        assert clients.docker.service(name) is None
        assert clients.dns.records(fqdn) == []
    finally:
        clients.close()

    gone = publab.run("diff", name, str(report))  # a page that cannot be read is an error, never "no changes"
    assert gone.exit_code == 1 and f"https://{fqdn}/" in gone.stderr and gone.stdout == "", gone.stdout
