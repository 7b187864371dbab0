"""What someone changes by hand after a deploy, against the lab: verify fails it, naming the change, and a
redeploy refuses what it cannot put right."""

from __future__ import annotations

import json
import subprocess

import pytest

pytestmark = pytest.mark.lab

SHORT = {"GRAPHSITE_VERIFY_DEADLINE": "5"}  # a check that fails fails in seconds, not after a minute of retries


def _deployed(publab) -> str:
    name = publab.name()
    result = publab.run("deploy", "--subdomain", name, "--no-verify")
    assert result.exit_code == 0, result.stderr
    return name


def _checks(publab, name: str) -> dict[str, dict]:
    result = publab.run("verify", name, "--json", env=SHORT)
    assert result.exit_code == 1, result.stdout + result.stderr
    return {check["name"]: check for check in json.loads(result.stdout)["checks"]}


def test_a_service_scaled_to_zero_fails_the_service_check(publab):
    """Before, `docker service scale NAME=0` left verify saying `service PASS 0/0 replicas running`."""
    name = _deployed(publab)
    scaled = subprocess.run(["docker", "service", "scale", "--detach", f"{name}=0"], capture_output=True, text=True,
                            check=False)
    assert scaled.returncode == 0, scaled.stderr
    service = _checks(publab, name)["service"]
    assert (service["status"], service["evidence"]) == (
        "FAIL", f"service {name} is scaled to 0 replicas: nothing serves the page; deploy it again, or "
                f"docker service scale {name}=1")
