"""What another hand changes between a deploy's plan and its writes (a human in Cloudflare, a teardown run on
another host, another configuration sharing the dynamic directory). A deploy decides on its survey's one read;
a write that would remove, overwrite or add beside what that read found looks right before it, and refuses, or
makes again what it needs, when the world is no longer what the plan decided on. The world changes through a
reporter (fakes.Meanwhile) as a step starts, every port an in-memory fake."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from graphsite.config import Config
from graphsite.errors import DeployError
from graphsite.publisher import bind, route
from graphsite.publisher.clients import Clients
from graphsite.publisher.cloudflare import DnsError
from graphsite.publisher.deployment import MARKER, PageDirectory, Stamp
from graphsite.publisher.swarm import Service
from graphsite.usecases.deploy import DeployRequest, DeployResult, deploy
from graphsite.usecases.rollback import RollbackRequest, rollback
from tests.publisher.fakes import FakeBinds, FakeDns, FakeRoutes, FakeSwarm, Fault, Meanwhile, Recorder, fake_world

FQDN = "site-1.example.com"


def _deploy(config: Config, clients: Clients, root: Path, text: str, reporter: Recorder | None = None,
            **request) -> DeployResult:
    source = root / "report.md"
    source.write_text(f"# A small report\n\n{text}\n")
    return deploy(config, DeployRequest(source=source, subdomain="site-1", verify=False, **request), clients,
                  reporter or Recorder())


def _two_versions(tmp_path: Path) -> tuple[Config, Clients, FakeSwarm, str]:
    """Return a world where site-1 serves "Two." and keeps "One." (its page config, whose name is returned)."""
    config, clients = fake_world(tmp_path)
    swarm = clients.swarm
    assert isinstance(swarm, FakeSwarm)
    first = _deploy(config, clients, tmp_path, "One.")
    _deploy(config, clients, tmp_path, "Two.")
    return config, clients, swarm, f"site-1-page-{first.plan.sha256[:12]}"


def _torn_down_elsewhere(swarm: FakeSwarm, config: str) -> Callable[[], None]:
    """Return what a teardown run on another host (its lock is not this host's) does: the service first, then a
    config (Docker refuses to remove a config a service mounts)."""

    def tear_down() -> None:
        assert swarm.remove_service("site-1") and swarm.remove_config(config)

    return tear_down


def test_a_kept_version_removed_after_the_plan_fails_the_run_before_a_service_mounts_it(tmp_path):
    """Before, the content step judged the configs as the survey read them: a kept version removed since passed,
    and the service was written mounting a config that is not there (Swarm refuses it)."""
    config, clients, swarm, kept = _two_versions(tmp_path)
    said = Meanwhile({"content": _torn_down_elsewhere(swarm, kept)})
    swarm.faults.calls.clear()
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, tmp_path, "Three.", said)
    assert refused.value.detail == f"config {kept}, a kept version, was removed while this deploy ran"
    assert "content failed" in said.lines and "site-1" not in swarm.services_by_name
    assert "ensure_service" not in swarm.faults.calls


def test_a_rollback_whose_deployment_was_torn_down_after_the_plan_brings_nothing_back(tmp_path):
    """Another host tore the deployment down (its service, then the rollback target's config) between the plan and
    the content step. The content step's look makes the target again from the page the plan read; the service
    step then finds no service where the plan read one and stops, and the undo removes what this run made:
    nothing of the torn-down deployment comes back (before, the service was made again, its undo a redeploy's)."""
    config, clients, swarm, target = _two_versions(tmp_path)
    with pytest.raises(DeployError, match="site-1 was removed since this deploy's plan read it"):
        rollback(config, RollbackRequest("site-1", verify=False), clients,
                 Meanwhile({"content": _torn_down_elsewhere(swarm, target)}))
    assert "site-1" not in swarm.services_by_name and target not in swarm.config_labels
    assert f"config {target}" in swarm.created  # the content step made it again before the service step's look


def _dns(clients: Clients) -> FakeDns:
    assert isinstance(clients.dns, FakeDns)
    return clients.dns


def test_a_record_added_by_hand_after_the_plan_is_never_written_beside(tmp_path):
    """Before, the DNS step created graphsite's record beside it: two A records, round-robin to another address."""
    config, clients = fake_world(tmp_path)
    dns = _dns(clients)
    said = Meanwhile({"dns": lambda: dns.add(FQDN, "made by hand", content="203.0.113.9")})
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, tmp_path, "One.", said)
    assert refused.value.detail == (f"DNS: {FQDN} already points at 203.0.113.9 (A id=rec1), not 127.0.0.1 (found "
                                    "right before the write; this deploy's plan was to create the A record)")
    assert [(r.content, r.comment) for r in dns.zone.values()] == [("203.0.113.9", "made by hand")]
    assert dns.created == [] and dns.removed == []


def test_a_look_at_the_records_that_fails_right_before_the_write_fails_the_run_in_cloudflare_s_words(tmp_path):
    config, clients = fake_world(tmp_path)
    dns = _dns(clients)
    with pytest.raises(DnsError) as failed:
        _deploy(config, clients, tmp_path, "One.", Meanwhile({"dns": lambda: dns.faults.inject("records",
                                                                                               Fault.error())}))
    assert failed.value.detail == "Cloudflare: records: refused (injected)"
    assert dns.zone == {} and dns.faults.calls == ["records"] * 4  # the survey, the look, the undo, its proof


def test_with_force_a_record_repointed_after_the_plan_is_never_replaced_by_a_stale_id(tmp_path):
    """Before, --force deleted the record the plan had read (gone: nothing deleted) and created graphsite's beside
    the one that had replaced it."""
    config, clients = fake_world(tmp_path)
    dns = _dns(clients)
    dns.add(FQDN, "ops", content="203.0.113.9")

    def repointed() -> None:
        dns.delete("rec1")
        dns.add(FQDN, "ops, moved", content="203.0.113.10")

    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, tmp_path, "One.", Meanwhile({"dns": repointed}), force=True)
    assert refused.value.detail == (
        f"DNS: the records of {FQDN} changed since this deploy's plan read them: it was to replace the A record "
        "id=rec1 (203.0.113.9, comment 'ops'), it would now replace the A record id=rec2 (203.0.113.10, comment "
        "'ops, moved'); nothing was written")
    assert [(r.id, r.content) for r in dns.zone.values()] == [("rec2", "203.0.113.10")]
    assert dns.created == [] and dns.removed == ["record rec1"]  # rec1: the other hand's delete


@pytest.mark.parametrize("redeploy", [False, True], ids=["first deploy", "redeploy"])
def test_a_route_another_configuration_wrote_after_the_plan_is_never_overwritten(tmp_path, redeploy):
    """Before, the route step read the file right before its write (for its undo) but judged whose it was only
    on the survey's read, and wrote over another configuration's route written since."""
    config, clients = fake_world(tmp_path)
    routes = clients.routes
    assert isinstance(routes, FakeRoutes)
    if redeploy:
        _deploy(config, clients, tmp_path, "One.")
    path = Path(config.deploy.dynamic_dir) / "site-1.yml"
    other = Stamp("site-1", "site-1.other.org", "99999999", "2026-07-01T12:00:00Z")
    theirs = route.dump(route.route_document(route.RouteSettings.from_config(config), "site-1",
                                             "site-1.other.org"), other)
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, tmp_path, "Two.", Meanwhile({"route": lambda: routes.files.__setitem__(path, theirs)}))
    assert refused.value.detail == (f"{path} {'changed' if redeploy else 'appeared'} since this deploy's plan read "
                                    "it: another graphsite configuration's (site-1.other.org); left as it is")
    assert routes.files[path] == theirs


