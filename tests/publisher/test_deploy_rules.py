"""deploy and gc as use cases, every port an in-memory fake (tests/publisher/fakes.py): what a deploy makes, what
it refuses before making anything, what its undo removes and proves, what a redeploy leaves behind, what a
signal does, and what gc decides when the world changes between its survey and its look under the lock."""

from __future__ import annotations

import os
import signal
import tempfile
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graphsite.config import Config
from graphsite.errors import BuildError, DeployError
from graphsite.publisher.clients import Clients
from graphsite.publisher.cloudflare import DnsError
from graphsite.publisher.deployment import Stamp, iso
from graphsite.publisher.lock import subdomain_lock
from graphsite.publisher.outcomes import CREATED, UNCHANGED, UPDATED
from graphsite.publisher.swarm import Service, ServiceOutcome
from graphsite.usecases import gc
from graphsite.usecases.deploy import DeployRequest, Stopped, _service_did, deploy
from tests.publisher.fakes import (
    FakeBinds,
    FakeDns,
    FakeEdge,
    FakeRoutes,
    FakeSwarm,
    Fault,
    Recorder,
    SignalledSwarm,
    fake_world,
)
from tests.publisher.nobody import as_nobody

NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)


def _source(root: Path, text: str = "One paragraph.") -> Path:
    path = root / "report.md"
    path.write_text(f"# A small report\n\n{text}\n")
    return path


def _fakes(clients: Clients) -> tuple[FakeSwarm, FakeDns, FakeRoutes, FakeBinds, FakeEdge]:
    swarm, dns, routes, binds, edge = clients.swarm, clients.dns, clients.routes, clients.binds, clients.edge
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns) and isinstance(edge, FakeEdge)
    assert isinstance(routes, FakeRoutes) and isinstance(binds, FakeBinds)
    return swarm, dns, routes, binds, edge


def _held(clients: Clients) -> list[list[str]]:
    """Everything the fakes hold: services, configs, record names, route files, page directories."""
    swarm, dns, routes, binds, _ = _fakes(clients)
    return [sorted(swarm.services_by_name), sorted(swarm.config_labels), sorted(r.name for r in dns.zone.values()),
            sorted(p.name for p in routes.files), sorted(p.name for p in binds.dirs)]


def _deploy(config: Config, clients: Clients, source: Path, reporter: Recorder | None = None, **request):
    return deploy(config, DeployRequest(source=source, **{"subdomain": "site-1", **request}), clients,
                  reporter or Recorder())


def test_a_deploy_makes_each_resource_in_order_and_proves_it_with_seven_checks(tmp_path):
    config, clients = fake_world(tmp_path)
    said = Recorder()
    result = _deploy(config, clients, _source(tmp_path), said)
    assert [(o.resource, o.outcome) for o in result.outcomes] == [
        ("config", CREATED), ("config", CREATED), ("service", CREATED), ("route", CREATED), ("record", CREATED)]
    assert [(c.name, c.status) for c in result.checks] == [
        (name, "PASS") for name in ("service", "origin", "public", "tls", "redirect", "dns", "route")]
    assert _held(clients)[0] == ["site-1"] and _held(clients)[2:4] == [["site-1.example.com"], ["site-1.yml"]]
    steps = [line for line in said.lines if line.endswith(" done")]
    assert steps == [f"{s} done" for s in ("build", "name", "survey", "render", "plan", "content", "service",
                                          "converge", "route", "dns", "verify", "remove old content")]
    assert result.as_json()["url"] == "https://site-1.example.com/" and result.content_checked


def test_a_broken_report_fails_before_any_system_is_asked_and_a_failed_survey_says_survey(tmp_path):
    """Before, the survey ran inside the step labelled "build": a Cloudflare or Swarm failure printed "build …
    failed". The report is read and checked first of all (before the name's look), then the survey is a step."""
    config, clients = fake_world(tmp_path)
    fakes = _fakes(clients)[:4]
    broken = tmp_path / "broken.md"
    broken.write_text("---\ntitle: [unclosed\n---\n\n# A report\n")
    said = Recorder()
    with pytest.raises(BuildError, match="broken.md"):
        _deploy(config, clients, broken, said, subdomain=None)  # a drawn name asks every system first
    assert said.lines == ["build failed"] and [f.faults.calls for f in fakes] == [[], [], [], []]
    fakes[1].faults.inject("records", Fault.error())
    said = Recorder()
    with pytest.raises(DnsError, match="records: refused"):
        _deploy(config, clients, _source(tmp_path), said)
    assert said.lines == ["build done", "name done", "subdomain site-1", "survey failed"]


