"""One read of each resource per run: what a use case decides on is what it read once, so that two reads of one
resource cannot disagree within a run. Counted on the in-memory fakes of the ports (every call is recorded in
`faults.calls`); a second read fails the test, unless it is one the use case needs (after a write, to prove it
landed; right before a write that must not act on an older answer), which the test names."""

from __future__ import annotations

import errno
import hashlib
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphsite.config import Config
from graphsite.errors import DeployError, GraphsiteError
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import MARKER, Deployment, PageDirectory, Stamp
from graphsite.publisher.plan import make_plan
from graphsite.usecases.deploy import DeployRequest, _refuse_foreign, deploy
from graphsite.usecases.history import held_here, history
from graphsite.usecases.inventory import DIRECTORIES, Answers, SurveySettings, Unread, survey
from graphsite.usecases.rollback import RollbackRequest, rollback
from tests.publisher.fakes import FakeBinds, FakeDns, FakeRoutes, FakeSwarm, Fault, Recorder, fake_world

STAMP = Stamp("site-1", "site-1.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z", "2026-07-08T12:00:00Z")


def _fakes(clients: Clients) -> tuple[FakeSwarm, FakeDns, FakeRoutes, FakeBinds]:
    swarm, dns, routes, binds = clients.swarm, clients.dns, clients.routes, clients.binds
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns)
    assert isinstance(routes, FakeRoutes) and isinstance(binds, FakeBinds)
    return swarm, dns, routes, binds


# The calls that only read, by port; `read_config` is counted per config (FakeSwarm.read_configs).
_READS = {"swarm": {"node_id", "service", "services", "tasks", "node_names", "configs", "config_stamps",
                    "labelled_configs", "configs_named", "daemon", "network"},
          "dns": {"records", "a_records"},
          "routes": {"routes", "temporaries", "text", "document", "stamp", "exists", "link"}}


def _twice(calls: list[str], port: str = "") -> dict[str, int]:
    """Return the calls (the reads of `port`, when given) made more than once, with their count."""
    return {method: n for method, n in Counter(calls).items() if n > 1 and (not port or method in _READS[port])}


