"""Refusals, rollbacks and retries against the lab: whatever fails leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphsite.errors import DeployError
from graphsite.publisher.deployment import Claim

pytestmark = pytest.mark.lab


def _left(publab, name: str) -> list[str]:
    config, clients = publab.config, publab.clients()
    try:
        left = [f"service {name}"] if clients.swarm.service(name) else []
        left += [f"config {c}" for c in clients.swarm.configs(name)]
        left += [f"record {r.type} {r.content}" for r in clients.dns.records(f"{name}.{config.site.domain}")
                 if r.claim(config.site.domain) == Claim.OURS]
    finally:
        clients.close()
    if (Path(config.deploy.dynamic_dir) / f"{name}.yml").exists():
        left.append("route")
    return left


def _injected(publab, name: str) -> list[int]:
    """Return the statuses of the injected faults the fake Cloudflare answered to calls about `name`."""
    return [r["status"] for r in publab.cloudflare.requests() if r["fault"] and name in json.dumps(r)]


def test_a_cname_on_the_name_is_refused_before_anything_is_made(publab):
    name = publab.name()
    fqdn = f"{name}.{publab.config.site.domain}"
    made = publab.api("POST", "dns_records", type="CNAME", name=fqdn, content="elsewhere.example.com", ttl=60)
    assert made.status_code == 200, made.text
    result = publab.run("deploy", "--subdomain", name)
    assert result.exit_code == 1
    assert f"{fqdn} already has CNAME elsewhere.example.com" in result.stderr
    assert "Traceback" not in result.stderr
    assert _left(publab, name) == []


def test_an_a_record_with_other_content_is_refused_without_force(publab):
    name = publab.name()
    fqdn = f"{name}.{publab.config.site.domain}"
    made = publab.api("POST", "dns_records", type="A", name=fqdn, content="192.0.2.7", ttl=60).json()["result"]
    result = publab.run("deploy", "--subdomain", name, "--no-verify")
    assert result.exit_code == 1 and "already points at 192.0.2.7" in result.stderr and "--force" in result.stderr
    assert _left(publab, name) == []
    assert publab.api("GET", f"dns_records/{made['id']}").json()["result"]["content"] == "192.0.2.7"
    forced = publab.run("deploy", "--subdomain", name, "--no-verify", "--force", "--json")
    assert forced.exit_code == 0, forced.stderr
    assert json.loads(forced.stdout)["dns"].startswith("REPLACED 192.0.2.7 with id=")
    clients = publab.clients()
    try:
        assert [(r.type, r.content, r.claim(publab.config.site.domain)) for r in clients.dns.records(fqdn)] \
            == [("A", "127.0.0.1", Claim.OURS)]
    finally:
        clients.close()
    assert publab.run("teardown", name).exit_code == 0
    assert _left(publab, name) == []


def test_verify_of_an_unknown_name_is_a_clear_error(publab):
    result = publab.run("verify", publab.name())
    assert result.exit_code == 1 and "no graphsite service" in result.stderr and "Traceback" not in result.stderr


def test_a_colliding_name_is_drawn_again(publab):
    """Names used by a record, a route file or a service are never reused."""
    from graphsite.publisher.route import RouteSettings, route_document
    from graphsite.publisher.route_files import write_route
    from graphsite.usecases.deploy import DeployRequest, choose_subdomain

    config = publab.config
    taken = [f"{publab.prefix}-{suffix}" for suffix in ("aaaaa1", "aaaaa2", "aaaaa3")]
    record = publab.api("POST", "dns_records", type="A", name=f"{taken[0]}.{config.site.domain}",
                        content="127.0.0.1", ttl=60, comment="graphsite: test").json()["result"]
    route_path = Path(config.deploy.dynamic_dir) / f"{taken[1]}.yml"
    write_route(route_path, route_document(RouteSettings.from_config(config), taken[1],
                                           f"{taken[1]}.{config.site.domain}"))
    clients = publab.clients()
    try:
        clients.swarm.api.create_service(
            {"ContainerSpec": {"Image": config.deploy.image, "Command": ["caddy", "version"]}},
            name=taken[2], labels={"graphsite.subdomain": taken[2]})
        tokens = iter(["aaaaa1", "aaaaa2", "aaaaa3", "bbbbb4"])
        chosen = choose_subdomain(config, DeployRequest(source=Path(".")), clients, token=lambda n: next(tokens))
        assert chosen == f"{publab.prefix}-bbbbb4"
    finally:
        clients.swarm.remove_service(taken[2])
        route_path.unlink(missing_ok=True)
        publab.api("DELETE", f"dns_records/{record['id']}")
        clients.close()


def test_a_service_that_cannot_converge_leaves_nothing(publab):
    name = publab.name()
    result = publab.run("deploy", "--subdomain", name, env={"GRAPHSITE_DEPLOY_IMAGE": "graphsite-lab/no-such:0"})
    assert result.exit_code == 1
    assert f"service {name} did not converge" in result.stderr and "No such image" in result.stderr
    assert f"undone: removed service {name}" in result.stderr
    assert result.stderr.count("undone: removed config") == 2
    assert _left(publab, name) == []


def test_keep_on_failure_keeps_it_and_a_rerun_resumes(publab):
    name = publab.name()
    bad = publab.run("deploy", "--subdomain", name, "--keep-on-failure",
                     env={"GRAPHSITE_DEPLOY_IMAGE": "graphsite-lab/no-such:0"})
    assert bad.exit_code == 1 and "kept for inspection" in bad.stderr
    assert f"service {name}" in _left(publab, name)
    good = publab.run("deploy", "--subdomain", name, "--no-verify", "--json")
    assert good.exit_code == 0, good.stderr
    outcomes = {r["resource"]: r["outcome"] for r in json.loads(good.stdout)["resources"]}
    assert outcomes["service"] == "updated" and outcomes["config"] == "unchanged"
    assert publab.run("teardown", name).exit_code == 0
    assert _left(publab, name) == []


def test_throttling_is_retried_honouring_retry_after(publab):
    name = publab.name()
    publab.cloudflare.fail_next(2, status=429, retry_after=1, match=name)
    result = publab.run("deploy", "--subdomain", name, "--no-verify", "--json")
    assert result.exit_code == 0, result.stderr
    assert _injected(publab, name).count(429) == 2
    assert json.loads(result.stdout)["dns"].startswith("CREATED")
    publab.cloudflare.fail_next(1, status=500, match=name)  # a server error is retried too
    teardown = publab.run("teardown", name)
    assert teardown.exit_code == 0, teardown.stderr
    assert _injected(publab, name) == [429, 429, 500]
    assert "removed   record" in teardown.stdout


def test_server_errors_past_the_retries_roll_back_cleanly(publab):
    """The record's creation keeps failing with 500: the service, configs and route this run made are undone."""
    from graphsite.paths import default_source
    from graphsite.publisher.clients import Clients
    from graphsite.usecases.deploy import DeployRequest, deploy
    from tests.publisher.fakes import Recorder

    name = publab.name()
    config = publab.config.replace("dns", retries=1)
    clients = Clients.connect(config)
    create = clients.dns.create

    def create_under_faults(record):  # the lab's server fails the create and its retry, for real
        publab.cloudflare.fail_next(2, status=500, match=name)
        return create(record)

    clients.dns.create = create_under_faults
    try:
        with pytest.raises(DeployError, match="HTTP 500"):
            deploy(config, DeployRequest(source=default_source(), subdomain=name), clients, Recorder())
    finally:
        clients.close()
    assert _left(publab, name) == []