def test_a_dry_run_makes_nothing_and_says_what_a_run_would_do(tmp_path):
    config, clients = fake_world(tmp_path)
    result = _deploy(config, clients, _source(tmp_path), dry_run=True)
    assert result.dry_run and result.dns == "would create"
    assert {o.outcome for o in result.outcomes} == {"would create"}
    assert _held(clients) == [[], [], [], [], []]


@pytest.mark.parametrize("text, service", [("One paragraph.", "unchanged"), ("Another one.", "updated")])
def test_a_dry_run_says_of_the_service_what_the_run_then_does(tmp_path, text, service):
    """The dry run judges the service by the service step's own rule (swarm.service_verdict), not by a copy."""
    config, clients = fake_world(tmp_path)
    _deploy(config, clients, _source(tmp_path), verify=False)
    dry, run = (_deploy(config, clients, _source(tmp_path, text), dry_run=dry_run, verify=False)
                for dry_run in (True, False))
    said = [{o.resource: o for o in result.outcomes}["service"] for result in (dry, run)]
    assert (said[0], said[1].outcome) == (said[1].planned(), service)


def test_every_outcome_of_ensure_service_is_a_thing_done_or_a_refusal_in_words():
    """Before, the service step turned ensure_service's outcome into a Did by its string value: one that is not a
    Did's (changed, exists, ...) reaching it was a ValueError traceback. The mapping is explicit, refusals worded."""
    done, refused = {}, {}
    for outcome in ServiceOutcome:
        try:
            done[outcome] = _service_did(outcome, "site-1")
        except DeployError as refusal:
            refused[outcome] = refusal.hint
    assert done == {ServiceOutcome.CREATED: CREATED, ServiceOutcome.UPDATED: UPDATED,
                    ServiceOutcome.UNCHANGED: UNCHANGED}
    assert set(refused) == {ServiceOutcome.EXISTS, ServiceOutcome.GONE, ServiceOutcome.ANOTHER,
                            ServiceOutcome.CHANGED}
    assert all(hint.startswith("run `graphsite list site-1`") for outcome, hint in refused.items()
               if outcome is not ServiceOutcome.EXISTS)


def test_a_deploy_without_a_subdomain_draws_one_that_nothing_uses(tmp_path):
    config, clients = fake_world(tmp_path)
    config = config.replace("site", prefix="gs")
    result = _deploy(config, clients, _source(tmp_path), subdomain=None, verify=False)
    assert result.plan.subdomain.startswith("gs-") and _held(clients)[0] == [result.plan.subdomain]


def test_a_failed_verify_undoes_everything_the_run_made_and_proves_it(tmp_path):
    config, clients = fake_world(tmp_path)
    _, _, _, _, edge = _fakes(clients)
    edge.page = b"<!doctype html><title>another page</title>"  # the edge serves something else
    said = Recorder()
    with pytest.raises(DeployError, match="is not the deployed"):
        _deploy(config, clients, _source(tmp_path), said)
    assert _held(clients) == [[], [], [], [], []]
    assert "proof: nothing of site-1 is left" in said.lines
    assert sum(line.startswith("undone: ") for line in said.lines) == 5  # 2 configs, service, route, record


def test_keep_on_failure_keeps_what_the_run_made_and_names_it(tmp_path):
    config, clients = fake_world(tmp_path)
    _fakes(clients)[4].page = b"not the page"
    said = Recorder()
    with pytest.raises(DeployError):
        _deploy(config, clients, _source(tmp_path), said, keep_on_failure=True)
    assert _held(clients)[0] == ["site-1"] and _held(clients)[3] == ["site-1.yml"]
    assert any(line.startswith("kept for inspection (--keep-on-failure): record A site-1.example.com")
               for line in said.lines)


def test_the_undo_says_what_it_could_not_prove(tmp_path):
    """The undo's proof looks again: a look that fails is said, never taken for "nothing left"."""
    config, clients = fake_world(tmp_path)
    swarm, dns, _, _, _ = _fakes(clients)
    dns.faults.inject("create", Fault.lost())  # the record is made, the answer lost
    said = Recorder()
    original = dns.records

    def blind_after_create(name: str):  # from the failed create on, Cloudflare cannot be read
        if "create" in dns.faults.failed:
            raise DnsError("Cloudflare: records: no answer (injected)")
        return original(name)

    dns.records = blind_after_create
    with pytest.raises(DeployError, match="answer was lost"):
        _deploy(config, clients, _source(tmp_path), said, verify=False)
    assert any(line.startswith("proof: left: ") and "Cloudflare not checked" in line for line in said.lines)