def test_a_survey_reads_each_temporary_once_for_whose_it_is_and_when_it_was_made(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm, dns, routes, binds = _fakes(clients)
    dynamic, srv = Path(config.deploy.dynamic_dir), Path(config.deploy.bind_root)
    route_left = dynamic / ".site-1.yml.ab12cd34.tmp"
    routes.files[route_left] = STAMP.route_comment() + "http: {}\n"
    directory_left = srv / ".site-1.x9y8x9y8.tmp"
    binds.dirs[directory_left] = {MARKER: STAMP.marker().encode()}
    for name in (None, "site-1"):  # list, and list NAME (teardown's and deploy's survey)
        for fake in (swarm, dns, routes, binds):
            fake.faults.calls.clear()
        held = survey(SurveySettings.from_config(config), clients, name=name).holdings["site-1"]
        assert held.temporaries == (route_left,) and held.temporary_dirs == (directory_left,)
        # both leftovers are dated by the stamp the one look found (gc collects them past the grace period)
        assert list(held.stamps) == [STAMP, STAMP] and held.created == STAMP.created
        assert routes.faults.calls.count("temporaries") == 1 and binds.faults.calls.count("temporaries") == 1
        assert not {"text", "stamp", "document"} & set(routes.faults.calls), routes.faults.calls
        assert "stamp" not in binds.faults.calls, binds.faults.calls
        assert [_twice(f.faults.calls) for f in (swarm, dns, routes, binds)] == [{}, {}, {}, {}]


def _source(root: Path, text: str) -> Path:
    path = root / "report.md"
    path.write_text(f"# A small report\n\n{text}\n")
    return path


def _cleared(clients: Clients) -> tuple[FakeSwarm, FakeDns, FakeRoutes, FakeBinds]:
    fakes = _fakes(clients)
    for fake in fakes:
        fake.faults.calls.clear()
    return fakes


@pytest.mark.parametrize("content", ["config", "bind"])
def test_a_deploy_and_a_redeploy_decide_on_one_read_of_the_service_its_configs_and_its_record(tmp_path, content):
    config, clients = fake_world(tmp_path)
    for text in ("One paragraph.", "Another paragraph."):  # a first deploy, then a redeploy of a new page
        swarm, dns, routes, binds = _cleared(clients)
        deploy(config, DeployRequest(source=_source(tmp_path, text), subdomain="site-1", content=content,
                                     verify=False), clients, Recorder())
        # the survey's look under the lock: the live page compared with, the plan, the content step, the service
        # step and the removal of the old content all decide on it (ensure_service looks before its own write)
        assert (swarm.faults.calls.count("service"), swarm.faults.calls.count("labelled_configs")) == (1, 1)
        # and the looks right before a write that would otherwise act on the survey's answer: the configs the
        # service mounts, by name (one removed since); the name's records, to decide the DNS step again (one added
        # since would get graphsite's beside it, and --force would delete by a stale id); the route file's text,
        # and when it has none whether anything is there (one written since would be overwritten)
        assert swarm.faults.calls.count("configs_named") == 1
        assert dns.faults.calls.count("records") == 2
        assert routes.faults.calls.count("temporaries") == binds.faults.calls.count("temporaries") == 1
        first = text == "One paragraph."
        assert (routes.faults.calls.count("text"), routes.faults.calls.count("exists")) == (1, 1 if first else 0)
        assert "stamp" not in routes.faults.calls
        assert [_twice(f.faults.calls, port) for f, port in ((swarm, "swarm"), (dns, "dns"), (routes, "routes"))] \
            == [{}, {"records": 2}, {}]
        # the live page's config is read once, for what the new page changes against it, and kept as a version
        # to serve from that read: a config never changes (its name carries its data's hash)
        assert _twice(swarm.read_configs) == {}
        assert len(swarm.read_configs) == (1 if content == "config" and not first else 0)


def test_rollback_and_history_read_the_service_and_its_configs_once(tmp_path):
    config, clients = fake_world(tmp_path)
    for text in ("One paragraph.", "Another paragraph."):
        deploy(config, DeployRequest(source=_source(tmp_path, text), subdomain="site-1", verify=False), clients,
               Recorder())
    swarm, dns, routes, _ = _cleared(clients)
    swarm.read_configs.clear()
    rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder())
    # the version chosen and the plan serving the others are decided on the survey's one read; each page once
    # (the records are read again right before the DNS step's write, as a deploy's are)
    assert (swarm.faults.calls.count("service"), swarm.faults.calls.count("labelled_configs")) == (1, 1)
    assert [_twice(f.faults.calls, port) for f, port in ((swarm, "swarm"), (dns, "dns"), (routes, "routes"))] \
        == [{}, {"records": 2}, {}]
    assert len(swarm.read_configs) == 2 and _twice(swarm.read_configs) == {}
    swarm, *_ = _cleared(clients)
    listed = history(SurveySettings.from_config(config), "site-1", clients)
    assert len(listed.found.versions) == 2 and sorted(swarm.faults.calls) == ["labelled_configs", "service"]


@pytest.mark.parametrize("port, method", [("swarm", "service"), ("swarm", "labelled_configs"), ("dns", "records"),
                                          ("routes", "routes"), ("routes", "temporaries")])
def test_a_deploy_whose_one_read_fails_makes_nothing_and_asks_no_second_time(tmp_path, port, method):
    """The read failed once; a second read would answer. A deploy that decides on one read refuses, never
    taking a later answer for the one that failed."""
    config, clients = fake_world(tmp_path)
    swarm, dns, routes, binds = _fakes(clients)
    {"swarm": swarm, "dns": dns, "routes": routes}[port].faults.inject(method, Fault.error())
    with pytest.raises(GraphsiteError, match="refused"):
        deploy(config, DeployRequest(source=_source(tmp_path, "One."), subdomain="site-1", verify=False), clients,
               Recorder())
    assert swarm.created == dns.created == routes.created == binds.created == []


def test_history_and_rollback_judge_a_service_by_one_sequence(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm = _fakes(clients)[0]
    swarm.add_service("site-1", Stamp("site-1", "site-1.other.org", "0a1b2c3d", STAMP.created).labels())
    refusals = []
    for run in (lambda: history(SurveySettings.from_config(config), "site-1", clients),
                lambda: rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder())):
        with pytest.raises(GraphsiteError) as refused:
            run()
        refusals.append((refused.value.message, refused.value.hint))
    assert refusals[0] == refusals[1] and "another graphsite configuration's (site-1.other.org)" in refusals[0][0]
    assert swarm.created == [] and swarm.removed == []


# What reads a page directory's marker, on the bind store: the look at the directory (its marker's stamp, whether it
# is there, a link) and the stamp alone; a temporary's marker is read by `temporaries`, a version's by `versions`.
_MARKER_READS = ("page_directory", "stamp")