def test_the_token_never_appears_even_when_refused(publab):
    secret = "gs-test-secret-token-0123456789"
    result = publab.run("deploy", "--random-subdomain", "--json", env={"CLOUDFLARE_API_TOKEN": secret})
    assert result.exit_code == 1
    assert "HTTP 401" in result.stderr or "HTTP 403" in result.stderr
    assert secret not in result.stdout + result.stderr


def test_a_deploy_of_a_name_being_deployed_fails_clearly(publab):
    from graphsite.publisher.lock import subdomain_lock

    name = publab.name()
    with subdomain_lock(publab.config.deploy.lock_dir, name):
        result = publab.run("deploy", "--subdomain", name)
    assert result.exit_code == 1
    assert f"{name} is being deployed or torn down by pid" in result.stderr
    assert _left(publab, name) == []


def test_a_failed_verification_undoes_everything_in_reverse_order(publab):
    """Verified against a CA that did not sign the edge's certificate: TLS fails, and the run is undone."""
    import certifi

    name = publab.name()
    result = publab.run("deploy", "--subdomain", name,
                        env={"GRAPHSITE_VERIFY_CA_BUNDLE": certifi.where(), "GRAPHSITE_VERIFY_DEADLINE": "1"})
    assert result.exit_code == 1
    assert "verify: origin:" in result.stderr and "CERTIFICATE_VERIFY_FAILED" in result.stderr
    undone = [line.split("undone: ")[1].split()[:2] for line in result.stderr.splitlines() if "undone: " in line]
    assert undone == [["deleted", "record"], ["removed", "route"], ["removed", "service"],
                      ["removed", "config"], ["removed", "config"]]
    assert _left(publab, name) == []


