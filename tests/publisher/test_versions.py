"""Versions on the in-memory fakes (tests/publisher/fakes.py) and the real use cases: each deploy's page kept and
mounted under /v/<sha12>/, history newest first with the live one marked, deploy.keep_versions dropping the oldest
and never the live one, rollback choosing a kept version and verifying its sha256, and the refusals: a page config
whose stamp does not prove it is this deployment's is shown, never counted, removed or rolled back to; a read that
fails decides nothing."""

from __future__ import annotations

import hashlib
import json
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from graphsite.config import Config, settings_errors
from graphsite.errors import DeployError, GraphsiteError
from graphsite.paths import schema_path
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import Deployment, PageDirectory, Stamp
from graphsite.publisher.versions import ROOT_PAGE, Held, choose, kept, read_versions, version_target
from graphsite.usecases.deploy import DeployRequest, DeployResult, Stopped, deploy
from graphsite.usecases.history import History, history, read_kept
from graphsite.usecases.inventory import DIRECTORIES, SWARM, SurveySettings, survey
from graphsite.usecases.rollback import RollbackRequest, rollback
from graphsite.usecases.teardown import TeardownSettings, teardown
from tests.publisher.fakes import FakeBinds, FakeEdge, FakeSwarm, Fault, Recorder, SignalledSwarm, fake_world

HISTORY_SCHEMA = jsonschema.Draft202012Validator(json.loads(schema_path("history.schema.json").read_text()))


def _swarm(clients: Clients) -> FakeSwarm:
    assert isinstance(clients.swarm, FakeSwarm)
    return clients.swarm


def _deploy(config: Config, clients: Clients, root: Path, n: int, **request) -> DeployResult:
    source = root / f"report-{n}.md"
    source.write_text(f"---\ntitle: Report {n}\ndate: 2026-07-0{n % 9 + 1}\n---\n\n# Report {n}\n\nVersion {n}.\n")
    return deploy(config, DeployRequest(source=source, subdomain="site-1", **request), clients, Recorder())


def _history(config: Config, clients: Clients) -> History:
    found = history(SurveySettings.from_config(config), "site-1", clients)
    assert not list(HISTORY_SCHEMA.iter_errors(found.as_json()))
    return found


def _deployed(config: Config, clients: Clients, root: Path, count: int) -> list[str]:
    """Deploy `count` versions of site-1; return their sha256s, oldest first."""
    return [_deploy(config, clients, root, n, verify=False).plan.sha256 for n in range(1, count + 1)]


def test_five_deploys_keep_five_versions_newest_first_each_served_under_its_own_path(tmp_path):
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 5)
    found = _history(config, clients)
    assert [v.sha256 for v in found.found.versions] == shas[::-1]
    assert [v.live for v in found.found.versions] == [True, False, False, False, False]
    assert [v.title for v in found.found.versions] == [f"Report {n}" for n in range(5, 0, -1)]
    assert found.found.versions[0].date == "2026-07-06" and found.found.versions[0].made_by
    times = [v.deployed for v in found.found.versions]
    assert times == sorted(times, reverse=True) and len(set(times)) == 5
    swarm = _swarm(clients)
    mounts = swarm.mounts["site-1"]
    assert mounts[ROOT_PAGE] == f"site-1-page-{shas[-1][:12]}"
    assert {mounts[version_target(sha)] for sha in shas} == {f"site-1-page-{sha[:12]}" for sha in shas}
    edge = clients.edge
    assert isinstance(edge, FakeEdge)
    for n, sha in enumerate(shas, 1):
        assert f"Version {n}.".encode() in edge._served("site-1", f"/v/{sha[:12]}/")
    caddyfile = next(data for name, (_, data) in swarm.config_data.items()
                     if name in swarm.services_by_name["site-1"].configs and "caddyfile" in name).decode()
    assert "handle /v/* {\n\t\trespond 404" in caddyfile
    assert {sha[:12] for sha in shas} == set(re.findall(r"handle /v/([0-9a-f]{12})/\* \{", caddyfile))


def test_a_sixth_deploy_drops_the_oldest_and_keep_versions_never_drops_the_live_one(tmp_path):
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 6)
    kept = [v.sha256 for v in _history(config, clients).found.versions]
    assert kept == shas[:0:-1]  # the first is gone
    assert f"config site-1-page-{shas[0][:12]}" in _swarm(clients).removed
    one = config.replace("deploy", keep_versions=1)
    live = _deploy(one, clients, tmp_path, 7, verify=False).plan.sha256
    assert [v.sha256 for v in _history(config, clients).found.versions] == [live]


def test_an_identical_redeploy_keeps_when_the_version_went_live_first(tmp_path):
    config, clients = fake_world(tmp_path)
    _deployed(config, clients, tmp_path, 2)
    before = {v.sha256: v.deployed for v in _history(config, clients).found.versions}
    again = _deploy(config, clients, tmp_path, 2, verify=False)
    assert {(o.resource, str(o.outcome)) for o in again.outcomes if "page" in o.name} == {("config", "unchanged")}
    assert {v.sha256: v.deployed for v in _history(config, clients).found.versions} == before


def test_rollback_makes_the_previous_version_live_and_verifies_its_sha(tmp_path):
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 3)
    before = {v.sha256: v.deployed for v in _history(config, clients).found.versions}
    result = rollback(config, RollbackRequest("site-1"), clients, Recorder())
    assert result.plan.sha256 == shas[1]
    assert [(c.name, str(c.status)) for c in result.checks][:3] == [("service", "PASS"), ("origin", "PASS"),
                                                                    ("public", "PASS")]
    assert _swarm(clients).mounts["site-1"][ROOT_PAGE] == f"site-1-page-{shas[1][:12]}"
    found = _history(config, clients)
    assert found.found.live is not None and found.found.live.sha256 == shas[1]
    assert {v.sha256: v.deployed for v in found.found.versions} == before  # nothing kept was dropped or retimed
    assert _swarm(clients).services_by_name["site-1"].labels["graphsite.title"] == "Report 2"
    swarm = _swarm(clients)
    first = f"site-1-page-{shas[0][:12]}"
    swarm.relabel_config(first, {**swarm.config_labels[first], "graphsite.version": "0.1.9"})
    rollback(config, RollbackRequest("site-1", to=shas[0]), clients, Recorder())
    assert swarm.config_labels[first]["graphsite.version"] == "0.1.9"  # what a version is stays as it was
    back = rollback(config, RollbackRequest("site-1", to=shas[2][:7]), clients, Recorder())
    assert back.plan.sha256 == shas[2] and _history(config, clients).found.live.sha256 == shas[2]


