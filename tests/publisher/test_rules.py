"""The publisher's rules on in-memory fakes of its ports (tests/publisher/fakes.py), real route files and bind
directories in a temporary directory, and the real use cases: gc, teardown, list and the deploy's undo. Every
failure is injected at the call it hits. What these prove: nothing is removed on a state that was not fully
read, nothing that is not this configuration's is ever touched, and a live page survives everything."""

from __future__ import annotations

import contextlib
import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphsite.config import Config
from graphsite.errors import GraphsiteError
from graphsite.publisher import route_files
from graphsite.publisher.access import Access
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import Stamp
from graphsite.publisher.plan import DeployPlan, make_plan
from graphsite.publisher.records import decide_record
from graphsite.publisher.undo import Undo
from graphsite.usecases import gc as gc_module
from graphsite.usecases.deploy import _DECIDED_ON, _apply, _Prepared, _undo
from graphsite.usecases.inventory import Holding, SurveySettings, survey
from graphsite.usecases.teardown import PageState, TeardownSettings, teardown
from tests.publisher.fakes import FakeDns, FakeEdge, FakeSwarm, Fault, Recorder

NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)
PAGE = "<!doctype html><title>t</title><p>page</p>"
READS = {"swarm": ("services", "labelled_configs", "service", "tasks"), "dns": ("a_records", "records")}


def _config(root: Path, domain: str = "example.com") -> Config:
    routes = root / f"dynamic-{domain}"
    routes.mkdir(parents=True, exist_ok=True)
    return (Config().replace("site", domain=domain)
            .replace("deploy", dynamic_dir=str(routes), bind_root=str(root / "srv"), lock_dir=str(root / "locks"),
                     gc_grace=900.0)
            .replace("verify", origin_address="edge.test:443", resolve_https="")
            .replace("dns", record_content="127.0.0.1"))


def _clients(*configs: Config) -> Clients:
    """Fakes of every port; the edge serves what the route files of `configs` route."""
    swarm = FakeSwarm()
    edge = FakeEdge(swarm, [Path(c.deploy.dynamic_dir) for c in configs], PAGE.encode())
    return Clients(dns=FakeDns(), swarm=swarm, edge=edge)


def _deploy(config: Config, clients: Clients, name: str, *, ttl: timedelta | None = timedelta(hours=1),
            now: datetime = NOW) -> None:
    """Make `name` as deploy's own steps make it (content, service, converge, route, record), through the fakes."""
    plan = make_plan(config, name, html=PAGE, sha256=hashlib.sha256(PAGE.encode()).hexdigest(), title="t",
                     content="config", now=now, ttl=ttl)
    _apply(_prepared(config, clients, plan), clients, Undo(), config, Recorder())


def _prepared(config: Config, clients: Clients, plan: DeployPlan) -> _Prepared:
    """What deploy's plan step gives the steps after it: the name's survey, with every system it decides on read
    (a read that fails raises), and the record decision made on that read."""
    held = survey(SurveySettings.from_config(config), clients, name=plan.subdomain,
                  required=_DECIDED_ON).holdings[plan.subdomain]
    assert held.answers is not None
    decision = decide_record(list(held.answers.records), plan.record, config.site.domain)
    return _Prepared(plan, decision, None, Access(), held)


def _state(clients: Clients, *configs: Config) -> tuple:
    """Everything the systems hold: services, configs, records, route files."""
    swarm, dns = clients.swarm, clients.dns
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns)
    files = tuple(sorted(p.name for c in configs for p in Path(c.deploy.dynamic_dir).iterdir()))
    return (tuple(sorted(swarm.services_by_name)), tuple(sorted(swarm.config_labels)),
            tuple(sorted((r.name, r.comment) for r in dns.zone.values())), files)


def _expire(config: Config, clients: Clients, name: str) -> None:
    _deploy(config, clients, name, ttl=timedelta(hours=1), now=NOW - timedelta(days=2))


@pytest.mark.parametrize("system,method", [(s, m) for s, methods in READS.items() for m in methods
                                           if m in ("services", "labelled_configs", "a_records")])