def _marker_reads(binds: FakeBinds) -> list[str]:
    return [call for call in binds.faults.calls if call in _MARKER_READS]


def test_a_bind_deploy_a_redeploy_and_a_rollback_judge_the_page_directory_on_the_surveys_one_look(tmp_path):
    """Before, the plan step read the marker three times: the survey (whose the directory is), the refusal of a
    foreign one, and the proof that it is the deployment's before its versions are read (held_here, a rollback's
    version step too); once the page was live, the removal of the old content read it once more, for nothing:
    it removes a page directory only after a switch to config mode. Now the survey's look is the answer all three
    decide on, and the removal looks only when it may remove. The content step looks once more, on purpose,
    right before it writes the page (what is there must still be what the survey judged: test_meanwhile); a dry
    run writes nothing and does not."""
    config, clients = fake_world(tmp_path)
    runs = [(lambda text=text: deploy(config, DeployRequest(source=_source(tmp_path, text), subdomain="site-1",
                                                            content="bind", verify=False), clients, Recorder()), 2)
            for text in ("One paragraph.", "Another paragraph.", "Another paragraph.")]  # new, other page, same
    runs += [(lambda: rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder()), 2),
             (lambda: rollback(config, RollbackRequest("site-1", dry_run=True), clients, Recorder()), 1)]
    for run, looks in runs:
        binds = _cleared(clients)[3]
        run()
        assert _marker_reads(binds) == ["page_directory"] * looks, binds.faults.calls


def test_a_switch_from_bind_mode_reads_the_marker_once_to_plan_and_once_right_before_the_removal(tmp_path):
    """The switch's plan proves the directory the deployment's on the survey's look; the removal of the old
    directory, once the new page is live, looks at its marker again on purpose: it may have changed since."""
    config, clients = fake_world(tmp_path)
    deploy(config, DeployRequest(source=_source(tmp_path, "One."), subdomain="site-1", content="bind",
                                 verify=False), clients, Recorder())
    binds = _cleared(clients)[3]
    deploy(config, DeployRequest(source=_source(tmp_path, "One."), subdomain="site-1", content="config",
                                 verify=False), clients, Recorder())
    assert _marker_reads(binds) == ["page_directory", "stamp"], binds.faults.calls
    assert not binds.dirs


def test_a_page_directory_whose_look_failed_is_refused_by_a_bind_deploy_never_taken_for_absent(tmp_path):
    """The survey keeps a look that failed as its answer (Unread): a bind deploy, which decides on the directory,
    raises that look's error and makes nothing; a deploy in config mode, which does not, goes on."""
    config, clients = fake_world(tmp_path)
    swarm, dns, routes, binds = _fakes(clients)
    binds.faults.inject("page_directory", Fault.error())
    request = DeployRequest(source=_source(tmp_path, "One."), subdomain="site-1", content="bind", verify=False)
    with pytest.raises(GraphsiteError, match=r"^bind directories: page_directory: refused \(injected\)$"):
        deploy(config, request, clients, Recorder())
    assert swarm.created == dns.created == routes.created == binds.created == []
    assert binds.faults.calls.count("page_directory") == 1  # never asked a second time
    binds.faults.inject("page_directory", Fault.error())
    deploy(config, DeployRequest(source=_source(tmp_path, "One."), subdomain="site-1", content="config",
                                 verify=False), clients, Recorder())
    assert binds.faults.failed == ["page_directory", "page_directory"] and "site-1" in swarm.services_by_name


class _Unlistable(FakeBinds):
    """Page directories whose look fails with an OSError the store did not translate (EACCES on the way)."""

    def page_directory(self, directory: Path) -> PageDirectory:
        self.faults.calls.append("page_directory")
        raise PermissionError(errno.EACCES, "Permission denied", str(directory))