@pytest.mark.parametrize("to, why", [("abc", "first 7 or more hex"), ("zzzzzzzz", "first 7 or more hex"),
                                     ("0000000", "no kept version starts with it")])
def test_rollback_refuses_a_sha_it_does_not_keep_and_changes_nothing(tmp_path, to, why):
    config, clients = fake_world(tmp_path)
    _deployed(config, clients, tmp_path, 2)
    service = _swarm(clients).services_by_name["site-1"]
    with pytest.raises(DeployError, match=why):
        rollback(config, RollbackRequest("site-1", to=to), clients, Recorder())
    assert _swarm(clients).services_by_name["site-1"] == service


def test_rollback_with_one_version_or_no_deployment_is_refused(tmp_path):
    config, clients = fake_world(tmp_path)
    with pytest.raises(DeployError, match="nothing to roll back"):
        rollback(config, RollbackRequest("site-1"), clients, Recorder())
    _deployed(config, clients, tmp_path, 1)
    with pytest.raises(DeployError, match="no earlier version is kept"):
        rollback(config, RollbackRequest("site-1"), clients, Recorder())


def test_a_page_config_of_another_deployment_is_shown_never_counted_removed_or_rolled_back_to(tmp_path):
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 1)
    swarm = _swarm(clients)
    live = swarm.config_labels[f"site-1-page-{shas[0][:12]}"]
    stranger = "site-1-page-" + "a" * 12
    swarm.add_config(stranger, {**live, "graphsite.id": "0badc0de", "graphsite.sha256": "a" * 64})
    found = _history(config, clients)
    assert [u.config for u in found.found.unproven] == [stranger] and "0badc0de" in found.found.unproven[0].why
    assert len(found.found.versions) == 1
    assert survey(SurveySettings.from_config(config), clients).holdings["site-1"].versions == 1
    with pytest.raises(DeployError, match="no kept version starts with it"):
        rollback(config, RollbackRequest("site-1", to="a" * 7), clients, Recorder())
    _deployed(config.replace("deploy", keep_versions=1), clients, tmp_path, 2)
    assert stranger in swarm.config_labels  # a deploy that drops versions leaves it alone


def test_a_failed_read_is_an_error_never_an_empty_history_and_rollback_changes_nothing(tmp_path):
    config, clients = fake_world(tmp_path)
    _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    swarm.faults.inject("labelled_configs", Fault.error())
    with pytest.raises(GraphsiteError, match="refused"):
        history(SurveySettings.from_config(config), "site-1", clients)
    service = swarm.services_by_name["site-1"]
    for call in ("labelled_configs", "read_config"):
        swarm.faults.inject(call, Fault.error())
        with pytest.raises(GraphsiteError, match="refused"):
            rollback(config, RollbackRequest("site-1"), clients, Recorder())
        assert swarm.services_by_name["site-1"] == service and not swarm.faults.pending[call]


def test_a_version_whose_data_is_not_its_sha_is_not_rolled_back_to(tmp_path):
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    name = f"site-1-page-{shas[0][:12]}"
    swarm.config_data[name] = (swarm.config_data[name][0], b"<html>swapped</html>")
    with pytest.raises(DeployError, match="sha256 is not"):
        rollback(config, RollbackRequest("site-1"), clients, Recorder())


def test_history_of_a_service_another_configuration_made_is_refused(tmp_path):
    config, clients = fake_world(tmp_path)
    _deployed(config, clients, tmp_path, 1)
    other = config.replace("site", domain="other.example")
    with pytest.raises(DeployError, match="not this configuration's"):
        history(SurveySettings.from_config(other), "site-1", clients)
    with pytest.raises(DeployError, match="not this configuration's"):
        rollback(other, RollbackRequest("site-1"), clients, Recorder())


def test_teardown_removes_every_version_and_list_counts_them(tmp_path):
    config, clients = fake_world(tmp_path)
    _deployed(config, clients, tmp_path, 3)
    held = survey(SurveySettings.from_config(config), clients).holdings["site-1"]
    assert held.versions == 3
    report = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    removed = [o.name for o in report.outcomes if o.resource == "config" and o.outcome == "removed"]
    assert sum("-page-" in name for name in removed) == 3
    assert not _swarm(clients).config_labels and _history(config, clients).empty


def test_read_versions_orders_by_time_and_choose_takes_the_newest_before_the_live_one():
    deployment = Deployment("site-1", "site-1.example.com", sha256="b" * 64, id="12345678")
    stamp = Stamp("site-1", "site-1.example.com", "12345678", "2026-07-01T12:00:00Z")
    labelled = {f"site-1-page-{c * 12}": {**stamp.labels(), "graphsite.sha256": c * 64, "graphsite.deployed": t}
                for c, t in (("a", "2026-07-01T12:00:00.000001Z"), ("b", "2026-07-01T12:00:00.000003Z"),
                             ("c", "2026-07-01T12:00:00.000002Z"), ("d", ""))}
    found = read_versions(labelled, deployment, "example.com")
    assert [v.sha256[0] for v in found.versions] == ["b", "c", "a", "d"]
    assert choose(found, None).sha256 == "c" * 64
    assert [v.sha256[0] for v in kept(found.versions, "b" * 64, 3)] == ["c", "a"]
    assert [v.sha256[0] for v in kept(found.versions, "b" * 64, 3, replaced="d" * 64)] == ["d", "c"]
    assert kept(found.versions, "b" * 64, 1, replaced="d" * 64) == ()
    with pytest.raises(DeployError, match="give more"):
        choose(read_versions({**labelled, "site-1-page-" + "c" * 11 + "d": {
            **stamp.labels(), "graphsite.sha256": "c" * 11 + "d" * 53}}, deployment, "example.com"), "c" * 7)


@pytest.mark.parametrize("value", [0, 51, True, -1])
def test_keep_versions_out_of_range_is_a_configuration_error(tmp_path, value):
    assert settings_errors(Config().replace("deploy", keep_versions=value)) == [
        f"deploy.keep_versions: expected a whole number from 1 to 50, got {value!r}"]


