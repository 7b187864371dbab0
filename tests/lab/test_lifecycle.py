"""`scripts/lab up | status | down` on a second, isolated lab instance (own directory, ports and edge), so the
shared lab keeps running: up is idempotent, writes a configuration graphsite loads, and down leaves nothing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tomllib

import jsonschema
import pytest
import yaml

from graphsite.config import load_config
from graphsite.paths import schema_path
from graphsite_lab.client import LabCloudflare
from graphsite_lab.docker import container, docker, network_id
from graphsite_lab.processes import holds_markers, is_ours, lab_code, process_action, routes_health

# Tests that use the running lab are marked `lab` through its fixture (tests/conftest.py); the pure ones here
# (the restart decision, the code hash, the LAB_* variables) run anywhere.


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def instance(lab, isolated_instance, run_lab):
    """The isolated instance, taken down again whatever the test did."""
    yield isolated_instance
    run_lab("down", isolated_instance)
    leftover = container(isolated_instance.edge_name)
    if leftover:
        docker("rm", "--force", leftover["id"], check=False)


def test_up_twice_changes_nothing_the_second_time(instance, run_lab):
    first = run_lab("up", instance)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().endswith("graphsite deploy --random-subdomain")
    assert first.stdout.startswith(f"GRAPHSITE_CONFIG={instance.path('graphsite.toml')} ")
    assert "Lab ready in" in first.stderr
    state = json.loads(instance.path("state.json").read_text())
    second = run_lab("up", instance)
    assert second.returncode == 0, second.stderr
    assert "Nothing changed" in second.stderr
    assert json.loads(instance.path("state.json").read_text()) == state
    assert container(instance.edge_name)["id"] == state["edge_id"]
    # the running fake Cloudflare says which code it was started from: the checkout's, so `up` kept it
    assert LabCloudflare(instance.cf_base).health()["code"] == lab_code()
    assert routes_health(instance)["code"] == lab_code() and state["routes_pid"] == routes_health(instance)["pid"]


@pytest.mark.parametrize("ours, health, action", [
    (True, {"code": "abc"}, "running"),
    (True, {"code": "old"}, "restart"),   # a checkout that changed since: the server is stale
    (True, {}, "restart"),                # started by a lab version that did not report its code
    (True, None, "start"),                # ours but not answering
    (False, {"code": "abc"}, "start"),    # someone else's: start_cloudflare refuses the taken port
])
def test_up_restarts_a_lab_process_started_from_other_code(ours, health, action):
    assert process_action(ours, health, "abc") == action


def test_a_server_started_under_the_former_module_name_is_still_ours():
    """A lab started before the lab left the graphsite package (`python -m graphsite.lab.cfserver`) is still
    recognised: `up` restarts it, `down` stops it, instead of a second server failing on its port."""
    former = ["/venv/bin/python", "-m", "graphsite.lab.cfserver", "--lab-dir", "/lab", "--port", "8790"]
    today = [*former[:2], "graphsite_lab.cfserver", *former[3:]]
    assert holds_markers(former, ("graphsite_lab.cfserver", "--lab-dir /lab"))
    assert holds_markers(today, ("graphsite_lab.cfserver", "--lab-dir /lab"))
    assert not holds_markers(former, ("graphsite_lab.traefik.watcher", "--lab-dir /lab"))
    assert not holds_markers(former, ("graphsite_lab.cfserver", "--lab-dir /lab/other"))
    assert not holds_markers([], ())


def test_the_code_hash_covers_every_module_and_schema_of_both_packages(tmp_path):
    """A new module anywhere in graphsite or graphsite_lab changes the hash: none can escape the stale-server check."""
    (tmp_path / "graphsite" / "schemas").mkdir(parents=True)
    (tmp_path / "graphsite_lab").mkdir()
    (tmp_path / "graphsite_lab" / "processes.py").write_text("x = 0\n")
    hashes = [lab_code(tmp_path)]
    (tmp_path / "graphsite_lab" / "traefik").mkdir()
    (tmp_path / "graphsite_lab" / "traefik" / "new.py").write_text("x = 1\n")
    hashes.append(lab_code(tmp_path))
    (tmp_path / "graphsite" / "schemas" / "traefik.json").write_text("{}")
    hashes.append(lab_code(tmp_path))
    (tmp_path / "graphsite" / "config.py").write_text("x = 2\n")
    hashes.append(lab_code(tmp_path))
    assert len(set(hashes)) == 4 and lab_code() != hashes[-1]


def test_up_writes_a_configuration_graphsite_loads_and_a_valid_middleware(instance, run_lab):
    assert run_lab("up", instance).returncode == 0
    path = instance.path("graphsite.toml")
    config = load_config(path, environ={})
    assert config.site.domain == "lab.graphsite.test"
    assert config.deploy.endpoint_mode == "dnsrr" and config.deploy.image.startswith("graphsite-lab/caddy:")
    assert config.dns.api_base_url == f"http://127.0.0.1:{instance.cf_port}/client/v4"
    assert config.verify.resolve_https == f"127.0.0.1:{instance.https_port}"
    assert config.verify.ca_bundle == str(instance.path("ca.pem"))
    assert config.token() and (instance.path("cf-token").stat().st_mode & 0o777) == 0o600
    assert config.token() not in path.read_text()  # the token lives only in cf-token
    assert tomllib.loads(path.read_text())["dns"]["token_file"] == str(instance.path("cf-token"))
    middleware = yaml.safe_load((instance.path("traefik/dynamic/middlewares.yml")).read_text())
    jsonschema.validate(middleware, json.loads(schema_path("traefik-v3-file-provider.json").read_text()))
    assert middleware["http"]["middlewares"]["redirect-to-https"]["redirectScheme"]["scheme"] == "https"


def test_status_then_down_leaves_nothing_of_its_own(instance, run_lab):
    assert run_lab("up", instance).returncode == 0
    state = json.loads(instance.path("state.json").read_text())
    status = run_lab("status", instance)
    assert status.returncode == 0, status.stdout
    assert all(line.startswith("up") for line in status.stdout.splitlines())

    down = run_lab("down", instance)
    assert down.returncode == 0, down.stderr
    assert docker("container", "inspect", state["edge_id"], check=False).returncode != 0
    assert not is_ours(state["cloudflare_pid"], "graphsite_lab.cfserver")
    assert not is_ours(state["routes_pid"], "graphsite_lab.traefik.watcher")
    assert not any(_answers(port) for port in (instance.https_port, instance.http_port, instance.cf_port))
    # What this instance did not create stays: the shared network (and the daemon) still serve the others.
    assert network_id(instance.network)
    after = run_lab("status", instance)
    assert after.returncode == 1
    down_parts = {line.split(None, 1)[1].split("  ")[0] for line in after.stdout.splitlines()
                  if line.startswith("DOWN")}
    assert {"edge", "fake Cloudflare", "routes (Traefik stand-in)"} <= down_parts
    again = run_lab("down", instance)
    assert again.returncode == 0 and "Nothing to take down" in again.stderr


def test_lab_variables_name_an_instance_and_a_bad_port_is_a_clear_error(tmp_path):
    from graphsite_lab import LabError
    from graphsite_lab.instance import LabInstance

    lab = LabInstance.from_env({"LAB_DIR": str(tmp_path), "LAB_CF_PORT": "9999", "LAB_NAME_SUFFIX": "x"})
    assert (lab.root, lab.https_port, lab.cf_port, lab.edge_name) == (tmp_path, 8443, 9999, "graphsite-lab-edge-x")
    with pytest.raises(LabError, match="LAB_HTTPS_PORT: expected a port number 1-65535, got 'abc'"):
        LabInstance.from_env({"LAB_HTTPS_PORT": "abc"})
    # the lab's command says it in one line, as graphsite's commands do: no traceback
    shown = subprocess.run([sys.executable, "-m", "graphsite_lab", "status"], capture_output=True, text=True,
                           env={**os.environ, "LAB_DIR": str(tmp_path), "LAB_HTTPS_PORT": "abc"}, timeout=60)
    assert shown.returncode == 1 and "Traceback" not in shown.stderr, shown.stderr
    assert shown.stderr.startswith("Error: LAB_HTTPS_PORT: expected a port number 1-65535, got 'abc'"), shown.stderr
