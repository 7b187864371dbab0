"""verify's seven checks on the fakes (tests/publisher/fakes.py), on a clock that moves only when verify waits:
what each check passes, what it fails at once (a mismatch read twice, verify.confirm_after apart), what it waits
for until the deadline, and what it skips (a private page without its password)."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from graphsite.config import Config
from graphsite.errors import VerifyError
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import Deployment
from graphsite.usecases.deploy import DeployRequest, deploy
from graphsite.usecases.verify import FAIL, PASS, SKIP, UNREAD, VerifySettings, run_checks, verify
from tests.publisher.fakes import FakeClock, FakeDns, FakeEdge, FakeRoutes, FakeSwarm, Fault, Recorder, fake_world
from tests.publisher.nobody import as_nobody

CHECKS = ("service", "origin", "public", "tls", "redirect", "dns", "route")


def _world(root: Path, **request) -> tuple[Config, Clients, Deployment, tuple[str, str] | None]:
    config, clients = fake_world(root)
    source = root / "report.md"
    source.write_text("# A small report\n\nOne paragraph.\n")
    result = deploy(config, DeployRequest(source=source, subdomain="site-1", verify=False, **request), clients,
                    Recorder())
    return config, clients, result.plan.deployment, result.access.credentials


def _fakes(clients: Clients) -> tuple[FakeSwarm, FakeDns, FakeRoutes, FakeEdge]:
    swarm, dns, routes, edge = clients.swarm, clients.dns, clients.routes, clients.edge
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns) and isinstance(routes, FakeRoutes)
    assert isinstance(edge, FakeEdge)
    return swarm, dns, routes, edge


def _checks(config: Config, clients: Clients, target: Deployment, credentials=None, clock: FakeClock | None = None):
    clock = clock or FakeClock()
    results = run_checks(VerifySettings.from_config(config), target, clients, credentials, clock=clock,
                         sleep=clock.sleep)
    assert [c.name for c in results] == list(CHECKS)
    return {c.name: c for c in results}


def test_a_deployment_that_is_what_it_should_be_passes_all_seven_checks(tmp_path):
    config, clients, _, _ = _world(tmp_path)
    report = verify(VerifySettings.from_config(config), "site-1.example.com", clients)
    assert [(c.name, c.status) for c in report.checks] == [(name, PASS) for name in CHECKS]
    assert report.failed == [] and report.content_checked and report.as_json()["ok"] is True


def test_verify_of_a_name_with_no_graphsite_service_says_so(tmp_path):
    config, clients, _, _ = _world(tmp_path)
    with pytest.raises(VerifyError, match="no deployment named other: no graphsite service"):
        verify(VerifySettings.from_config(config), "other", clients)


def test_a_stale_page_fails_once_it_reads_the_same_twice_confirm_after_apart(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    config = config.replace("verify", confirm_after=0.5, deadline=60.0)
    _fakes(clients)[3].page = b"<!doctype html><title>an older page</title>"
    clock = FakeClock()
    checks = _checks(config, clients, target, clock=clock)
    assert checks["public"].status == FAIL and "is not the deployed" in checks["public"].evidence
    assert checks["origin"].status == FAIL
    assert clock.slept.count(0.5) == 2 and clock.now - 1000.0 < 5  # confirmed twice, not held to the deadline


def test_an_answer_without_the_security_headers_fails(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    _fakes(clients)[3].headers = {"X-Content-Type-Options": "nosniff"}
    checks = _checks(config, clients, target)
    assert checks["origin"].status == FAIL and "security headers: missing" in checks["origin"].evidence


def test_an_edge_that_never_answers_fails_what_it_serves_at_the_deadline_only(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    _fakes(clients)[3].faults.inject("fetch", Fault.error(), times=10_000)
    clock = FakeClock()
    checks = _checks(config, clients, target, clock=clock)
    for name in ("origin", "public", "tls", "redirect"):
        assert checks[name].status == FAIL and "ConnectError" in checks[name].evidence, checks[name]
    assert (checks["service"].status, checks["dns"].status, checks["route"].status) == (PASS, PASS, PASS)
    # waited for (an edge that does not answer yet may), until the next wait would pass the deadline
    assert clock.now - 1000.0 > config.verify.deadline - 2.0


def test_a_certificate_that_ends_within_two_weeks_fails(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    now = datetime.now(UTC)
    _fakes(clients)[3].cert_dates = (now - timedelta(days=80), now + timedelta(days=3))
    checks = _checks(config, clients, target)
    assert checks["tls"].status == FAIL and "less than 14 days away" in checks["tls"].evidence


def test_a_missing_route_file_fails_the_route_and_leaves_the_edge_answering_404(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    _fakes(clients)[2].files.clear()
    checks = _checks(config, clients, target)
    assert checks["route"].status == FAIL and "missing or not YAML" in checks["route"].evidence
    assert checks["origin"].status == FAIL and "HTTP 404" in checks["origin"].evidence
    assert checks["redirect"].status == FAIL and "want 301/308" in checks["redirect"].evidence


@pytest.mark.parametrize("change,finding", [
    (lambda d: d["http"]["services"]["site-1-service"]["loadBalancer"]["servers"][0].update(url="http://x:1"),
     "schema-valid but not the route graphsite would write"),
    (lambda d: d["http"]["routers"]["site-1-web"].update(priority="high"), "priority: 'high' is not of type"),
], ids=["another-route", "schema"])
def test_a_route_file_that_is_not_graphsite_s_route_fails(tmp_path, change, finding):
    config, clients, target, _ = _world(tmp_path)
    routes = _fakes(clients)[2]
    (path,) = routes.files
    document = routes.document(path)
    assert document is not None
    change(document)
    routes.files[path] = yaml.safe_dump(document)
    checks = _checks(config, clients, target)
    assert checks["route"].status == FAIL and finding in checks["route"].evidence


@pytest.mark.parametrize("auth", [{"basicAuth": {"usersFile": "/etc/htpasswd"}}, {"basicAuth": {"users": []}}],
                         ids=["users-file", "no-users"])
def test_a_route_whose_auth_middleware_is_not_graphsite_s_fails_the_route_and_keeps_the_other_checks(tmp_path, auth):
    config, clients, target, _ = _world(tmp_path)
    routes = _fakes(clients)[2]
    (path,) = routes.files
    document = routes.document(path)
    assert document is not None
    document["http"]["middlewares"] = {"site-1-auth": auth}
    routes.files[path] = yaml.safe_dump(document)
    checks = _checks(config, clients, target)
    assert checks["route"].status == FAIL, checks["route"]
    assert str(path) in checks["route"].evidence and "not a basicAuth middleware" in checks["route"].evidence
    assert checks["service"].status == PASS and checks["dns"].status == PASS


def test_a_broken_file_beside_the_route_fails_it_since_traefik_applies_nothing(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    (Path(config.deploy.dynamic_dir) / "broken.yml").write_text("http:\n  routers: [not, a, mapping]\n")
    checks = _checks(config, clients, target)
    assert checks["route"].status == FAIL and "Traefik applies no change" in checks["route"].evidence


def test_a_directory_beside_the_route_this_user_cannot_list_fails_the_route_never_passes_it():
    """Before, a subdirectory of the dynamic directory this user could not list read as empty: a file in it that
    Traefik (root) cannot load blocks the route, yet the route check passed. Proven as nobody."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        config, clients, target, _ = _world(Path(base))
        assert _checks(config, clients, target)["route"].status == PASS  # and every lazy import made, as root
        hidden = Path(config.deploy.dynamic_dir) / "hidden"
        hidden.mkdir(mode=0o700)  # root's: nobody may not list it
        (hidden / "broken.yml").write_text("http: [\n")
        with as_nobody():
            check = _checks(config, clients, target)["route"]
    assert check.status == FAIL and check.evidence.startswith(f"cannot list {hidden}: Permission denied: whether "
                                                              "Traefik applies the route is unknown"), check