def test_a_kept_version_that_cannot_be_read_stops_the_deploy_before_anything_is_made_or_dropped(tmp_path):
    config, clients = fake_world(tmp_path)
    _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    held, service, removed = dict(swarm.config_labels), swarm.services_by_name["site-1"], list(swarm.removed)
    # the first read is the live page's, for the changes line (an unknown there is said, not fatal); the second
    # is a kept version's, in the plan step
    swarm.faults.inject("read_config", Fault.error(), times=2)
    with pytest.raises(GraphsiteError, match="read_config: refused"):
        _deploy(config, clients, tmp_path, 3, verify=False)
    assert swarm.config_labels == held and swarm.services_by_name["site-1"] == service and swarm.removed == removed


def test_rollback_keeps_the_deployments_content_mode_whatever_the_configuration_says_now(tmp_path):
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 2)
    bind = config.replace("deploy", content="bind")
    result = rollback(bind, RollbackRequest("site-1", verify=False), clients, Recorder())
    assert result.plan.content_mode == "config" and result.plan.sha256 == shas[0]
    assert _swarm(clients).mounts["site-1"][ROOT_PAGE] == f"site-1-page-{shas[0][:12]}"


def test_without_a_service_no_page_config_is_counted(tmp_path):
    config, clients = fake_world(tmp_path)
    _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    del swarm.services_by_name["site-1"]  # a service removed by hand: nothing proves whose the pages are
    found = _history(config, clients)
    assert found.found.versions == () and len(found.found.unproven) == 2 and found.deployment is None


def test_bind_mode_keeps_versions_in_its_directory_rolls_back_drops_and_tears_down_like_configs(tmp_path):
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind", keep_versions=3)
    shas = _deployed(config, clients, tmp_path, 3)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    directory = Path(config.deploy.bind_root) / "site-1"
    found = _history(config, clients)
    assert [v.sha256 for v in found.found.versions] == shas[::-1] and found.as_json()["content"] == "bind"
    assert found.found.versions[0].config == str(directory / "v" / shas[-1][:12])
    caddyfile = next(data for name, (_, data) in _swarm(clients).config_data.items()
                     if name in _swarm(clients).services_by_name["site-1"].configs).decode()
    assert len(re.findall(r"handle /v/[0-9a-f]{12}/\* \{", caddyfile)) == 3
    back = rollback(config, RollbackRequest("site-1", to=shas[0][:9], verify=False), clients, Recorder())
    assert back.plan.content_mode == "bind" and binds.dirs[directory]["index.html"] == binds.kept[directory][
        shas[0][:12]][0]
    assert _history(config, clients).found.live.sha256 == shas[0]
    fourth = _deploy(config, clients, tmp_path, 4, verify=False).plan.sha256
    # the oldest but the one the deploy replaced (live since the rollback) is dropped
    assert set(binds.kept[directory]) == {shas[0][:12], shas[2][:12], fourth[:12]}
    assert survey(SurveySettings.from_config(config), clients, runtime=True).holdings["site-1"].versions == 3
    teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    assert directory not in binds.dirs and directory not in binds.kept


def test_a_signal_during_a_rollback_puts_the_live_version_back_and_says_rollback(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm = SignalledSwarm(armed=False)
    clients.swarm = swarm
    shas = _deployed(config, clients, tmp_path, 2)
    swarm.armed = True
    with pytest.raises(Stopped, match="^rollback stopped by SIGTERM; what it had made was undone") as stopped:
        rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder())
    assert stopped.value.exit_code == 128 + signal.SIGTERM
    assert swarm.mounts["site-1"][ROOT_PAGE] == f"site-1-page-{shas[1][:12]}"
    assert _history(config, clients).found.live.sha256 == shas[1]


def test_a_kept_version_whose_page_is_not_its_sha_or_whose_csp_could_inject_stops_the_deploy(tmp_path):
    """Its CSP would go into the Caddyfile: a page that is not the one its label names, or whose CSP Caddy could
    not take verbatim, is neither served nor dropped; nothing is made."""
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    name = f"site-1-page-{shas[0][:12]}"
    held, service = dict(swarm.config_labels), swarm.services_by_name["site-1"]
    target, data = swarm.config_data[name]
    swarm.config_data[name] = (target, data.replace(b"Version 1.", b"Version X."))
    with pytest.raises(DeployError, match=f"{name}: kept version {shas[0][:12]} cannot be served: its data's sha256"):
        _deploy(config, clients, tmp_path, 3, verify=False)
    assert swarm.config_labels == held and swarm.services_by_name["site-1"] == service
    swarm.config_data[name] = (target, data)
    evil = b'<html><head><meta http-equiv="Content-Security-Policy" content="x`\\"></head>'
    sha = hashlib.sha256(evil).hexdigest()
    swarm.add_config(f"site-1-page-{sha[:12]}", {**swarm.config_labels[name], "graphsite.sha256": sha,
                                                 "graphsite.deployed": "2099-01-01T00:00:00Z"})
    swarm.config_data[f"site-1-page-{sha[:12]}"] = (target, evil)
    with pytest.raises(DeployError, match="Content-Security-Policy holds characters outside"):
        _deploy(config, clients, tmp_path, 3, verify=False)
    assert swarm.services_by_name["site-1"] == service


