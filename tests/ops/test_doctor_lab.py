"""`graphsite doctor` against the lab: everything passes; each precondition broken for real (a network, a route
directory, a token, a zone, a CA bundle, a daemon address of this test's own) fails naming its cause."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import threading

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.lab

PREFIX = f"gsops{secrets.token_hex(2)}"


def doctor(lab, env: dict | None = None):
    """Run `graphsite doctor --json` on the lab's configuration; return (exit code, {name: check}, all output)."""
    from graphsite.cli import main

    base = {"GRAPHSITE_CONFIG": str(lab.config_path), "CLOUDFLARE_API_TOKEN": None, "NO_COLOR": "1"}
    result = CliRunner().invoke(main, ["doctor", "--json"], env={**base, **(env or {})}, catch_exceptions=False)
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    text = result.stdout + result.stderr
    assert lab.token() not in text
    return result.exit_code, checks, text


def failed(checks: dict) -> dict:
    return {name: c for name, c in checks.items() if c["status"] == "FAIL"}


def test_everything_passes_on_the_lab(lab):
    code, checks, text = doctor(lab)
    assert code == 0, text
    assert {c["status"] for c in checks.values()} == {"PASS", "SKIP"}, text
    assert [n for n, c in checks.items() if c["status"] == "SKIP"] == ["traefik.static"]  # no Traefik in the lab
    for name in ("docker.network", "docker.image", "traefik.files", "traefik.middleware", "cloudflare.verify",
                 "cloudflare.zone", "cloudflare.records", "dns.record_content", "tls.verify_ca"):
        assert checks[name]["status"] == "PASS", text


def test_the_preflight_subset_passes_on_the_lab_and_names_a_missing_network(lab):
    from graphsite.usecases.doctor import preflight, preflight_error

    checks = preflight(lab.config)
    assert {c.name for c in checks} >= {"docker.swarm", "docker.network", "traefik.files", "traefik.middleware"}
    assert preflight_error(checks) is None, checks
    missing = f"{PREFIX}-missing"
    error = preflight_error(preflight(lab.config.replace("deploy", network=missing)))
    assert error is not None and f"deploy.network: Docker network {missing} does not exist" in error.message
    from graphsite.publisher.swarm import Swarm, network_facts

    swarm = Swarm()
    try:  # the deploy's own adapter, reused and left open
        assert preflight_error(preflight(lab.config, swarm)) is None
        assert network_facts(swarm, lab.config.deploy.network).found
    finally:
        swarm.close()


@pytest.fixture
def own_dynamic_dir(lab, tmp_path):
    """A route directory of this test's own, holding a copy of the lab's middleware."""
    directory = tmp_path / "dynamic"
    directory.mkdir()
    shutil.copy(lab.config.deploy.dynamic_dir + "/middlewares.yml", directory / "middlewares.yml")
    return directory


def test_an_unparsable_route_file(lab, own_dynamic_dir):
    code, checks, _ = doctor(lab, {"GRAPHSITE_DEPLOY_DYNAMIC_DIR": str(own_dynamic_dir)})
    assert code == 0 and checks["traefik.files"]["status"] == "PASS"
    bad = own_dynamic_dir / f"{PREFIX}-page.yml"
    bad.write_text("http:\n  routers:\n    page:\n      rule: Host(`a`)\n     service: x\n")
    code, checks, text = doctor(lab, {"GRAPHSITE_DEPLOY_DYNAMIC_DIR": str(own_dynamic_dir)})
    assert code == 1 and set(failed(checks)) == {"traefik.files"}, text
    assert f"{bad}: line 5, column " in checks["traefik.files"]["evidence"]
    assert str(bad) in checks["traefik.files"]["fix"]