def test_a_redeploy_rolls_only_the_service_its_plan_read(tmp_path):
    """A teardown and a deploy of another configuration, run on another host between this redeploy's plan and
    its service step, leave a service of the same name that is not the one the plan judged: it is left as it is,
    never rolled to this run's page; and one removed meanwhile is not made again as if it were a redeploy."""
    config, clients = fake_world(tmp_path)
    swarm = clients.swarm
    assert isinstance(swarm, FakeSwarm)
    _deploy(config, clients, tmp_path, "One.")
    _deploy(config, clients, tmp_path, "Two.")  # a redeploy: its undo would put "One." back, never over theirs
    theirs = swarm.services_by_name["site-1"]

    def replaced() -> None:
        swarm.services_by_name["site-1"] = theirs.__class__(**{**vars(theirs), "id": "theirs",
                                                              "labels": {"graphsite.fqdn": "site-1.other.org"}})

    with pytest.raises(DeployError, match="site-1 was replaced by another service since this deploy's plan"):
        _deploy(config, clients, tmp_path, "Three.", Meanwhile({"service": replaced}))
    assert swarm.services_by_name["site-1"].id == "theirs"
    assert swarm.services_by_name["site-1"].labels == {"graphsite.fqdn": "site-1.other.org"}

    swarm.services_by_name["site-1"] = theirs  # ours again, then removed by another host
    with pytest.raises(DeployError, match="site-1 was removed since this deploy's plan"):
        _deploy(config, clients, tmp_path, "Four.", Meanwhile({"service": lambda: swarm.remove_service("site-1")}))
    assert "site-1" not in swarm.services_by_name