@pytest.mark.parametrize("fault", [Fault.error(), Fault.stall(0.01)], ids=["error", "stall"])
def test_gc_removes_nothing_when_one_read_of_its_survey_fails(tmp_path, system, method, fault):
    config = _config(tmp_path)
    clients = _clients(config)
    _expire(config, clients, "gone-1")
    _deploy(config, clients, "live-1")
    before = _state(clients, config)
    getattr(clients, "docker" if system == "swarm" else "dns").faults.inject(method, fault)
    report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(), now=NOW)
    assert report.unreadable and not report.ok and report.collected == ()
    assert _state(clients, config) == before
    clients.dns.faults.clear()
    # the read answers again: the expired one goes
    again = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(), now=NOW)
    assert [(c.name, c.outcome) for c in again.collected] == [("gone-1", gc_module.TORE_DOWN)]


def test_gc_decides_nothing_for_a_name_whose_second_look_under_the_lock_fails(tmp_path):
    config = _config(tmp_path)
    clients = _clients(config)
    _expire(config, clients, "gone-1")
    before = _state(clients, config)
    clients.dns.faults.inject("records", Fault.error())  # the look under the lock asks for the name's records
    report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(), now=NOW)
    assert [(c.name, c.outcome) for c in report.collected] == [("gone-1", gc_module.UNDECIDED)]
    assert not report.ok and _state(clients, config) == before


def test_gc_never_touches_another_configuration_s_deployment_or_a_lookalike_record(tmp_path):
    prod, staging = _config(tmp_path), _config(tmp_path, "staging.example.com")
    clients = _clients(prod, staging)
    _expire(prod, clients, "gone-1")
    _expire(staging, clients, "other-1")
    _deploy(prod, clients, "live-1")
    dns = clients.dns
    assert isinstance(dns, FakeDns)
    dns.add("hand-1.example.com", "graphsite: hand-1 (made by hand)")
    copied = next(r.comment for r in dns.zone.values() if r.name == "live-1.example.com")
    dns.add("copy-1.example.com", copied)  # a whole stamp, copied onto another name
    report = gc_module.collect(gc_module.GcSettings.from_config(prod), clients, Recorder(), now=NOW, dry_run=False)
    assert [(c.name, c.outcome) for c in report.collected] == [("gone-1", gc_module.TORE_DOWN)]
    services, _, records, _ = _state(clients, prod, staging)
    assert services == ("live-1", "other-1")
    assert {name for name, _ in records} == {"live-1.example.com", "other-1.staging.example.com",
                                             "hand-1.example.com", "copy-1.example.com"}
    seen = survey(SurveySettings.from_config(prod), clients)
    claims = {(f.kind, f.name.split(" id=")[0]): str(f.claim) for f in seen.foreign}
    assert claims[("service", "other-1")] == "another configuration"
    assert claims[("record", "A hand-1.example.com")] == "not proven"
    assert claims[("record", "A copy-1.example.com")] == "not proven"
    assert set(seen.holdings) == {"live-1"}


def test_teardown_keeps_the_record_it_could_not_look_up_and_says_it_is_not_finished(tmp_path):
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, "site-1")
    clients.dns.faults.inject("records", Fault.error(), times=2)  # the DNS step and the proof
    report = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    assert not report.clean and any(o.failed and o.resource == "record" for o in report.outcomes)
    assert report.left == ("Cloudflare: not checked",)
    _, _, records, files = _state(clients, config)
    assert [name for name, _ in records] == ["site-1.example.com"] and files == ()
    after = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    assert after.left == () and not any(o.failed for o in after.outcomes)
    assert _state(clients, config) == ((), (), (), ())


def test_a_teardown_whose_edge_cannot_be_asked_is_not_proven(tmp_path):
    config, clients = _config(tmp_path).replace("verify", origin_address=""), _clients()
    _deploy(config, clients, "site-1")
    report = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    assert report.page_state == PageState.NOT_PROVEN and not report.clean and report.left == ()
    assert "not asked" in report.page