def test_a_missing_network_is_named(publab):
    name = publab.name()
    result = publab.run("deploy", "--subdomain", name, env={"GRAPHSITE_DEPLOY_NETWORK": "dokploy"})
    assert result.exit_code == 1 and "deploy.network: Docker network dokploy does not exist" in result.stderr
    assert _left(publab, name) == []


def test_a_dynamic_dir_that_is_not_a_directory_is_refused_before_anything_is_made(publab, tmp_path):
    blocker = tmp_path / "dynamic"
    blocker.write_text("not a directory")
    name = publab.name()
    result = publab.run("deploy", "--subdomain", name, env={"GRAPHSITE_DEPLOY_DYNAMIC_DIR": str(blocker)})
    assert result.exit_code == 1
    assert f"deploy.dynamic_dir: {blocker} is not a directory" in result.stderr
    assert "Traceback" not in result.stderr and "undone" not in result.stderr  # refused at the plan step
    assert _left(publab, name) == []


def test_a_domain_written_in_capitals_still_finds_its_own_record(publab):
    """Cloudflare holds names in lower case: a site.domain typed otherwise must not create a second record."""
    name, env = publab.name(), {"GRAPHSITE_SITE_DOMAIN": publab.config.site.domain.upper() + "."}
    first = publab.run("deploy", "--subdomain", name, "--no-verify", "--json", env=env)
    assert first.exit_code == 0, first.stderr
    assert json.loads(first.stdout)["fqdn"] == f"{name}.{publab.config.site.domain}"
    again = publab.run("deploy", "--subdomain", name, "--dry-run", "--json", env=env)
    assert again.exit_code == 0, again.stderr
    assert {r["resource"]: r["outcome"] for r in json.loads(again.stdout)["resources"]}["record"] == "unchanged"
    assert publab.run("teardown", name, env=env).exit_code == 0
    assert _left(publab, name) == []


def test_a_page_too_big_for_a_config_suggests_bind(publab, tmp_path):
    source = tmp_path / "big.md"
    paragraphs = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 40 for i in range(600))
    source.write_text(f"# Big report\n\n## 1. Body\n\n{paragraphs}\n", encoding="utf-8")
    name = publab.name()
    result = publab.run("deploy", str(source), "--subdomain", name)
    assert result.exit_code == 1
    assert "more than a Swarm config holds" in result.stderr and "--content bind" in result.stderr
    assert _left(publab, name) == []


def test_services_and_routes_graphsite_did_not_make_are_never_touched(publab):
    from graphsite.publisher.route import dump

    config, name = publab.config, publab.name()
    route_path = Path(config.deploy.dynamic_dir) / f"{name}.yml"
    foreign_route = {"http": {"routers": {"app": {"rule": f"Host(`{name}.example`)", "service": "app"}},
                              "services": {"app": {"loadBalancer": {"servers": [{"url": "http://app:80"}]}}}}}
    route_path.write_text(dump(foreign_route))
    clients = publab.clients()
    try:
        refused = publab.run("deploy", "--subdomain", name, "--no-verify")
        assert refused.exit_code == 1 and "is not a route of this configuration" in refused.stderr
        route_path.unlink()
        clients.swarm.api.create_service({"ContainerSpec": {"Image": config.deploy.image,
                                                             "Command": ["caddy", "version"]}}, name=name)
        refused = publab.run("deploy", "--subdomain", name, "--no-verify")
        assert refused.exit_code == 1 and "graphsite did not make it" in refused.stderr
        route_path.write_text(dump(foreign_route))
        kept = publab.run("teardown", name)
        assert kept.exit_code == 0, kept.stderr
        assert f"kept      service {name}" in kept.stdout and f"kept      route {route_path}" in kept.stdout
        assert clients.swarm.service(name) is not None and route_path.exists()
        assert clients.swarm.configs(name) == []
    finally:
        clients.swarm.remove_service(name)
        route_path.unlink(missing_ok=True)
        clients.close()