def test_a_redeploy_updates_the_service_and_removes_the_old_page_config(tmp_path):
    """With deploy.keep_versions = 1 the previous page is no version to keep (tests/publisher/test_versions.py
    keeps them)."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", keep_versions=1)
    first = _deploy(config, clients, _source(tmp_path))
    second = _deploy(config, clients, _source(tmp_path, "Another paragraph."))
    outcomes = {(o.resource, o.outcome) for o in second.outcomes}
    assert ("service", "updated") in outcomes and ("route", UNCHANGED) in outcomes
    assert ("record", UNCHANGED) in outcomes
    old_page = next(c.name for c in first.plan.service.configs if "-page-" in c.name)
    assert old_page not in _held(clients)[1]  # the previous version's content is removed once the new one is live
    assert second.plan.deployment.created == first.plan.deployment.created  # a redeploy renews, keeps its birth


def test_old_content_that_cannot_be_removed_is_a_warning_not_a_failure(tmp_path):
    config, clients = fake_world(tmp_path)
    _deploy(config, clients, _source(tmp_path))
    swarm = _fakes(clients)[0]
    swarm.faults.inject("remove_config", Fault.error())
    said = Recorder()
    result = _deploy(config, clients, _source(tmp_path, "Changed."), said)
    assert result.checks and any(line.startswith("warning: old content of site-1 left in place") for line in
                                 said.lines)


def test_the_undo_of_a_failed_redeploy_puts_the_previous_version_back(tmp_path):
    config, clients = fake_world(tmp_path)
    _deploy(config, clients, _source(tmp_path))
    swarm, _, routes, _, edge = _fakes(clients)
    before = (swarm.services_by_name["site-1"], dict(routes.files))
    edge.page = b"stale"
    with pytest.raises(DeployError):
        _deploy(config, clients, _source(tmp_path, "Changed."))
    after = swarm.services_by_name["site-1"]  # the spec it had, at a newer version (the undo is an update)
    assert (replace(after, version=before[0].version), routes.files) == before and after.version > before[0].version


@pytest.mark.parametrize("arrange,refusal", [
    (lambda s, r, root: s.add_service("site-1", Stamp("site-1", "site-1.other.org", "id1", iso(NOW)).labels()),
     "a Swarm service named site-1 exists and is not this configuration's"),
    (lambda s, r, root: r.files.__setitem__(root / "dynamic" / "site-1.yml", "http: {}\n"),
     "exists and is not a route of this configuration"),
    (lambda s, r, root: r.links.__setitem__(root / "dynamic" / "site-1.yml", "/etc/passwd"),
     "is a symbolic link to /etc/passwd"),
], ids=["service", "route", "link"])
def test_what_is_not_this_configuration_s_is_refused_before_anything_is_made(tmp_path, arrange, refusal):
    config, clients = fake_world(tmp_path)
    swarm, dns, routes, _, _ = _fakes(clients)
    arrange(swarm, routes, tmp_path)
    before = _held(clients)
    with pytest.raises(DeployError, match=refusal):
        _deploy(config, clients, _source(tmp_path))
    assert _held(clients) == before and swarm.created == dns.created == routes.created == []


def test_a_record_added_beside_graphsite_s_a_record_refuses_the_redeploy(tmp_path):
    """Before, a redeploy said `EXISTS` for graphsite's A record while another A record at the name sent some
    readers to another host: one A record of graphsite's is not the name's whole answer."""
    config, clients = fake_world(tmp_path)
    _deploy(config, clients, _source(tmp_path), verify=False)
    dns = _fakes(clients)[1]
    (ours,) = dns.zone.values()
    other = dns.add("site-1.example.com", "made by hand", "203.0.113.9")
    before = _held(clients)
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, _source(tmp_path, "Changed."), verify=False)
    assert refused.value.detail == (f"DNS: site-1.example.com has A 203.0.113.9 (id={other.id}, graphsite did not "
                                    f"make it) beside graphsite's A 127.0.0.1 (id={ours.id}): readers are split "
                                    "between the addresses")
    assert "remove the other A records in Cloudflare" in (refused.value.hint or "")
    assert _held(clients) == before


def test_two_a_records_of_a_name_are_refused_even_with_force(tmp_path):
    """--force repoints one A record: with two, the other would still send readers elsewhere."""
    config, clients = fake_world(tmp_path)
    dns = _fakes(clients)[1]
    first, second = (dns.add("site-1.example.com", "made by hand", address) for address in ("192.0.2.7", "192.0.2.8"))
    for force in (False, True):
        with pytest.raises(DeployError) as refused:
            _deploy(config, clients, _source(tmp_path), force=force)
        assert refused.value.detail == (f"DNS: site-1.example.com has 2 A records (A 192.0.2.7 (id={first.id}, "
                                        f"graphsite did not make it), A 192.0.2.8 (id={second.id}, graphsite did "
                                        "not make it)), not one")
    assert list(dns.zone.values()) == [first, second] and dns.created == []


def test_graphsite_s_own_record_at_an_old_address_is_named_as_this_configuration_s(tmp_path):
    """Before, the record beside graphsite's A was named by address and id alone: one of this configuration's
    own, left at the address dns.record_content named before it changed, read like anyone's."""
    config, clients = fake_world(tmp_path)
    _deploy(config, clients, _source(tmp_path), verify=False)
    dns = _fakes(clients)[1]
    (ours,) = dns.zone.values()
    old = dns.add("site-1.example.com", ours.comment, "192.0.2.1")  # this configuration's, at its old address
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, _source(tmp_path, "Changed."), verify=False)
    assert refused.value.detail == (f"DNS: site-1.example.com has A 192.0.2.1 (id={old.id}, this configuration's, "
                                    f"deployment {ours.stamp.id}) beside graphsite's A 127.0.0.1 (id={ours.id}): "
                                    "readers are split between the addresses")