@pytest.mark.parametrize("method", ["create", "ensure_service", "wait_converged"])
def test_the_undo_of_a_deploy_whose_step_fails_or_loses_its_answer_leaves_nothing(tmp_path, method):
    config = _config(tmp_path)
    clients = _clients(config)
    port = clients.dns if method == "create" else clients.docker
    port.faults.inject(method, Fault.lost() if method != "wait_converged" else Fault.error())
    plan = make_plan(config, "site-1", html=PAGE, sha256=hashlib.sha256(PAGE.encode()).hexdigest(), title="t",
                     content="config", now=NOW)
    prepared, undo = _prepared(config, clients, plan), Undo()
    with pytest.raises(GraphsiteError):
        _apply(prepared, clients, undo, config, Recorder())
    _undo(config, clients, prepared, undo, Recorder())
    assert _state(clients, config) == ((), (), (), ())


def test_a_resource_of_the_previous_release_is_adopted_only_beside_a_proven_one(tmp_path):
    config = _config(tmp_path)
    clients = _clients(config)
    swarm = clients.docker
    assert isinstance(swarm, FakeSwarm)
    old = {"graphsite.subdomain": "old-1", "graphsite.created": "2026-06-01T00:00:00Z", "graphsite.expires": ""}
    swarm.add_service("old-1", {**old, "graphsite.fqdn": "old-1.example.com", "graphsite.sha256": "a" * 64})
    swarm.add_config("old-1-page-aaaaaaaaaaaa", old)
    swarm.add_config("stray-1-page-aaaaaaaaaaaa", {**old, "graphsite.subdomain": "stray-1"})
    seen = survey(SurveySettings.from_config(config), clients)
    assert seen.holdings["old-1"].configs == ("old-1-page-aaaaaaaaaaaa",)
    assert [(f.name, str(f.claim)) for f in seen.foreign] == [("stray-1-page-aaaaaaaaaaaa", "older graphsite")]


# --- the property: any failure at any call, any mix of deployments ---------------------------------------------

_METHODS = [("swarm", m) for m in ("services", "labelled_configs", "service", "tasks", "remove_service",
                                   "remove_config")] + [("dns", m) for m in ("a_records", "records", "delete")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(faults=st.lists(st.tuples(st.sampled_from(_METHODS), st.sampled_from(["error", "lost"]),
                                 st.integers(1, 3)), max_size=3),
       expired=st.integers(0, 2), live=st.integers(0, 2), others=st.integers(0, 2), lookalikes=st.booleans())
def test_gc_under_any_failure_never_removes_what_it_must_keep(tmp_path_factory, faults, expired, live, others,
                                                              lookalikes):
    """Any failure, anywhere (an error before the call, or an answer lost after it): no traceback, nothing of
    another configuration or a lookalike touched, no live page removed, nothing removed when the survey could
    not read a system; once the failures stop, the next gc leaves exactly the live and the foreign."""
    root = tmp_path_factory.mktemp("rules")
    prod, staging = _config(root), _config(root, "staging.example.com")
    clients = _clients(prod, staging)
    for index in range(expired):
        _expire(prod, clients, f"gone-{index}")
    for index in range(live):
        _deploy(prod, clients, f"live-{index}")
    for index in range(others):
        _expire(staging, clients, f"other-{index}")
    if lookalikes:
        assert isinstance(clients.dns, FakeDns)
        clients.dns.add("hand-1.example.com", "graphsite: hand-1")
    kept = _kept(clients, prod, staging)
    before = _state(clients, prod, staging)
    for (system, method), kind, times in faults:
        port = clients.docker if system == "swarm" else clients.dns
        port.faults.inject(method, Fault.lost() if kind == "lost" else Fault.error(), times)
    # gc reports every failure (a system it could not read, a name it could not tear down) and carries on: it
    # never raises, so a failure that escaped it would fail this test, not pass as "reported in one line"
    report = gc_module.collect(gc_module.GcSettings.from_config(prod), clients, Recorder(), now=NOW)
    assert kept <= _everything(clients, prod, staging)
    if report.unreadable:
        assert _state(clients, prod, staging) == before
    for port in (clients.docker, clients.dns):
        port.faults.clear()
    gc_module.collect(gc_module.GcSettings.from_config(prod), clients, Recorder(), now=NOW)
    assert _everything(clients, prod, staging) == kept


def test_gc_reports_a_name_it_cannot_lock_as_failed_and_carries_on_to_the_next(tmp_path):
    """The path no fault of the ports reaches: an error raised inside a name's collection (here the lock, with
    deploy.lock_dir a file) is that name's `failed`, in one line, and gc goes on to the next name."""
    config = _config(tmp_path)
    clients = _clients(config)
    for name in ("gone-1", "gone-2"):
        _expire(config, clients, name)
    Path(config.deploy.lock_dir).write_text("not a directory")
    before = _state(clients, config)
    report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(),
                               now=NOW + timedelta(days=1))
    why = f"deploy.lock_dir: cannot create a lock in {config.deploy.lock_dir}: File exists"
    assert [(c.name, c.outcome, c.reason) for c in report.collected] == [
        ("gone-1", gc_module.FAILED, why), ("gone-2", gc_module.FAILED, why)]
    assert not report.ok and _state(clients, config) == before