@pytest.mark.parametrize("gone", ["directory", "bind root"])
def test_a_bind_directory_this_host_does_not_hold_is_an_unknown_history_never_an_empty_one(tmp_path, gone):
    """Another manager, or a container without the mount: history and rollback name the directory, exit 1."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    _deployed(config, clients, tmp_path, 2)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    root = Path(config.deploy.bind_root)
    directory = root / "site-1"
    binds.dirs.pop(directory), binds.kept.pop(directory)
    if gone == "bind root":
        binds.roots.discard(root)
    missing = directory if gone == "directory" else root
    why = f"the versions of site-1 are unknown here: {missing} does not exist on this host"
    with pytest.raises(DeployError, match=re.escape(why)) as refused:
        history(SurveySettings.from_config(config), "site-1", clients)
    assert refused.value.exit_code == 1
    service = _swarm(clients).services_by_name["site-1"]
    with pytest.raises(DeployError, match=re.escape(why)):
        rollback(config, RollbackRequest("site-1"), clients, Recorder())
    assert _swarm(clients).services_by_name["site-1"] == service


def test_list_counts_versions_by_historys_rule_and_says_unknown_when_it_cannot_know(tmp_path):
    """A page config whose sha256 label is not its name's is not counted; a service without an id (a release
    before versions) and a bind directory this host does not hold are unknown (None: `?`, null), never 0."""
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    first = f"site-1-page-{shas[0][:12]}"
    swarm.relabel_config(first, {**swarm.config_labels[first], "graphsite.sha256": "f" * 64})
    settings = SurveySettings.from_config(config)
    assert len(_history(config, clients).found.versions) == 1
    assert survey(settings, clients, runtime=True).holdings["site-1"].versions == 1
    service = swarm.services_by_name["site-1"]
    swarm.services_by_name["site-1"] = replace(service, labels={  # as graphsite 0.1 labelled it: no stamp version
        k: v for k, v in service.labels.items() if k not in ("graphsite.id", "graphsite.stamp")})
    assert survey(settings, clients, runtime=True).holdings["site-1"].versions is None
    bind = config.replace("deploy", content="bind")
    _deployed(bind, clients, tmp_path, 1)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    assert survey(settings, clients, runtime=True).holdings["site-1"].versions == 1
    binds.roots.clear()
    assert survey(settings, clients, runtime=True).holdings["site-1"].versions is None
    swarm.faults.inject("services", Fault.error())  # Swarm not read: finding no service proves none
    unread = survey(settings, clients, runtime=True)
    assert SWARM in unread.unreadable and unread.holdings["site-1"].versions is None


def _one_bind_version(tmp_path: Path) -> tuple[Config, Clients, dict[str, tuple[bytes, str | None]]]:
    """Deploy site-1 once in bind mode; return its configuration, clients and its kept versions ({sha12: (page,
    marker)}, the fake's own: change them in place)."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    _deployed(config, clients, tmp_path, 1)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    kept = binds.kept[Path(config.deploy.bind_root) / "site-1"]
    assert all(marker is not None for _, marker in kept.values())
    return config, clients, kept


@pytest.mark.parametrize("planted", ["another deployment's", "no marker", "another page"])
def test_a_bind_version_folder_not_proven_this_deployments_is_refused_not_taken_as_kept(tmp_path, planted):
    config, clients, kept = _one_bind_version(tmp_path)
    sha, (page, marker) = next(iter(kept.items()))
    live_id = _swarm(clients).services_by_name["site-1"].labels["graphsite.id"]
    assert f" id={live_id} " in marker
    kept[sha] = {
        "another deployment's": (page, marker.replace(f" id={live_id} ", " id=0badc0de ")),
        "no marker": (page, None), "another page": (b"<p>planted</p>", marker)}[planted]
    with pytest.raises(DeployError, match=f"v/{sha} exists and is not this deployment's version"):
        _deploy(config, clients, tmp_path, 1, verify=False)


def test_a_first_deploy_killed_once_it_kept_its_page_is_rerun_and_the_version_stamped_again(tmp_path):
    """A first deploy killed after its content step (no service yet) leaves v/<sha12> under its deployment id; the
    rerun is a new deployment, with another id: the same page, this configuration's, is kept again under the new
    stamp (before, the rerun refused it as another deployment's and never converged). The same folder beside a
    live deployment is still refused (above)."""
    config, clients, kept = _one_bind_version(tmp_path)
    sha, (page, marker) = next(iter(kept.items()))
    old_id = _swarm(clients).services_by_name["site-1"].labels["graphsite.id"]
    del _swarm(clients).services_by_name["site-1"]  # as if killed before its service step
    again = _deploy(config, clients, tmp_path, 1, verify=False)
    new_id = _swarm(clients).services_by_name["site-1"].labels["graphsite.id"]
    assert new_id != old_id and again.plan.sha256[:12] == sha
    assert kept[sha][0] == page and f" id={new_id} " in kept[sha][1]


def test_a_plain_rollback_makes_live_again_the_page_the_last_deploy_or_rollback_replaced(tmp_path):
    """As `helm rollback` or `heroku rollback`: the version live before the live one, which the service records
    (graphsite.replaced), not the newest other one; without a record (a deployment of an earlier release), the
    newest other one."""
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 3)
    assert _swarm(clients).services_by_name["site-1"].labels["graphsite.replaced"] == shas[1]
    rollback(config, RollbackRequest("site-1", to=shas[0], verify=False), clients, Recorder())
    rollback(config, RollbackRequest("site-1", to=shas[1], verify=False), clients, Recorder())
    assert rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder()).plan.sha256 == shas[0]
    assert rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder()).plan.sha256 == shas[1]
    swarm = _swarm(clients)
    service = swarm.services_by_name["site-1"]
    swarm.services_by_name["site-1"] = replace(service, labels={
        k: v for k, v in service.labels.items() if k != "graphsite.replaced"})
    assert rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder()).plan.sha256 == shas[2]


def test_a_sha256_label_that_is_not_64_hex_digits_is_unproven_as_the_history_schema_says(tmp_path):
    config, clients = fake_world(tmp_path)
    shas = _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    first = f"site-1-page-{shas[0][:12]}"
    swarm.relabel_config(first, {**swarm.config_labels[first], "graphsite.sha256": shas[0][:12] + "Z" * 52})
    found = _history(config, clients)  # validated against history.schema.json
    assert [v.sha256 for v in found.found.versions] == [shas[1]]
    assert [u.config for u in found.found.unproven] == [first]


def test_history_shows_a_tampered_markers_date_and_maker_without_their_escape_sequences(tmp_path, capsys):
    from graphsite.commands import present

    config, clients, kept = _one_bind_version(tmp_path)
    sha, (page, marker) = next(iter(kept.items()))
    evil = {"graphsite.date": "\x1b]0;owned\x07", "graphsite.version": "\x1b[2J",
            "graphsite.deployed": "2026-07-01T12:00:00\x1b[31m"}
    kept[sha] = (page, marker.splitlines()[0] + "\n" + json.dumps(evil) + "\n")
    present.history(_history(config, clients), as_json=False)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "'\\x1b]0;owned\\x07'" in out and "graphsite '\\x1b[2J'" in out