def test_a_missing_middleware(lab, own_dynamic_dir):
    (own_dynamic_dir / "middlewares.yml").unlink()
    code, checks, text = doctor(lab, {"GRAPHSITE_DEPLOY_DYNAMIC_DIR": str(own_dynamic_dir)})
    assert code == 1 and set(failed(checks)) == {"traefik.middleware"}, text
    assert "redirect-to-https@file is defined in no file of" in checks["traefik.middleware"]["evidence"]


def test_a_dynamic_dir_that_is_a_file(lab, tmp_path):
    (tmp_path / "route.yml").write_text("")
    code, checks, text = doctor(lab, {"GRAPHSITE_DEPLOY_DYNAMIC_DIR": str(tmp_path / "route.yml")})
    assert code == 1 and set(failed(checks)) == {"traefik.dynamic_dir"}, text
    assert "is not a directory" in checks["traefik.dynamic_dir"]["evidence"]


def test_a_lock_dir_and_a_bind_root_that_cannot_be_made(lab, tmp_path):
    (tmp_path / "file").write_text("")
    env = {"GRAPHSITE_DEPLOY_LOCK_DIR": str(tmp_path / "file" / "locks"), "GRAPHSITE_DEPLOY_CONTENT": "bind",
           "GRAPHSITE_DEPLOY_BIND_ROOT": str(tmp_path / "file" / "srv")}
    code, checks, text = doctor(lab, env)
    assert code == 1 and set(failed(checks)) == {"deploy.lock_dir", "deploy.bind_root"}, text
    assert f"{tmp_path / 'file'} is not a directory" in checks["deploy.bind_root"]["evidence"]


def test_a_wrong_token(lab):
    wrong = secrets.token_urlsafe(30)
    code, checks, text = doctor(lab, {"CLOUDFLARE_API_TOKEN": wrong})
    assert code == 1 and set(failed(checks)) == {"cloudflare.verify"}, text
    assert "HTTP 401" in checks["cloudflare.verify"]["evidence"]
    assert "Invalid API Token" in checks["cloudflare.verify"]["evidence"]
    assert checks["cloudflare.zone"]["status"] == "SKIP"
    assert wrong not in text


def test_a_zone_id_that_does_not_exist(lab):
    code, checks, text = doctor(lab, {"GRAPHSITE_DNS_ZONE_ID": "0" * 32})
    assert code == 1 and set(failed(checks)) == {"cloudflare.zone"}, text
    assert f"dns.zone_id: no zone {'0' * 32}" in checks["cloudflare.zone"]["evidence"]


def test_a_zone_id_of_another_domain(lab, tmp_path):
    """A fake Cloudflare of this test's own serving another zone, which the token may see."""
    from graphsite_lab.cfserver import serve

    token, zone_id = secrets.token_urlsafe(30), secrets.token_hex(16)
    (tmp_path / "cf-token").write_text(token + "\n")
    server = serve(tmp_path, 0, f"{PREFIX}.other.test", zone_id)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/client/v4"
        code, checks, text = doctor(lab, {"GRAPHSITE_DNS_API_BASE_URL": base, "GRAPHSITE_DNS_ZONE_ID": zone_id,
                                          "CLOUDFLARE_API_TOKEN": token})
        # and without a zone id, the lookup by site.domain finds nothing
        _, lookup, _ = doctor(lab, {"GRAPHSITE_DNS_API_BASE_URL": base, "GRAPHSITE_DNS_ZONE_ID": "",
                                    "CLOUDFLARE_API_TOKEN": token})
    finally:
        server.shutdown()
        server.server_close()
    assert code == 1 and set(failed(checks)) == {"cloudflare.zone"}, text
    assert (f"dns.zone_id {zone_id} is the zone {PREFIX}.other.test, not site.domain lab.graphsite.test"
            in checks["cloudflare.zone"]["evidence"])
    assert "no zone named lab.graphsite.test" in lookup["cloudflare.zone"]["evidence"]