def _everything(clients: Clients, *configs: Config) -> set[str]:
    services, config_names, records, files = _state(clients, *configs)
    return set(services) | set(config_names) | {n for n, _ in records} | set(files)


def _kept(clients: Clients, prod: Config, staging: Config) -> set[str]:
    """What gc must leave: every live deployment of prod's, everything of staging's, every lookalike."""
    return {item for item in _everything(clients, prod, staging) if not item.startswith("gone-")}


def test_a_stamp_of_this_release_is_written_on_every_resource_deploy_makes(tmp_path):
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, "site-1")
    swarm, dns = clients.docker, clients.dns
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns)
    stamps = [Stamp.from_labels(swarm.services_by_name["site-1"].labels)]
    stamps += [Stamp.from_labels(labels) for labels in swarm.config_labels.values()]
    stamps += [route_files.route_stamp(Path(config.deploy.dynamic_dir) / "site-1.yml")]
    stamps += [r.stamp for r in dns.zone.values()]
    # the service, its two configs, the route and the record: one stamp, this configuration's
    assert len(stamps) == 5 and len(set(stamps)) == 1
    assert stamps[0] is not None and stamps[0].claim("site-1", "example.com") == "ours"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(faults=st.lists(st.tuples(st.sampled_from(_METHODS + [("dns", "create"), ("swarm", "ensure_service"),
                                                             ("swarm", "ensure_config"), ("swarm", "wait_converged")]),
                                 st.sampled_from(["error", "lost"]), st.integers(1, 2)), min_size=1, max_size=3))
def test_list_teardown_and_deploy_under_any_failure_say_so_and_a_later_teardown_leaves_nothing(tmp_path_factory,
                                                                                               faults):
    """Any failure at any call during a deploy, a list and a teardown: no traceback; list fails (exit 1) whenever
    a read failed; and once the failures stop, a teardown leaves nothing of the name in any system."""
    from graphsite.commands import present

    root = tmp_path_factory.mktemp("rules")
    config = _config(root)
    clients = _clients(config)
    for (system, method), kind, times in faults:
        port = clients.docker if system == "swarm" else clients.dns
        port.faults.inject(method, Fault.lost() if kind == "lost" else Fault.error(), times)
    plan = make_plan(config, "site-1", html=PAGE, sha256=hashlib.sha256(PAGE.encode()).hexdigest(), title="t",
                     content="config", now=NOW)
    undo = Undo()
    try:
        prepared = _prepared(config, clients, plan)
        _apply(prepared, clients, undo, config, Recorder())
    except GraphsiteError:  # the undo asks the systems itself: it needs no survey
        prepared = _Prepared(plan, decide_record([], plan.record, "example.com"), None, Access(),
                             Holding("site-1", plan.fqdn))
        _undo(config, clients, prepared, undo, Recorder())
    swarm, dns = clients.docker, clients.dns
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns)
    before = len(swarm.faults.failed), len(dns.faults.failed)
    seen = survey(SurveySettings.from_config(config), clients)
    failed_reads = swarm.faults.failed[before[0]:] + dns.faults.failed[before[1]:]  # every call the survey makes reads
    assert bool(seen.unreadable) == bool(failed_reads), (failed_reads, seen.unreadable)
    if failed_reads:
        with pytest.raises(present.Incomplete):
            present.listing(seen, NOW, as_json=True)
    with contextlib.suppress(GraphsiteError):  # said in one line; what is left is for the next teardown
        teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    for port in (clients.docker, clients.dns):
        port.faults.clear()
    final = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    assert final.left == () and not any(o.failed for o in final.outcomes), final
    assert _state(clients, config) == ((), (), (), ())