def test_a_page_directory_look_failing_with_an_os_error_is_kept_as_unread_not_as_no_answer(tmp_path):
    """Before, only a GraphsiteError was kept as Unread: an OSError left the survey without answers, and a
    deploy in config mode, which never decides on the page directory, stopped with "not every system could be
    read". Now it is kept as that look's failure, naming the file: a bind deploy refuses with it, a config
    deploy goes on."""
    config, clients = fake_world(tmp_path)
    clients.binds = binds = _Unlistable(Path(config.deploy.bind_root))
    directory = Path(config.deploy.bind_root) / "site-1"
    inventory = survey(SurveySettings.from_config(config), clients, name="site-1")
    answers = inventory.holdings["site-1"].answers
    assert answers is not None and isinstance(answers.directory, Unread)
    assert answers.directory.error.detail == f"bind directories: cannot be read: {directory}: Permission denied"
    assert inventory.unreadable == {DIRECTORIES: f"{directory}: Permission denied"}
    swarm = _fakes(clients)[0]
    with pytest.raises(GraphsiteError) as refused:
        deploy(config, DeployRequest(source=_source(tmp_path, "One."), subdomain="site-1", content="bind",
                                     verify=False), clients, Recorder())
    assert refused.value.detail == answers.directory.error.detail and swarm.created == []
    deploy(config, DeployRequest(source=_source(tmp_path, "One."), subdomain="site-1", content="config",
                                 verify=False), clients, Recorder())
    assert "site-1" in swarm.services_by_name and binds.created == []


def test_a_look_at_another_directory_than_the_one_decided_on_is_refused_even_under_python_o(tmp_path):
    """Before, both guards were `assert`s, which `python -O` removes: a look at another directory would have
    decided on this one. They raise DeployError, whatever the interpreter's flags."""
    config, clients = fake_world(tmp_path)
    bind_root = Path(config.deploy.bind_root)
    elsewhere = PageDirectory(bind_root / "site-2", there=True, stamp=STAMP)
    deployment = Deployment("site-1", "site-1.example.com", id=STAMP.id, content="bind")
    with pytest.raises(DeployError, match=r"^the versions of site-1 are unknown: .*/site-1 was not looked at"):
        held_here("site-1", deployment, bind_root, clients, elsewhere)
    page = "<p>one</p>"
    plan = make_plan(config, "site-1", html=page, sha256=hashlib.sha256(page.encode()).hexdigest(), title="t",
                     content="bind", now=datetime.now(UTC), node_id="node-1")
    with pytest.raises(DeployError, match=r"/site-1 was not looked at \(the survey's look is at .*/site-2\)"):
        _refuse_foreign(plan, None, "example.com", clients, False, (), Answers(None, {}, {}, (), elsewhere))
    assert _fakes(clients)[0].created == []


def _deploy_bind(config: Config, clients: Clients, root: Path, text: str) -> None:
    deploy(config, DeployRequest(source=_source(root, text), subdomain="site-1", content="bind", verify=False),
           clients, Recorder())


_AFTER_A_FAILED_LOOK = {
    "switch to config, keep_versions 1": (1, lambda config, clients, source: deploy(
        config, DeployRequest(source=source, subdomain="site-1", content="config", verify=False), clients,
        Recorder())),
    "switch to config, keep_versions 3": (3, lambda config, clients, source: deploy(
        config, DeployRequest(source=source, subdomain="site-1", content="config", verify=False), clients,
        Recorder())),
    "bind redeploy, keep_versions 1": (1, lambda config, clients, source: deploy(
        config, DeployRequest(source=source, subdomain="site-1", content="bind", verify=False), clients,
        Recorder())),
    "rollback": (3, lambda config, clients, source: rollback(
        config, RollbackRequest("site-1", verify=False), clients, Recorder())),
    "history": (3, lambda config, clients, source: history(SurveySettings.from_config(config), "site-1", clients)),
}


@pytest.mark.parametrize("run", list(_AFTER_A_FAILED_LOOK))
def test_a_failed_look_at_a_bind_deployments_page_directory_refuses_every_run_that_decides_on_it(tmp_path, run):
    """The deployment keeps its page in bind mode: a switch to config mode (which drops its directory, or with
    keep_versions = 1 asks whether this host holds one), a bind redeploy, a rollback and history all decide on
    the page directory, so a look at it that failed refuses each, in that look's words, and changes nothing;
    never taken for "no directory here"."""
    keep, act = _AFTER_A_FAILED_LOOK[run]
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", keep_versions=keep)
    for text in ("One.", "Two."):
        _deploy_bind(config, clients, tmp_path, text)
    swarm, dns, routes, binds = _cleared(clients)
    before = (dict(swarm.services_by_name), dict(swarm.config_labels), dict(binds.dirs), dict(routes.files),
              dict(dns.zone))
    binds.faults.inject("page_directory", Fault.error())
    with pytest.raises(GraphsiteError, match=r"^bind directories: page_directory: refused \(injected\)$"):
        act(config, clients, _source(tmp_path, "Three."))
    assert binds.faults.failed == ["page_directory"]
    assert (swarm.services_by_name, swarm.config_labels, binds.dirs, routes.files, dns.zone) == before