def test_a_missing_network(lab):
    missing = f"{PREFIX}-missing"
    code, checks, text = doctor(lab, {"GRAPHSITE_DEPLOY_NETWORK": missing})
    assert code == 1 and set(failed(checks)) == {"docker.network"}, text
    assert f"deploy.network: Docker network {missing} does not exist" in checks["docker.network"]["evidence"]


@pytest.fixture
def plain_overlay():
    """An overlay network of this test's own, created without --attachable; removed afterwards."""
    name = f"{PREFIX}-plain"
    subprocess.run(["docker", "network", "create", "--driver", "overlay", name], check=True, capture_output=True)
    yield name
    subprocess.run(["docker", "network", "rm", name], check=False, capture_output=True)


def test_a_network_that_is_not_attachable(lab, plain_overlay):
    code, checks, text = doctor(lab, {"GRAPHSITE_DEPLOY_NETWORK": plain_overlay})
    assert code == 1 and set(failed(checks)) == {"docker.network"}, text
    assert f"{plain_overlay} is not attachable" in checks["docker.network"]["evidence"]
    assert "--attachable" in checks["docker.network"]["fix"]


def test_an_image_that_is_neither_here_nor_pullable(lab):
    image = f"127.0.0.1:9/{PREFIX}:0"  # a registry on a loopback port nothing listens on
    code, checks, text = doctor(lab, {"GRAPHSITE_DEPLOY_IMAGE": image})
    assert code == 1 and set(failed(checks)) == {"docker.image"}, text
    assert f"deploy.image {image}: not on this node and not pullable" in checks["docker.image"]["evidence"]


def test_a_daemon_that_does_not_answer(lab, tmp_path):
    socket_path = tmp_path / "docker.sock"
    code, checks, text = doctor(lab, {"DOCKER_HOST": f"unix://{socket_path}"})
    assert code == 1 and set(failed(checks)) == {"docker.daemon"}, text
    assert f"DOCKER_HOST=unix://{socket_path}" in checks["docker.daemon"]["evidence"]
    assert checks["docker.network"]["status"] == "SKIP"


def test_a_missing_ca_bundle(lab, tmp_path):
    missing = tmp_path / "ca.pem"
    code, checks, text = doctor(lab, {"GRAPHSITE_VERIFY_CA_BUNDLE": str(missing)})
    assert code == 1 and set(failed(checks)) == {"tls.verify_ca"}, text
    assert f"verify.ca_bundle: cannot load {missing}" in checks["tls.verify_ca"]["evidence"]
    code, checks, text = doctor(lab, {"GRAPHSITE_DNS_CA_BUNDLE": str(missing)})
    assert code == 1 and "tls.dns_ca" in failed(checks), text
    assert f"dns.ca_bundle: cannot load {missing}" in checks["tls.dns_ca"]["evidence"]


def test_a_throttled_cloudflare_is_retried_like_deploys_calls_and_an_absent_one_costs_a_bounded_time(lab):
    """The doctor's Cloudflare reads reached past the retry loop: one 429 failed the token check. They now go
    through it, within one deadline for them all (twice dns.timeout)."""
    import time

    lab.cloudflare.fail_next(1, status=429, retry_after=1, match="tokens/verify")
    try:
        code, checks, text = doctor(lab)
    finally:
        lab.cloudflare.fail_next(0)
    assert code == 0 and checks["cloudflare.verify"]["status"] == "PASS", text
    assert any(r["path"].endswith("/tokens/verify") and r["status"] == 429 for r in lab.cloudflare.requests())
    started = time.monotonic()
    code, checks, text = doctor(lab, {"GRAPHSITE_DNS_API_BASE_URL": "http://127.0.0.1:9/client/v4",
                                      "GRAPHSITE_DNS_TIMEOUT": "1", "GRAPHSITE_DNS_RETRIES": "6"})
    assert code == 1 and checks["cloudflare.verify"]["status"] == "FAIL", text
    assert time.monotonic() - started < 20, f"the doctor took {time.monotonic() - started:.1f} s"