def test_a_bind_version_whose_page_is_not_its_sha_blocks_the_rollback_and_names_its_directory(tmp_path):
    config, clients, kept = _one_bind_version(tmp_path)
    second = _deploy(config, clients, tmp_path, 2, verify=False).plan.sha256
    first = next(sha for sha in kept if sha != second[:12])
    page, marker = kept[first]
    kept[first] = (page.replace(b"Version 1.", b"Version X."), marker)
    service = _swarm(clients).services_by_name["site-1"]
    directory = Path(config.deploy.bind_root) / "site-1" / "v" / first
    with pytest.raises(DeployError, match=f"^{re.escape(str(directory))}: its data's sha256 is not") as refused:
        rollback(config, RollbackRequest("site-1"), clients, Recorder())
    assert refused.value.hint == f"look at the directory {directory}"
    assert _swarm(clients).services_by_name["site-1"] == service
    assert clients.binds.dirs[directory.parent.parent]["index.html"] != kept[first][0]


@pytest.mark.parametrize("planted", ["link", "another deployment's directory", "link at v"])
def test_a_bind_directory_that_is_not_the_deployments_is_an_unknown_history_never_an_empty_one(tmp_path, planted):
    """Before, a link where the name's directory should be (or a directory another deployment's marker names) read
    as "no versions kept": history listed none and rollback said there was nothing to roll back to. Nothing is
    changed on it: no rollback, no deploy, nothing dropped."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    _deployed(config, clients, tmp_path, 2)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    directory = Path(config.deploy.bind_root) / "site-1"
    if planted == "link":
        binds.dirs.pop(directory), binds.kept.pop(directory)
        binds.links[directory] = f"{tmp_path}/elsewhere\x1b[2J"  # a target someone else chose: shown escaped
        why = (f"{directory} is not its page directory: a symbolic link to "
               f"{repr(f'{tmp_path}/elsewhere' + chr(27) + '[2J')}")
    elif planted == "link at v":
        binds.kept.pop(directory)
        binds.links[directory / "v"] = str(tmp_path / "elsewhere")
        why = f"the kept versions of {directory} are unknown: {directory / 'v'} is a symbolic link"
    else:
        marker = binds.dirs[directory][".graphsite"].decode()
        live_id = _swarm(clients).services_by_name["site-1"].labels["graphsite.id"]
        binds.dirs[directory][".graphsite"] = marker.replace(f" id={live_id} ", " id=0badc0de ").encode()
        why = f"{directory} is not its page directory: its marker names deployment 0badc0de"
    held, dirs, service = dict(binds.kept), dict(binds.dirs), _swarm(clients).services_by_name["site-1"]
    listed = survey(SurveySettings.from_config(config), clients, runtime=True)
    assert listed.holdings["site-1"].versions is None and listed.unreadable == {}  # `?`, and the rest is read
    with pytest.raises(DeployError, match=re.escape(why)) as refused:
        history(SurveySettings.from_config(config), "site-1", clients)
    assert refused.value.exit_code == 1
    with pytest.raises(DeployError, match=re.escape(why)):
        rollback(config, RollbackRequest("site-1", verify=False), clients, Recorder())
    assert _swarm(clients).services_by_name["site-1"] == service and binds.kept == held and binds.dirs == dirs


class _Steps(Recorder):
    """A recorder that writes each step's start among the calls the fakes record, to tell which step made a call."""

    def __init__(self, calls: list[str]) -> None:
        super().__init__()
        self.calls = calls

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        self.calls.append(f"step {label}")
        with super().step(label):
            yield


def test_a_bind_deploy_reads_its_directorys_versions_once_before_the_new_page_is_live(tmp_path):
    """Before, the plan step and the content step each read v/: two answers for one decision (the second could
    disagree with what the plan served). The plan's reading is passed on; only the removal of what fell off, once
    the new page is live, looks again."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    for n in (1, 2):  # a first deploy, then a redeploy
        binds = clients.binds
        assert isinstance(binds, FakeBinds)
        calls = binds.faults.calls
        calls.clear()
        source = tmp_path / f"report-{n}.md"
        source.write_text(f"# Report {n}\n\nVersion {n}.\n")
        deploy(config, DeployRequest(source=source, subdomain="site-1", verify=False), clients, _Steps(calls))
        live = calls[:calls.index("step remove old content")]
        assert live.count("versions") == 1, live
    assert len(clients.binds.kept[Path(config.deploy.bind_root) / "site-1"]) == 2


class _PlantedAfterThePlan(FakeBinds):
    """Page directories where a folder named like the new version appears once the plan has read v/ (a hand, a
    process that is not graphsite), just before the content step keeps the page."""

    armed = False

    def ensure(self, directory: Path, page: bytes, stamp: Stamp, sha256: str, seen: PageDirectory) -> bool:
        made = super().ensure(directory, page, stamp, sha256, seen)
        if self.armed:
            self.kept.setdefault(directory, {})[sha256[:12]] = (b"<p>planted</p>", None)
        return made


def test_a_version_folder_that_appears_after_the_plan_read_is_refused_and_left_in_place(tmp_path):
    """The content step keeps the page from the plan's reading: what appears at v/<sha12> since is not proven
    this deployment's, so it is neither taken as kept nor removed by the undo."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    binds = clients.binds = _PlantedAfterThePlan(Path(config.deploy.bind_root))
    first = _deploy(config, clients, tmp_path, 1, verify=False).plan.sha256
    binds.armed = True
    with pytest.raises(DeployError, match=r"v/[0-9a-f]{12} appeared since this deploy's plan; left in place"):
        _deploy(config, clients, tmp_path, 2, verify=False)
    kept = binds.kept[Path(config.deploy.bind_root) / "site-1"]
    assert len(kept) == 2 and kept[first[:12]][1] is not None
    assert [page for sha12, (page, _) in kept.items() if sha12 != first[:12]] == [b"<p>planted</p>"]


def test_the_undo_of_a_failed_rerun_of_a_killed_first_deploy_keeps_the_version_folder_it_found(tmp_path):
    """The rerun stamps the killed run's v/<sha12> again (a new deployment, another id). Before, it removed the
    folder and kept the page anew, so when the rerun failed its undo removed a folder that existed before the run;
    now it restamps the marker in place, and its undo puts the earlier marker back."""
    config, clients, kept = _one_bind_version(tmp_path)
    sha, before = next(iter(kept.items()))
    del _swarm(clients).services_by_name["site-1"]  # as if killed before its service step
    _swarm(clients).faults.inject("ensure_service", Fault.error())
    with pytest.raises(DeployError, match="ensure_service: refused"):
        _deploy(config, clients, tmp_path, 1, verify=False)
    assert kept[sha] == before
    again = _deploy(config, clients, tmp_path, 1, verify=False)  # and the next rerun still converges
    assert kept[sha][0] == before[0] and f" id={again.plan.stamp.id} " in kept[sha][1]