def _deployed_once(tmp_path: Path) -> tuple[Config, Clients, FakeSwarm, Service]:
    """Return a world where site-1 serves "One.", and its service as the next deploy's plan reads it."""
    config, clients = fake_world(tmp_path)
    swarm = clients.swarm
    assert isinstance(swarm, FakeSwarm)
    _deploy(config, clients, tmp_path, "One.")
    return config, clients, swarm, swarm.services_by_name["site-1"]


def test_a_redeploy_never_overwrites_the_service_another_host_redeployed_after_the_plan(tmp_path):
    """Another host rolls the same service (its own redeploy, or `docker service update`) between this redeploy's
    plan and its service step: the same service, so the id alone passed, and its change was overwritten. The update
    carries the version the plan read: it is refused, theirs kept, and what this run made is undone; the undo says
    the service was left as the other change made it."""
    config, clients, swarm, read = _deployed_once(tmp_path)

    def redeployed() -> None:
        swarm.services_by_name["site-1"] = replace(read, replicas=2, version=read.version + 1)

    said = Meanwhile({"service": redeployed})
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, tmp_path, "Two.", said)
    assert (refused.value.detail, refused.value.hint) == (
        "the Swarm service site-1 changed since this deploy's plan read it (another deploy or rollback, or `docker "
        "service update`); this run's update was refused and the service left as it is",
        "run `graphsite list site-1` to see what it serves now, then deploy again")
    assert swarm.services_by_name["site-1"] == replace(read, replicas=2, version=read.version + 1)
    assert set(swarm.config_labels) == set(read.configs)  # this run's page config was undone
    # the undo says what it found: not "already as it was" (before), the service holds the other change
    undone = said.lines[said.lines.index("service failed") + 1:]
    assert undone[0] == "nothing to undo: service site-1 (left as the other change made it)"
    assert [line.split(" site-1-")[0] for line in undone[1:]] == ["undone: removed config"] * 2


@pytest.mark.parametrize("writes", [1, 2], ids=["update started", "update started and completed"])
def test_a_redeploy_after_swarm_s_own_bookkeeping_on_the_service_rolls_it(tmp_path, writes):
    """Swarm writes a service again by itself after an update (its updater marks the rollout started, then
    completed one monitor period after the last task): a redeploy whose plan read the service while the previous
    rollout was finishing found it at an older version. Before, that was refused as another run's change though no
    other run exists; the spec is still the one the plan read, so the update is sent at the new version."""
    config, clients, swarm, read = _deployed_once(tmp_path)

    def bookkeeping() -> None:
        for _ in range(writes):
            swarm.bookkeeping("site-1")

    second = _deploy(config, clients, tmp_path, "Two.", Meanwhile({"service": bookkeeping}))
    assert {o.resource: o.outcome for o in second.outcomes}["service"] == "updated"
    now = swarm.services_by_name["site-1"]
    assert (now.id, now.version, now.labels["graphsite.sha256"]) == (read.id, read.version + writes + 1,
                                                                     second.plan.sha256)


def _theirs(other: Stamp) -> dict[str, bytes]:
    """Return another configuration's page directory of site-1 (as FakeBinds holds one): its marker, its page and
    a file of its own."""
    return {MARKER: other.marker("f" * 64).encode(), bind.PAGE: b"<p>theirs</p>", "notes": b"not graphsite's"}


@pytest.mark.parametrize("run", ["first deploy", "redeploy", "rollback"])
def test_a_page_directory_another_configuration_put_there_after_the_survey_is_never_written_into(tmp_path, run):
    """Before, a bind deploy judged whose the page directory was on the survey's look alone, taken before the
    render and the plan: another configuration's made there since (or swapped in for the deployment's) was
    written into, its marker replaced by this run's, and the deploy said "directory updated"."""
    config, clients = fake_world(tmp_path)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    if run != "first deploy":
        for text in ("One.", "Two."):
            _deploy(config, clients, tmp_path, text, content="bind")
    directory = Path(config.deploy.bind_root) / "site-1"
    theirs = _theirs(_OTHER)
    said = Meanwhile({"plan": lambda: binds.dirs.__setitem__(directory, dict(theirs))})
    with pytest.raises(DeployError) as refused:
        if run == "rollback":
            rollback(config, RollbackRequest("site-1", verify=False), clients, said)
        else:
            _deploy(config, clients, tmp_path, "Three.", said, content="bind")
    assert refused.value.detail == (f"{directory} {'appeared' if run == 'first deploy' else 'changed'} since this "
                                    "deploy's plan read it: another graphsite configuration's (site-1.other.org); "
                                    "left as it is")
    assert binds.dirs[directory] == theirs  # neither written into nor removed by the undo