def test_gc_decides_nothing_where_the_dynamic_directory_is_not(tmp_path):
    """On a host (or a container) without Traefik's dynamic directory, the routes are unknown, not absent: every
    deployment would look partial and gc would tear live pages down."""
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, "live-1")
    (Path(config.deploy.dynamic_dir) / "live-1.yml").rename(tmp_path / "elsewhere.yml")
    Path(config.deploy.dynamic_dir).rmdir()
    report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(),
                               now=NOW + timedelta(days=1))
    assert report.collected == () and "does not exist" in report.unreadable["route directory"]
    assert _state(clients)[0] == ("live-1",)


def test_a_page_directory_of_graphsite_0_1_is_not_adopted_beside_a_temporary_file(tmp_path):
    """A 0.1 marker names no domain: on a shared bind root, another configuration's leftover temporary route file
    of the same name proves nothing, so teardown keeps the directory."""
    staging = _config(tmp_path, "staging.example.com")
    clients = _clients(staging)
    directory = Path(staging.deploy.bind_root) / "blog"
    directory.mkdir(parents=True)
    (directory / ".graphsite").write_text("made by graphsite deploy: name=blog created=2026-06-01T00:00:00Z "
                                          "expires=\n")
    (directory / "index.html").write_text("production's page")
    (Path(staging.deploy.dynamic_dir) / ".blog.yml.x1y2x1y2.tmp").write_text("")
    seen = survey(SurveySettings.from_config(staging), clients)
    assert "blog" not in seen.holdings  # nothing of the name proves it: both are shown, neither is adopted
    assert [(f.kind, str(f.claim)) for f in seen.foreign] == [("temporary route", "unfinished write"),
                                                               ("directory", "older graphsite")]
    teardown(TeardownSettings.from_config(staging), "blog", clients, Recorder())
    assert (directory / "index.html").read_text() == "production's page"


def test_the_undo_removes_only_what_carries_this_run_s_stamp(tmp_path):
    """A config of the plan's name that graphsite did not label is not this run's to remove, even though the
    run registered the undo of its create before it found the config there."""
    config = _config(tmp_path)
    clients = _clients(config)
    plan = make_plan(config, "site-1", html=PAGE, sha256=hashlib.sha256(PAGE.encode()).hexdigest(), title="t",
                     content="config", now=NOW)
    swarm = clients.docker
    assert isinstance(swarm, FakeSwarm)
    swarm.add_config(plan.service.configs[0].name, {"made-by": "hand"})
    swarm.faults.inject("wait_converged", Fault.error())
    prepared, undo = _prepared(config, clients, plan), Undo()
    with pytest.raises(GraphsiteError):
        _apply(prepared, clients, undo, config, Recorder())
    _undo(config, clients, prepared, undo, Recorder())
    assert _state(clients, config) == ((), (plan.service.configs[0].name,), (), ())


def test_a_teardown_that_could_not_read_the_routes_decides_nothing_about_the_route(tmp_path):
    """The route directory could not be listed: the route file is neither "not graphsite's" nor "absent" but not
    known, so it is left in place, the outcome says why, and the teardown is not finished."""
    import dataclasses

    from graphsite.errors import DeployError
    from graphsite.publisher.stores import RouteFiles

    class UnreadableRoutes(RouteFiles):
        def routes(self, dynamic_dir: Path, name: str | None = None) -> dict[Path, Stamp | None]:
            raise DeployError(f"{dynamic_dir}: cannot list it: Input/output error")

    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, "site-1")
    route_file = Path(config.deploy.dynamic_dir) / "site-1.yml"
    assert route_file.is_file()
    blind = dataclasses.replace(clients, routes=UnreadableRoutes())
    report = teardown(TeardownSettings.from_config(config), "site-1", blind, Recorder())
    route = [o for o in report.outcomes if o.resource == "route"]
    assert len(route) == 1 and route[0].failed and "cannot list it" in route[0].detail, route
    assert not report.clean and route_file.is_file()