def test_what_traefik_never_reads_beside_the_route_cannot_fail_it():
    """Before, a directory that may be read but not searched (0744) holding only notes.txt, or a link to /root,
    beside the route failed it ('cannot list …: whether Traefik applies the route is unknown'), though Traefik
    never reads either: it descends into no link, and there is no file it reads in notes/. As nobody."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        config, clients, target, _ = _world(Path(base))
        dynamic_dir = Path(config.deploy.dynamic_dir)
        (dynamic_dir / "notes").mkdir()
        (dynamic_dir / "notes" / "notes.txt").write_text("what this directory is for\n")
        (dynamic_dir / "notes").chmod(0o744)  # root's: nobody may list it, not look at what is in it
        (dynamic_dir / "link").symlink_to("/root")
        assert _checks(config, clients, target)["route"].status == PASS  # and every lazy import made, as root
        with as_nobody():
            check = _checks(config, clients, target)["route"]
    assert check.status == PASS, check


def test_a_file_beside_the_route_this_user_may_not_read_is_unknown_not_broken():
    """Before, a root-only file (0600) beside the route failed it as broken ('Traefik applies no change while a
    file is broken: …: cannot read: Permission denied'), though Traefik, as root, reads it. Proven as nobody."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        config, clients, target, _ = _world(Path(base))
        assert _checks(config, clients, target)["route"].status == PASS  # and every lazy import made, as root
        secret = Path(config.deploy.dynamic_dir) / "root.yml"
        secret.write_text("http: {}\n")
        secret.chmod(0o600)
        with as_nobody():
            check = _checks(config, clients, target)["route"]
        assert _checks(config, clients, target)["route"].status == PASS  # as root, as Traefik reads it
    assert check.status == FAIL and check.evidence.startswith(f"cannot read {secret}: Permission denied: whether "
                                                              "Traefik applies the route is unknown"), check
    assert "run verify as a user who may read every file and directory under" in check.evidence


@pytest.mark.timeout(20)  # a FIFO read as a file waits for a writer: a hang is this test's failure
@pytest.mark.parametrize("make", ["link to nothing", "fifo"])
def test_an_entry_beside_the_route_that_traefik_cannot_read_fails_it(tmp_path, make):
    """Before, a link to nothing or a FIFO named x.yml was skipped (not a regular file) and the route passed,
    though Traefik reads it, fails, and applies nothing: graphsite's new route included."""
    config, clients, target, _ = _world(tmp_path)
    entry = Path(config.deploy.dynamic_dir) / "x.yml"
    if make == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to(tmp_path / "nowhere.yml")
    check = _checks(config, clients, target)["route"]
    assert check.status == FAIL, check
    assert check.evidence.startswith(f"Traefik applies no change while a file is broken: {entry}: cannot read: ")


def test_a_record_that_is_missing_or_points_elsewhere_fails(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    dns = _fakes(clients)[1]
    elsewhere = config.replace("verify", resolve_https="192.0.2.1:443")
    assert _checks(elsewhere, clients, target)["dns"].status == FAIL
    dns.zone.clear()
    checks = _checks(config, clients, target)
    assert checks["dns"].status == FAIL and "no A site-1.example.com → 127.0.0.1" in checks["dns"].evidence


@pytest.mark.parametrize("kind,content", [("A", "203.0.113.9"), ("AAAA", "2001:db8::9")])
def test_another_address_record_beside_the_wanted_one_fails(tmp_path, kind, content):
    """Before, verify kept only the A records and passed when the wanted one was among them: another A or an
    AAAA at the name sends some readers to another host."""
    config, clients, target, _ = _world(tmp_path)
    dns = _fakes(clients)[1]
    (ours,) = dns.zone.values()
    other = dns.add("site-1.example.com", "made by hand", content, type_=kind)
    check = _checks(config, clients, target)["dns"]
    assert check.status == FAIL and check.evidence == (
        f"A id={ours.id} → 127.0.0.1, but site-1.example.com also has {kind} {content} (id={other.id}, graphsite "
        "did not make it): readers are split between hosts; remove the records beside it in Cloudflare")


def test_each_record_beside_or_instead_of_the_wanted_one_says_whose_it_is(tmp_path):
    """Before, the other records were named by address and id alone: one of this configuration's own, left at
    the address dns.record_content named before it changed, read like anyone's."""
    config, clients, target, _ = _world(tmp_path)
    dns = _fakes(clients)[1]
    (ours,) = dns.zone.values()
    old = dns.add("site-1.example.com", ours.comment, "192.0.2.1")  # this configuration's, at its old address
    check = _checks(config, clients, target)["dns"]
    assert check.status == FAIL and check.evidence.startswith(
        f"A id={ours.id} → 127.0.0.1, but site-1.example.com also has A 192.0.2.1 (id={old.id}, this "
        f"configuration's, deployment {target.id}): readers are split"), check
    moved = dataclasses.replace(config, dns=dataclasses.replace(config.dns, record_content="192.0.2.50"))
    check = _checks(moved, clients, target)["dns"]
    assert check.evidence == (
        f"no A site-1.example.com → 192.0.2.50 in Cloudflare (found: A 127.0.0.1 (id={ours.id}, this "
        f"configuration's, deployment {target.id}), A 192.0.2.1 (id={old.id}, this configuration's, deployment "
        f"{target.id}))"), check


def test_a_proxied_record_passes_without_a_resolver_override(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    dns = _fakes(clients)[1]
    for key, record in list(dns.zone.items()):
        dns.zone[key] = dataclasses.replace(record, proxied=True)
    checks = _checks(config.replace("verify", resolve_https=""), clients, target)
    assert checks["dns"].status == PASS and "proxied" in checks["dns"].evidence


def test_a_service_with_fewer_running_tasks_than_replicas_fails_at_the_deadline(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    swarm = _fakes(clients)[0]
    swarm.services_by_name["site-1"] = dataclasses.replace(swarm.services_by_name["site-1"], replicas=2)
    checks = _checks(config, clients, target)
    assert checks["service"].status == FAIL and checks["service"].evidence == "1/2 replicas running"
    del swarm.services_by_name["site-1"]
    assert _checks(config, clients, target)["service"].evidence == "no service site-1"


def test_a_service_scaled_to_zero_fails_rather_than_passing_zero_of_zero(tmp_path):
    """Before, `0/0 replicas running` was a PASS: after `docker service scale NAME=0` nothing serves the page.
    The fix named is a deploy only: `docker service scale NAME=1` ignored deploy.replicas, and Docker refuses to
    scale a service in global mode."""
    config, clients, target, _ = _world(tmp_path)
    swarm = _fakes(clients)[0]
    swarm.services_by_name["site-1"] = dataclasses.replace(swarm.services_by_name["site-1"], replicas=0)
    check = _checks(config, clients, target)["service"]
    assert check.status == FAIL and check.evidence == (
        "service site-1 is scaled to 0 replicas: nothing serves the page; deploy it again (it sets "
        "deploy.replicas)")


def test_a_title_other_than_the_deployed_one_fails_the_public_check(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    checks = _checks(config, clients, dataclasses.replace(target, title="Another title"))
    assert checks["public"].status == FAIL and "<title> is 'A small report'" in checks["public"].evidence


def test_no_origin_address_is_a_skip_not_a_guess(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    checks = _checks(config.replace("verify", origin_address=""), clients, target)
    assert (checks["origin"].status, checks["origin"].evidence) == (SKIP, "verify.origin_address is empty")


def test_a_private_page_without_its_password_is_skipped_and_with_it_passes(tmp_path):
    config, clients, target, credentials = _world(tmp_path, private=True)
    assert credentials is not None and target.access == "private"
    _fakes(clients)[3].credentials = credentials
    unread = _checks(config, clients, target)
    assert (unread["origin"].status, unread["public"].status) == (SKIP, SKIP) and UNREAD in unread["public"].evidence
    read = _checks(config, clients, target, credentials)
    assert all(c.status == PASS for c in read.values()), read
    assert read["public"].evidence.startswith("HTTP 401 without credentials, ")
    assert verify(VerifySettings.from_config(config), "site-1", clients).content_checked is False


def test_a_private_page_that_answers_without_a_password_fails(tmp_path):
    config, clients, target, credentials = _world(tmp_path, private=True)
    _, _, routes, _ = _fakes(clients)
    (path,) = routes.files
    document = routes.document(path)
    assert document is not None
    del document["http"]["middlewares"]  # the route lost its basicAuth: the page is served to anyone
    document["http"]["routers"]["site-1-websecure"].pop("middlewares")
    routes.files[path] = yaml.safe_dump(document)
    checks = _checks(config, clients, target, credentials)
    assert checks["public"].status == FAIL and "a private page must answer 401" in checks["public"].evidence
    assert checks["route"].status == FAIL and "no basicAuth middleware" in checks["route"].evidence


def test_with_a_task_header_the_origin_check_reaches_every_task(tmp_path):
    config, clients, target, credentials = _world(tmp_path, private=True)
    config = config.replace("verify", task_header="X-Graphsite-Task")
    swarm, _, _, edge = _fakes(clients)
    edge.credentials = credentials
    assert "1/1 tasks HTTP 200" in _checks(config, clients, target, credentials)["origin"].evidence
    skipped = _checks(config, clients, target)["origin"]
    assert skipped.status == SKIP and "1/1 tasks HTTP 401 without credentials" in skipped.evidence
    swarm.overlay = "another-network"
    unreached = _checks(config, clients, target, credentials)["origin"]
    assert unreached.status == FAIL and "no address on network dokploy-network" in unreached.evidence


@pytest.mark.parametrize("labels,why", [
    ({"graphsite.fqdn": "site-1.other.org"}, r"another graphsite configuration's \(site-1.other.org\)"),
    ({"graphsite.id": ""}, r"its graphsite stamp proves nothing \(not proven\)"),
    ({"graphsite.created": "yesterday"}, r"its graphsite stamp proves nothing \(not proven\)"),
], ids=["another-domain", "no-id", "no-time"])
def test_a_service_whose_labels_do_not_prove_it_ours_is_not_verified(tmp_path, labels, why):
    """Before, verify took any service named NAME with a sha256 label for this configuration's deployment and
    could pass it: what it served was judged against labels nothing proved."""
    config, clients, _, _ = _world(tmp_path)
    swarm = _fakes(clients)[0]
    service = swarm.services_by_name["site-1"]
    swarm.services_by_name["site-1"] = dataclasses.replace(service, labels={**service.labels, **labels})
    with pytest.raises(VerifyError, match=f"site-1: not verified: the Swarm service of that name is not this "
                                          f"configuration's deployment: {why}"):
        verify(VerifySettings.from_config(config), "site-1", clients)


def test_a_service_relabelled_since_it_was_judged_fails_the_service_check(tmp_path):
    config, clients, target, _ = _world(tmp_path)
    swarm = _fakes(clients)[0]
    service = swarm.services_by_name["site-1"]
    swarm.services_by_name["site-1"] = dataclasses.replace(service, labels={**service.labels, "graphsite.id": "f" * 8})
    check = _checks(config, clients, target)["service"]
    assert check.status == FAIL and check.evidence == (
        f"service site-1: its labels (id ffffffff, fqdn site-1.example.com) are not this deployment's stamp "
        f"(id {target.id}, fqdn site-1.example.com)")