def test_links_where_graphsite_keeps_its_files_are_refused_then_kept_with_their_targets(publab, tmp_path):
    """Links named like NAME's page directory and route file, to a directory with NAME's marker and a file with
    NAME's stamped route (issue 19): deploy refuses each in one line before anything is made; teardown, which
    failed on the directory forever, keeps both, exits 0, and no target changes owner, mode or content."""
    import os

    from graphsite.publisher.deployment import MARKER, Stamp
    from graphsite.publisher.route import RouteSettings, dump, route_document

    config, name = publab.config, publab.name()
    stamp = Stamp(name, "2026-07-01T12:00:00Z")
    outside, page_link = tmp_path / "outside", Path(config.deploy.bind_root) / name
    outside.mkdir()
    (outside / MARKER).write_text(stamp.marker())
    route_target, route_link = tmp_path / "route.yml", Path(config.deploy.dynamic_dir) / f"{name}.yml"
    document = route_document(RouteSettings.from_config(config), name, f"{name}.{config.site.domain}")
    route_target.write_text(dump(document, stamp))
    for path in (outside, outside / MARKER, route_target):
        os.chown(path, 4242, 4242)
        path.chmod(0o700 if path.is_dir() else 0o600)

    def state() -> list:
        return [(p.stat().st_uid, p.stat().st_mode, p.is_dir() and sorted(os.listdir(p)) or p.read_bytes())
                for p in (outside, outside / MARKER, route_target)]

    before = state()
    page_link.symlink_to(outside)
    try:
        refused = publab.run("deploy", "--subdomain", name, "--content", "bind", "--no-verify")
        assert refused.exit_code == 1, refused.stderr
        assert f"Error: {page_link} is a symbolic link to {outside}, where graphsite keeps its own page " \
               "directory: graphsite never follows one; remove the link" in refused.stderr
        route_link.symlink_to(route_target)
        refused = publab.run("deploy", "--subdomain", name, "--no-verify")
        assert refused.exit_code == 1 and f"Error: {route_link} is a symbolic link to {route_target}" in refused.stderr
        assert "Traceback" not in refused.stderr and _left(publab, name) == ["route"]  # the link, not a route
        kept = publab.run("teardown", name)
        assert kept.exit_code == 0, kept.stderr
        assert f"kept      route {route_link}: a symbolic link to {route_target}" in kept.stdout
        assert f"kept      directory {page_link}: a symbolic link to {outside}" in kept.stdout
        assert "again" not in kept.stdout + kept.stderr
        assert page_link.is_symlink() and route_link.is_symlink() and state() == before
    finally:
        page_link.unlink(missing_ok=True)
        route_link.unlink(missing_ok=True)


def test_a_token_file_others_can_read_is_warned_about_never_shown(publab, tmp_path):
    """deploy's preflight warns, with the fix, about a Cloudflare token file its group or others can read (the
    doctor's permissions.token_file); the token itself is never in the output."""
    token_file = tmp_path / "cf-token"
    token_file.write_text(publab.config.token() + "\n")
    token_file.chmod(0o644)
    result = publab.run("deploy", "--subdomain", publab.name(), "--dry-run",
                        env={"GRAPHSITE_DNS_TOKEN_FILE": str(token_file)})
    assert result.exit_code == 0, result.stderr
    assert f"warning: dns.token_file {token_file}: mode 0644, its group and others can read the Cloudflare token " \
           f"(fix: chmod 600 {token_file})" in result.stderr
    assert publab.config.token() not in result.stdout + result.stderr


def test_strict_permissions_refuses_before_anything_is_made(publab, tmp_path):
    """deploy.strict_permissions = true: the same token file is a refusal naming the check and its fix."""
    token_file = tmp_path / "cf-token"
    token_file.write_text(publab.config.token() + "\n")
    token_file.chmod(0o640)
    name = publab.name()
    result = publab.run("deploy", "--subdomain", name, "--no-verify",
                        env={"GRAPHSITE_DNS_TOKEN_FILE": str(token_file), "GRAPHSITE_DEPLOY_STRICT_PERMISSIONS": "1"})
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert f"permissions.token_file: dns.token_file {token_file}: mode 0640, its group can read the Cloudflare " \
           f"token\n    fix: chmod 600 {token_file}" in result.stderr
    assert publab.config.token() not in result.stdout + result.stderr and _left(publab, name) == []
    token_file.chmod(0o600)
    allowed = publab.run("deploy", "--subdomain", name, "--dry-run",
                         env={"GRAPHSITE_DNS_TOKEN_FILE": str(token_file), "GRAPHSITE_DEPLOY_STRICT_PERMISSIONS": "1"})
    assert allowed.exit_code == 0 and "warning" not in allowed.stderr, allowed.stderr