def test_a_directory_in_the_dynamic_directory_this_user_cannot_list_refuses_the_deploy():
    """Before, the preflight read a subdirectory this user could not list as empty and passed, though a file in
    it that Traefik (root) cannot load blocks the new route. Proven as nobody, who may write everywhere else."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        root = Path(base)
        root.chmod(0o755)
        config, clients = fake_world(root)
        (root / "locks").mkdir()
        for path in (root / "dynamic", root / "srv", root / "locks"):
            os.chown(path, 65534, 65534)
        hidden = root / "dynamic" / "hidden"
        hidden.mkdir(mode=0o700)  # root's: nobody may not list it
        (hidden / "broken.yml").write_text("http: [\n")
        source = _source(root)
        swarm, dns, routes, _, _ = _fakes(clients)
        with as_nobody(), pytest.raises(DeployError) as refused:
            _deploy(config, clients, source)
        assert f"traefik.files: cannot list {hidden}: Permission denied" in refused.value.detail
        assert swarm.created == dns.created == routes.created == []


def test_a_service_made_meanwhile_by_another_run_is_not_taken_over(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm = _fakes(clients)[0]
    original = swarm.labelled_configs

    def made_meanwhile(subdomain=None):  # another configuration's run makes the name between plan and apply
        swarm.add_service("site-1", Stamp("site-1", "site-1.other.org", "x", iso(NOW)).labels())
        swarm.labelled_configs = original
        return original(subdomain)

    swarm.labelled_configs = made_meanwhile
    with pytest.raises(DeployError, match="appeared since this deploy's plan"):
        _deploy(config, clients, _source(tmp_path))
    assert list(swarm.services_by_name) == ["site-1"] and swarm.config_labels == {}


def test_a_bind_deploy_fills_a_directory_and_its_undo_removes_it(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm, _, _, binds, edge = _fakes(clients)
    result = _deploy(config, clients, _source(tmp_path), content="bind", verify=False)
    directory = Path(config.deploy.bind_root) / "site-1"
    assert ("directory", CREATED) in {(o.resource, o.outcome) for o in result.outcomes}
    assert binds.page_directory(directory).own_stamp == result.plan.stamp and binds.page(directory) == result.plan.page
    edge.page = b"other"
    with pytest.raises(DeployError):  # a redeploy in place: its undo puts the previous page back
        _deploy(config, clients, _source(tmp_path, "Changed."), content="bind")
    assert binds.page(directory) == result.plan.page


def test_a_bind_deploy_s_first_failure_leaves_no_directory(tmp_path):
    config, clients = fake_world(tmp_path)
    _, dns, _, binds, _ = _fakes(clients)
    dns.faults.inject("create", Fault.lost())  # the record is made, its answer lost: the undo still finds it
    with pytest.raises(DeployError):
        _deploy(config, clients, _source(tmp_path), content="bind", verify=False)
    assert binds.dirs == {} and dns.zone == {}


def test_a_signal_undoes_the_run_and_stops_with_128_plus_its_number(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm = SignalledSwarm()
    clients.swarm = swarm
    with pytest.raises(Stopped, match="deploy stopped by SIGTERM; what it had made was undone") as stopped:
        _deploy(config, clients, _source(tmp_path))
    assert stopped.value.exit_code == 128 + signal.SIGTERM
    assert swarm.services_by_name == {} and swarm.config_labels == {}


def test_a_signal_with_keep_on_failure_keeps_it_and_says_so(tmp_path):
    config, clients = fake_world(tmp_path)
    clients.swarm = SignalledSwarm()
    with pytest.raises(Stopped, match="was kept"):
        _deploy(config, clients, _source(tmp_path), keep_on_failure=True)
    assert list(clients.swarm.services_by_name) == ["site-1"]


# --- gc -----------------------------------------------------------------------------------------------------


def _expired(config: Config, clients: Clients, root: Path, name: str) -> None:
    source = _source(root)
    deploy(config, DeployRequest(source=source, subdomain=name, ttl=timedelta(seconds=1), verify=False), clients,
           Recorder())


def _later() -> datetime:
    return datetime.now(UTC) + timedelta(hours=1)


def test_gc_dry_run_names_what_it_would_tear_down_and_removes_nothing(tmp_path):
    config, clients = fake_world(tmp_path)
    _expired(config, clients, tmp_path, "old-1")
    _expired(config, clients, tmp_path, "keep-1")
    before = _held(clients)
    report = gc.collect(gc.GcSettings.from_config(config), clients, Recorder(), dry_run=True, prefix="old",
                        now=_later())
    assert [c.line() for c in report.collected] == [f"would tear down old-1 ({report.collected[0].reason})"]
    assert report.collected[0].reason.startswith("expired ") and report.ok and _held(clients) == before


def test_gc_tears_down_an_expired_name_and_reports_it(tmp_path):
    config, clients = fake_world(tmp_path)
    _expired(config, clients, tmp_path, "old-1")
    report = gc.collect(gc.GcSettings.from_config(config), clients, Recorder(), now=_later())
    (only,) = report.collected
    assert only.outcome == gc.TORE_DOWN and report.ok and _held(clients) == [[], [], [], [], []]
    assert only.as_json()["teardown"]["clean"] is True


def test_gc_reports_a_teardown_that_left_something_as_failed(tmp_path):
    config, clients = fake_world(tmp_path)
    _expired(config, clients, tmp_path, "old-1")
    _fakes(clients)[1].faults.inject("delete", Fault.error())
    report = gc.collect(gc.GcSettings.from_config(config), clients, Recorder(), now=_later())
    (only,) = report.collected
    assert only.outcome == gc.FAILED and only.failed and not report.ok
    assert only.reason.startswith("left: record A old-1.example.com")


def test_gc_skips_a_name_whose_lock_another_run_holds(tmp_path):
    config, clients = fake_world(tmp_path)
    _expired(config, clients, tmp_path, "old-1")
    with subdomain_lock(config.deploy.lock_dir, "old-1"):
        report = gc.collect(gc.GcSettings.from_config(config), clients, Recorder(), now=_later())
    assert [(c.name, c.outcome) for c in report.collected] == [("old-1", gc.BUSY)]
    assert _held(clients)[0] == ["old-1"]


class _RenewedAfterSurvey(FakeSwarm):
    """A redeploy renews (or a teardown removes) the name right after gc's survey listed it."""

    def __init__(self, change: str) -> None:
        super().__init__()
        self.change = change

    def services(self) -> list[Service]:
        listed = super().services()
        for service in listed:
            if self.change == "renew":
                self.services_by_name[service.name] = Service(**{**service.__dict__, "labels": {
                    **service.labels, "graphsite.expires": iso(_later() + timedelta(days=7))}})
            else:
                del self.services_by_name[service.name]
        return listed


@pytest.mark.parametrize("change,outcome", [("renew", gc.RENEWED)])
def test_gc_decides_again_under_the_lock_and_keeps_a_renewed_name(tmp_path, change, outcome):
    config, clients = fake_world(tmp_path)
    swarm = _RenewedAfterSurvey(change)
    clients.swarm = swarm
    _fakes(clients)[4].swarm = swarm
    _expired(config, clients, tmp_path, "old-1")
    report = gc.collect(gc.GcSettings.from_config(config), clients, Recorder(), now=_later())
    assert [(c.name, c.outcome) for c in report.collected] == [("old-1", outcome)]
    assert "no longer expired" in report.collected[0].reason and "old-1" in swarm.services_by_name