@pytest.mark.parametrize("former, to", [("config", "bind"), ("bind", "config")])
def test_a_deploy_to_the_other_content_mode_refuses_to_drop_its_versions_unless_keep_versions_is_1(tmp_path,
                                                                                                  former, to):
    """A content mode's versions are not carried over to the other. Before, a deploy in the other mode dropped
    them all once its page was live, silently; now it stops before anything is made, naming them, how to keep them
    (deploy in the former mode) and how to switch anyway (deploy.keep_versions = 1, which drops every version but
    the live one by its own rule)."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content=former)
    shas = _deployed(config, clients, tmp_path, 2)
    swarm, binds = _swarm(clients), clients.binds
    assert isinstance(binds, FakeBinds)
    before = (dict(swarm.config_labels), swarm.services_by_name["site-1"], {k: dict(v) for k, v in binds.kept.items()})
    with pytest.raises(DeployError) as refused:
        _deploy(config, clients, tmp_path, 3, verify=False, content=to)
    shorts = ", ".join(sha[:12] for sha in shas[::-1])
    assert refused.value.detail == (
        f"site-1 keeps 2 versions in {former} mode ({shorts}) that this deploy in {to} mode would drop: a content "
        "mode's versions are not carried over to the other; nothing deployed")
    assert f"deploy with --content {former} to keep them" in refused.value.hint
    assert "deploy.keep_versions = 1" in refused.value.hint
    assert (dict(swarm.config_labels), swarm.services_by_name["site-1"],
            {k: dict(v) for k, v in binds.kept.items()}) == before
    # the same page in the other mode loses nothing but the one it replaces: refused too, naming that one only
    with pytest.raises(DeployError, match=rf"keeps 1 version in {former} mode \({shas[0][:12]}\)"):
        _deploy(config, clients, tmp_path, 2, verify=False, content=to)
    recorder = Recorder()
    source = tmp_path / "report-3.md"
    deploy(config.replace("deploy", keep_versions=1),  # a dry run says what it would drop, in the run's words
           DeployRequest(source=source, subdomain="site-1", verify=False, content=to, dry_run=True), clients,
           recorder)
    for sha in shas:
        assert f"would drop version {sha[:12]} (kept in {former} mode, not carried over to {to})" in recorder.lines
    recorder = Recorder()
    switched = deploy(config.replace("deploy", keep_versions=1),
                      DeployRequest(source=source, subdomain="site-1", verify=False, content=to), clients, recorder)
    assert switched.plan.content_mode == to
    for sha in shas:
        assert f"dropped version {sha[:12]} (kept in {former} mode, not carried over to {to})" in recorder.lines
    assert [v.sha256 for v in _history(config, clients).found.versions] == [switched.plan.sha256]


def test_a_bind_deployment_of_a_release_before_versions_has_none_and_may_switch_mode(tmp_path):
    """Its service names no deployment id, so no marker can prove its directory or a version its: history counts
    none (it is not refused), and a switch of content mode has no version to drop; the folders under v/ nothing
    proves its stop it (it would remove them with the directory) until they are removed by hand."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    _deployed(config, clients, tmp_path, 2)
    swarm = _swarm(clients)
    service = swarm.services_by_name["site-1"]
    swarm.services_by_name["site-1"] = replace(service, labels={  # as graphsite 0.1 labelled it
        k: v for k, v in service.labels.items() if k not in ("graphsite.id", "graphsite.stamp")})
    found = _history(config, clients)
    assert found.found.versions == () and len(found.found.unproven) == 2
    with pytest.raises(DeployError, match="keeps 2 folders in bind mode that nothing proves to be its own"):
        _deploy(config, clients, tmp_path, 3, verify=False, content="config")
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    binds.kept[Path(config.deploy.bind_root) / "site-1"].clear()  # removed by hand
    assert _deploy(config, clients, tmp_path, 3, verify=False, content="config").plan.content_mode == "config"


@pytest.mark.parametrize("keep", [5, 1])
def test_a_switch_to_config_mode_stops_on_version_folders_nothing_proves_the_deployments(tmp_path, keep):
    """The switch removes the whole bind directory. Before, it counted only the versions proven the deployment's:
    a folder under v/ that nothing proves to be its own (history lists it as unproven) went with the directory,
    silently, even with the default keep_versions. Now the deploy stops before anything is made, naming it, whatever
    keep_versions says: keep_versions drops versions of the deployment, never what is not proven its. (The same
    page is deployed: the switch drops no proven version, so nothing else stops it.)"""
    config, clients, kept = _one_bind_version(tmp_path)
    kept["b" * 12] = (b"<p>planted</p>", None)
    directory = Path(config.deploy.bind_root) / "site-1"
    binds, service = clients.binds, _swarm(clients).services_by_name["site-1"]
    assert isinstance(binds, FakeBinds)
    assert [u.config for u in _history(config, clients).found.unproven] == [str(directory / "v" / ("b" * 12))]
    with pytest.raises(DeployError) as refused:
        _deploy(config.replace("deploy", keep_versions=keep), clients, tmp_path, 1, verify=False, content="config")
    assert refused.value.detail.startswith(
        f"site-1 keeps 1 folder in bind mode that nothing proves to be its own ({directory / 'v' / ('b' * 12)}: ")
    assert refused.value.detail.endswith("this deploy in config mode would remove it with the directory; left in "
                                         "place, nothing deployed")
    assert "remove it by hand if it is yours" in refused.value.hint
    assert directory in binds.dirs and kept["b" * 12] == (b"<p>planted</p>", None)
    assert _swarm(clients).services_by_name["site-1"] == service