_OTHER = Stamp("site-1", "site-1.other.org", "99999999", "2026-07-01T12:00:00Z")  # another configuration's


class _SwappedAt(FakeBinds):
    """Page directories where another configuration's directory of the name is swapped in once `at` is called
    after the test arms it (`theirs`): right after the content step's look, or right after its write."""

    at = ""
    theirs: dict[str, bytes] | None = None

    def _swap(self, directory: Path, method: str) -> None:
        if self.at == method and self.theirs is not None:
            self.dirs[directory], self.theirs = dict(self.theirs), None

    def page(self, directory: Path) -> bytes | None:
        found = super().page(directory)
        self._swap(directory, "page")
        return found

    def ensure(self, directory: Path, page: bytes, stamp: Stamp, sha256: str, seen: PageDirectory) -> bool:
        made = super().ensure(directory, page, stamp, sha256, seen)
        self._swap(directory, "ensure")
        return made


def _swapped(tmp_path: Path, at: str, *, first: bool) -> tuple[Config, Clients, _SwappedAt, Meanwhile]:
    """Return a bind world (site-1 deployed twice unless `first`) and the reporter that arms it to swap in
    another configuration's page directory (`_theirs`) at `at` during the content step."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    binds = clients.binds = _SwappedAt(Path(config.deploy.bind_root))
    for text in () if first else ("One.", "Two."):
        _deploy(config, clients, tmp_path, text)
    theirs = _theirs(_OTHER)

    def arm() -> None:  # as the content step starts: the survey and the plan read pages too
        binds.at, binds.theirs = at, theirs

    return config, clients, binds, Meanwhile({"content": arm})


@pytest.mark.parametrize("first", [True, False], ids=["first deploy", "redeploy"])
def test_a_page_directory_swapped_between_the_last_look_and_the_write_is_left_to_the_other_change(tmp_path, first):
    """The write (ensure) compares what it opens with the survey's look and refuses; before, the undo registered
    for the write still ran: a redeploy's wrote the previous page into the other configuration's directory, a
    first deploy's said "NOT undone: … its marker is not the deployment's". Now the refusal settles it."""
    config, clients, binds, said = _swapped(tmp_path, "page", first=first)
    directory = Path(config.deploy.bind_root) / "site-1"
    theirs = _theirs(_OTHER)
    with pytest.raises(DeployError, match=f"{directory} (appeared|changed) since this deploy's plan read it"):
        _deploy(config, clients, tmp_path, "Three.", said)
    assert binds.dirs[directory] == theirs
    resource = f"directory {directory}" if first else f"page in {directory}"
    assert f"nothing to undo: {resource} (left as the other change made it)" in said.lines
    assert not [line for line in said.lines if line.startswith("NOT undone")], said.lines


def test_the_undo_of_a_redeploy_puts_no_page_into_a_directory_swapped_after_the_write(tmp_path):
    """A later step fails after the write; the directory is another configuration's by then. Before, the undo
    put the previous page into it; now it looks at the marker first and leaves it, saying so."""
    config, clients, binds, said = _swapped(tmp_path, "ensure", first=False)
    directory = Path(config.deploy.bind_root) / "site-1"
    theirs = _theirs(_OTHER)
    _swarm_of(clients).faults.inject("ensure_service", Fault.error())
    with pytest.raises(DeployError, match="ensure_service: refused"):
        _deploy(config, clients, tmp_path, "Three.", said)
    assert binds.dirs[directory] == theirs
    assert (f"NOT undone: page in {directory}: {directory}: its marker is no longer this deployment's; the "
            "previous page was not put back there") in said.lines


def _swarm_of(clients: Clients) -> FakeSwarm:
    assert isinstance(clients.swarm, FakeSwarm)
    return clients.swarm


def test_a_page_directory_removed_after_the_survey_is_not_made_again_by_a_redeploy(tmp_path):
    """What the redeploy decided on (the deployment's directory, its versions) is gone: nothing is written."""
    config, clients = fake_world(tmp_path)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    _deploy(config, clients, tmp_path, "One.", content="bind")
    directory = Path(config.deploy.bind_root) / "site-1"
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, tmp_path, "Two.", Meanwhile({"content": lambda: binds.dirs.pop(directory)}),
                content="bind")
    assert refused.value.detail == f"{directory} was removed since this deploy's plan read it; nothing written"
    assert directory not in binds.dirs