def _not_on_this_host(tmp_path: Path, count: int) -> tuple[Config, Clients, FakeBinds, Path]:
    """Deploy `count` versions of site-1 in bind mode, then take its directory off this host (another manager's,
    lost); return its configuration, clients, page directories and the directory's path."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    _deployed(config, clients, tmp_path, count)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    directory = Path(config.deploy.bind_root) / "site-1"
    binds.dirs.pop(directory), binds.kept.pop(directory)
    return config, clients, binds, directory


@pytest.mark.parametrize("missing", ["directory", "bind_root"])
def test_a_bind_redeploy_where_the_directory_is_not_on_this_host_stops_unless_keep_versions_is_1(tmp_path,
                                                                                                  missing):
    """Before, a directory this host does not hold (another manager's, lost) read as "no versions": the redeploy
    made a new one here, pinned the service here and served the new page alone; the three kept versions were
    stranded where they are. History already refused ("unknown here"); now the redeploy does too, before anything
    is made. keep_versions = 1 keeps none, so it does not ask."""
    config, clients, binds, directory = _not_on_this_host(tmp_path, 3)
    swarm = _swarm(clients)
    if missing == "bind_root":
        binds.roots.clear()
    service = swarm.services_by_name["site-1"]
    gone = directory if missing == "directory" else directory.parent
    with pytest.raises(DeployError, match=re.escape(f"the versions of site-1 are unknown here: {gone} does not "
                                                    "exist on this host")):
        _deploy(config, clients, tmp_path, 4, verify=False)
    assert swarm.services_by_name["site-1"] == service and directory not in binds.dirs
    one = _deploy(config.replace("deploy", keep_versions=1), clients, tmp_path, 4, verify=False)
    assert list(binds.kept[directory]) == [one.plan.sha256[:12]]


def test_list_says_why_a_bind_directorys_versions_are_unknown_and_a_failed_read_still_fails(tmp_path, capsys):
    """Before, list turned every failure reading a bind directory's v/ into `?` and exit 0: a link at v/ (not the
    deployment's) lost its reason, and a read that failed (EIO, EACCES) no longer marked the directories
    unreadable. Now only the first is `?`, with its reason beside it (stderr; --json `versions_unknown`); the
    second makes the page directories unreadable and list exit 1, as before."""
    from graphsite.commands import present

    config, clients, _ = _one_bind_version(tmp_path)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    directory = Path(config.deploy.bind_root) / "site-1"
    binds.kept.pop(directory)
    binds.links[directory / "v"] = str(tmp_path / "elsewhere")
    settings = SurveySettings.from_config(config)
    listed = survey(settings, clients, runtime=True)
    why = f"the kept versions of {directory} are unknown: {directory / 'v'} is a symbolic link"
    assert listed.holdings["site-1"].versions is None and listed.unreadable == {}
    assert listed.holdings["site-1"].versions_unknown.startswith(why)
    present.listing(listed, datetime.now(UTC), as_json=False)
    assert f"site-1: versions ?: {why}" in capsys.readouterr().err
    present.listing(listed, datetime.now(UTC), as_json=True)
    assert json.loads(capsys.readouterr().out)["deployments"][0]["versions_unknown"].startswith(why)
    binds.links.pop(directory / "v")
    binds.faults.inject("versions", Fault.error())  # a read that failed: not a count, the system is unreadable
    failed = survey(settings, clients, runtime=True)
    assert list(failed.unreadable) == [DIRECTORIES] and "versions: refused" in failed.unreadable[DIRECTORIES]
    with pytest.raises(GraphsiteError) as info:
        present.listing(failed, datetime.now(UTC), as_json=False)
    assert info.value.exit_code == 1


def test_a_switch_with_keep_versions_1_gets_past_a_bind_directory_this_host_does_not_hold(tmp_path):
    """keep_versions = 1 is how to switch and drop the former mode's versions. Before, the switch read them first
    and stopped where the directory was not on this host ("unknown here"): nothing let it past. Now keep_versions
    = 1 does not ask what it would not keep there; without it the switch still stops, naming the path."""
    config, clients, binds, directory = _not_on_this_host(tmp_path, 2)
    with pytest.raises(DeployError, match=re.escape(f"unknown here: {directory} does not exist on this host")):
        _deploy(config, clients, tmp_path, 3, verify=False, content="config")
    switched = _deploy(config.replace("deploy", keep_versions=1), clients, tmp_path, 3, verify=False,
                       content="config")
    assert switched.plan.content_mode == "config" and directory not in binds.dirs
    assert [v.sha256 for v in _history(config, clients).found.versions] == [switched.plan.sha256]


class _GoneAfterThePlan(FakeBinds):
    """Page directories where the version folders vanish (a hand, a process that is not graphsite) once the plan
    has read v/: when the content step writes the page (`at` "ensure") or just before it restamps a folder
    ("restamp_version")."""

    at = ""

    def _vanish(self, directory: Path, method: str) -> None:
        if self.at == method:
            self.kept.get(directory, {}).clear()

    def ensure(self, directory: Path, page: bytes, stamp: Stamp, sha256: str, seen: PageDirectory) -> bool:
        self._vanish(directory, "ensure")
        return super().ensure(directory, page, stamp, sha256, seen)

    def restamp_version(self, directory: Path, sha12: str, marker: str) -> bool:
        self._vanish(directory, "restamp_version")
        return super().restamp_version(directory, sha12, marker)


@pytest.mark.parametrize("at", ["ensure", "restamp_version"])
def test_a_version_folder_gone_since_the_plan_is_said_so_never_taken_for_another_one(tmp_path, at):
    """Before, a folder the plan read that vanished before the content step was blamed as "exists and is not this
    deployment's version" (no page read, so not proven), and a restamp that found no folder was ignored: the rerun
    of a killed first deploy went live with no version kept. Now both say it is gone since the plan, and the run
    is undone."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    binds = clients.binds = _GoneAfterThePlan(Path(config.deploy.bind_root))
    _deploy(config, clients, tmp_path, 1, verify=False)
    if at == "restamp_version":
        del _swarm(clients).services_by_name["site-1"]  # as if killed before its service step: its rerun restamps
    binds.at = at
    with pytest.raises(DeployError, match=r"v/[0-9a-f]{12} is gone since this deploy's plan") as refused:
        _deploy(config, clients, tmp_path, 1, verify=False)
    assert "is not this deployment's version" not in refused.value.detail
    assert binds.kept[Path(config.deploy.bind_root) / "site-1"] == {}


def test_a_reading_of_one_bind_directory_never_stands_for_anothers(tmp_path):
    """Held names the directory it read; before, nothing looked at it, so a reading passed on for another
    directory would have been taken as that one's versions."""
    config, clients, kept = _one_bind_version(tmp_path)
    directory = Path(config.deploy.bind_root) / "site-1"
    deployment = Deployment.from_labels(_swarm(clients).services_by_name["site-1"].labels)
    other = Held(directory.parent / "site-2", {})
    assert other.markers_of(directory) is None
    found, _ = read_kept("site-1", deployment, config.site.domain, directory.parent, clients, held=other)
    assert [v.short for v in found.versions] == list(kept)


@pytest.mark.parametrize("planted", ["v/notes", "v/AAAAAAAAAAAA", "v/backup.tar", "notes.txt"])
def test_a_switch_to_config_mode_stops_on_what_graphsite_did_not_put_in_the_bind_directory(tmp_path, planted):
    """Before, the switch looked only at the entries of v/ named like a version (12 lowercase hex): a folder or a
    file of any other name there, or beside the page, read as nothing and went with the directory, unread. Now
    every entry but graphsite's own stops the switch, whatever keep_versions says, and is left in place."""
    config, clients, _ = _one_bind_version(tmp_path)
    directory = Path(config.deploy.bind_root) / "site-1"
    binds, service = clients.binds, _swarm(clients).services_by_name["site-1"]
    assert isinstance(binds, FakeBinds)
    binds.dirs[directory][planted] = b"mine"
    with pytest.raises(DeployError) as refused:
        _deploy(config.replace("deploy", keep_versions=1), clients, tmp_path, 2, verify=False, content="config")
    assert f"({directory / planted}: graphsite did not put it there)" in refused.value.detail
    assert binds.dirs[directory][planted] == b"mine" and _swarm(clients).services_by_name["site-1"] == service


class _NoteAfterThePlan(FakeBinds):
    """Page directories where a note appears under v/ (a hand, another process) once the plan has looked."""

    def strays(self, directory: Path) -> tuple[str, ...]:
        found = super().strays(directory)
        if directory in self.dirs:
            self.dirs[directory]["v/notes"] = b"mine"
        return found


def test_what_appears_in_the_bind_directory_after_the_plan_is_left_there_with_the_directory(tmp_path):
    """Before, the switch looked at the directory in its plan step and removed it after converge and verify
    without looking again: what appeared meanwhile went with it, unread. Now it looks again just before; the
    deploy is live, so the directory is left in place with a warning naming what is there."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    binds = clients.binds = _NoteAfterThePlan(Path(config.deploy.bind_root))
    _deploy(config, clients, tmp_path, 1, verify=False)
    directory = Path(config.deploy.bind_root) / "site-1"
    recorder, source = Recorder(), tmp_path / "report-2.md"
    source.write_text("# Report 2\n\nVersion 2.\n")
    switched = deploy(config.replace("deploy", keep_versions=1),
                      DeployRequest(source=source, subdomain="site-1", verify=False, content="config"), clients,
                      recorder)
    assert switched.plan.content_mode == "config"
    assert binds.dirs[directory]["v/notes"] == b"mine" and directory in binds.kept
    assert any(line.startswith(f"warning: old content of site-1 left in place: {directory} holds what nothing "
                               f"proves the deployment's, put there since this deploy's plan ({directory / 'v/notes'}"
                               ": graphsite did not put it there)") for line in recorder.lines), recorder.lines


def test_a_bind_redeploy_with_keep_versions_1_does_not_take_over_a_directory_another_deployment_marks(tmp_path):
    """Before, keep_versions = 1 skipped the look at the directory altogether (it keeps no version), so a
    directory whose marker names another deployment was written over. Now only a directory that is not on this
    host goes unasked; one that is there is looked at whatever keep_versions says."""
    config, clients, _ = _one_bind_version(tmp_path)
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    directory = Path(config.deploy.bind_root) / "site-1"
    live_id = _swarm(clients).services_by_name["site-1"].labels["graphsite.id"]
    marker = binds.dirs[directory][".graphsite"].decode().replace(f" id={live_id} ", " id=0badc0de ")
    binds.dirs[directory][".graphsite"] = marker.encode()
    dirs, service = dict(binds.dirs[directory]), _swarm(clients).services_by_name["site-1"]
    with pytest.raises(DeployError, match=re.escape(f"{directory} is not its page directory: its marker names "
                                                    "deployment 0badc0de")):
        _deploy(config.replace("deploy", keep_versions=1), clients, tmp_path, 2, verify=False)
    assert binds.dirs[directory] == dirs and _swarm(clients).services_by_name["site-1"] == service


def test_one_names_failed_versions_read_leaves_the_other_directories_read_and_list_still_fails(tmp_path):
    """Before, a failed read of one name's v/ ended the whole page-directory scan: the names after it and the
    temporaries went unlisted. Now the scan carries on; the page directories are still unreadable (exit 1)."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    for name in ("site-1", "site-2"):
        source = tmp_path / f"{name}.md"
        source.write_text(f"# {name}\n\nOne.\n")
        deploy(config, DeployRequest(source=source, subdomain=name, verify=False), clients, Recorder())
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    binds.faults.inject("versions", Fault.error())  # site-1's, read first
    listed = survey(SurveySettings.from_config(config), clients, runtime=True)
    assert "versions: refused" in listed.unreadable[DIRECTORIES]
    assert listed.holdings["site-1"].versions is None  # and every count, the system being unreadable
    assert all(("directory", str(Path(config.deploy.bind_root) / n)) in listed.holdings[n].resources()
               for n in ("site-1", "site-2"))


@pytest.mark.parametrize("content", ["config", "bind"])
def test_a_dry_run_says_the_versions_falling_off_keep_versions_as_the_run_says_them(tmp_path, content):
    """Before, a dry run said only what a content mode switch would drop: the versions a redeploy drops for
    deploy.keep_versions went unsaid, though the run says each. Now the dry run says them in the run's words."""
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content=content)
    shas = _deployed(config, clients, tmp_path, 2)
    two = config.replace("deploy", keep_versions=2)
    source = tmp_path / "report-3.md"
    source.write_text("# Report 3\n\nVersion 3.\n")
    said = {}
    for dry_run in (True, False):
        recorder = Recorder()
        deploy(two, DeployRequest(source=source, subdomain="site-1", verify=False, dry_run=dry_run), clients,
               recorder)
        said[dry_run] = [line for line in recorder.lines if "drop" in line]
    assert said[True] == [f"would drop version {shas[0][:12]} (deploy.keep_versions = 2)"]
    assert said[False] == [f"dropped version {shas[0][:12]} (deploy.keep_versions = 2)"]
