"""Teardown, gc and deploy on the in-memory fakes (tests/publisher/fakes.py) when a page directory of content mode
`bind` holds what graphsite did not put there: the directory is left, marker and all, the outcome says what to
move out, the rest of the teardown goes on, `list` still shows the deployment, and once the strays are out a
rerun finishes; a version a deploy drops is left the same way. The filesystem side (what is removed, in which
order) is tests/publisher/test_bind.py's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from graphsite.config import Config
from graphsite.publisher.bind import Kind, not_made
from graphsite.publisher.clients import Clients
from graphsite.publisher.outcomes import FAILED, KEPT, REMOVED
from graphsite.usecases import gc
from graphsite.usecases.deploy import DeployRequest, deploy
from graphsite.usecases.inventory import SurveySettings, survey
from graphsite.usecases.teardown import TeardownReport, TeardownSettings, teardown
from tests.publisher.fakes import FakeBinds, Fault, Recorder, fake_world


def _bind_deployed(tmp_path: Path) -> tuple[Config, Clients, FakeBinds, Path]:
    config, clients = fake_world(tmp_path)
    config = config.replace("deploy", content="bind")
    source = tmp_path / "report.md"
    source.write_text("# Report\n\nOne.\n")
    deploy(config, DeployRequest(source=source, subdomain="site-1", verify=False), clients, Recorder())
    binds = clients.binds
    assert isinstance(binds, FakeBinds)
    return config, clients, binds, Path(config.deploy.bind_root) / "site-1"


def _teardown(config: Config, clients: Clients) -> TeardownReport:
    return teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())


def test_a_stray_keeps_the_directory_and_its_marker_the_rest_goes_and_a_rerun_finishes(tmp_path):
    """Before, teardown removed the directory as a whole tree once its marker proved it the deployment's: a
    note an operator dropped in it, or in its v/, went with it, although nothing proved it graphsite's. Now the
    directory stays whole, the outcome names the strays and what to do, every other resource is removed, the
    deployment stays in `list`, gc says it failed and why; with the strays moved out, teardown finishes."""
    config, clients, binds, directory = _bind_deployed(tmp_path)
    held = dict(binds.dirs[directory])
    binds.dirs[directory] |= {"notes": b"mine", "v/notes": b"mine too"}
    report = _teardown(config, clients)
    (failed,) = [o for o in report.outcomes if o.failed]
    assert (failed.resource, failed.name, failed.outcome) == ("directory", str(directory), FAILED)
    assert failed.detail == (f"{directory}: not removed: graphsite did not put notes, v/notes there; left in place "
                             "with its marker: move them out of it, then run `graphsite teardown site-1` again")
    assert {o.resource for o in report.outcomes if o.outcome == REMOVED} == {"route", "service", "config", "record"}
    assert not report.clean and report.left == (f"directory {directory}",)
    assert binds.dirs[directory] == held | {"notes": b"mine", "v/notes": b"mine too"} and directory in binds.kept
    listed = survey(SurveySettings.from_config(config), clients).holdings["site-1"]
    assert listed.directory == directory and listed.state(datetime.now(UTC)) == "partial"

    later = datetime.now(UTC) + timedelta(days=30)  # partial for longer than deploy.gc_grace: gc collects it
    collected = gc.collect(gc.GcSettings.from_config(config), clients, Recorder(), now=later)
    (only,) = collected.collected
    assert only.outcome == gc.FAILED and not collected.ok
    assert only.reason == f"left: directory {directory}; {failed.detail}"
    assert binds.dirs[directory]["notes"] == b"mine"

    for stray in ("notes", "v/notes"):  # moved out
        del binds.dirs[directory][stray]
    again = _teardown(config, clients)
    assert again.clean and directory not in binds.dirs and directory not in binds.kept
    assert "site-1" not in survey(SurveySettings.from_config(config), clients).holdings


def test_a_refusal_names_a_few_strays_then_says_how_many_more(tmp_path):
    config, clients, binds, directory = _bind_deployed(tmp_path)
    binds.dirs[directory] |= {name: b"" for name in ("a", "b", "c", "d", "v/e")}
    (failed,) = [o for o in _teardown(config, clients).outcomes if o.failed]
    assert "graphsite did not put a, b, c and 2 more there;" in failed.detail


def test_what_graphsite_made_in_a_page_directory_is_judged_by_name_and_kind():
    """The rule removal reads a listing with: graphsite makes files where its page, marker and their temporaries
    go, folders where v/ and its versions go, and nothing else; a link is never its own; what is below a
    stray is not listed (never read), and the directory's own strays come first."""
    F, D, L = Kind.FILE, Kind.DIRECTORY, Kind.OTHER
    sha, temporary = "a" * 12, ".bbbbbbbbbbbb.0123456789ab.tmp"
    own = {"index.html": F, ".graphsite": F, ".index.html.0123456789ab.tmp": F, "..graphsite.k1ll3d00.tmp": F,
           "v": D, f"v/{sha}": D, f"v/{sha}/index.html": F, f"v/{sha}/.graphsite": F,
           f"v/{sha}/.index.html.abcdef012345.tmp": F, f"v/{temporary}": D, f"v/{temporary}/.graphsite": F}
    assert not_made(own) == ()
    strays = {"zz": F, "index.html": D, ".graphsite": L, f"v/{sha}/v": D, f"v/{sha}/notes": F,
              "v/AAAAAAAAAAAA": D, f"v/{'c' * 12}": F, f"v/{'d' * 12}": L, "v/x/y/z": F}
    assert not_made(own | strays) == (
        ".graphsite", "index.html", "zz", "v/AAAAAAAAAAAA", f"v/{'c' * 12}", f"v/{'d' * 12}", f"v/{sha}/notes",
        f"v/{sha}/v", "v/x/y/z")
    assert not_made({"v": F}) == ("v",) and not_made({"v": L}) == ("v",)


def test_a_temporary_named_with_a_random_part_graphsite_never_writes_is_a_stray():
    """Before, the temporaries of the page, the marker and a version folder took any random part ([^/.]+), while
    the temporary page directories and route files took only what graphsite writes: a file someone else named
    `.index.html.mine.tmp` was removed as graphsite's. Now it is a stray, named, as a route's lookalike is not
    ours: only twelve hex digits or eight of mkstemp's letters (atomic.TEMPORARY_RANDOM) are graphsite's."""
    F, D = Kind.FILE, Kind.DIRECTORY
    sha = "a" * 12
    lookalikes = {".index.html.mine.tmp": F, "..graphsite.ABCDEFGHIJKL.tmp": F, ".index.html.0123456789abc.tmp": F,
                  f"v/{sha}/.index.html.x1.tmp": F, "v/.bbbbbbbbbbbb.backup.tmp": D,
                  "v/.bbbbbbbbbbbb.k1ll3d0.tmp": D}
    assert not_made({"v": D, f"v/{sha}": D} | lookalikes) == (
        "..graphsite.ABCDEFGHIJKL.tmp", ".index.html.0123456789abc.tmp", ".index.html.mine.tmp",
        "v/.bbbbbbbbbbbb.backup.tmp", "v/.bbbbbbbbbbbb.k1ll3d0.tmp", f"v/{sha}/.index.html.x1.tmp")


def test_a_version_a_deploy_drops_is_left_with_what_graphsite_did_not_put_in_its_folder(tmp_path):
    """Before, a deploy dropping a kept version (deploy.keep_versions) removed its folder as a tree. Now a stray
    in it leaves the folder, the deploy is live, and its warning names the stray and what to do."""
    config, clients, binds, directory = _bind_deployed(tmp_path)
    (first,) = binds.kept[directory]
    binds.dirs[directory][f"v/{first}/notes"] = b"mine"
    source, recorder = tmp_path / "report-2.md", Recorder()
    source.write_text("# Report\n\nTwo.\n")
    deploy(config.replace("deploy", keep_versions=1), DeployRequest(source=source, subdomain="site-1", verify=False),
           clients, recorder)
    assert first in binds.kept[directory] and binds.dirs[directory][f"v/{first}/notes"] == b"mine"
    said = (f"warning: old content of site-1 left in place: {directory}: version {first} not removed: graphsite did "
            f"not put v/{first}/notes there; left in place with its marker: move them out of it, and the next "
            "deploy of site-1 drops it")
    assert said in recorder.lines, recorder.lines


def test_a_version_left_after_a_failure_with_a_hint_is_one_line_in_the_deploys_result(tmp_path):
    """Before, a kept version a deploy could not drop was listed with the error's whole message, its hint on a
    second line: the outcome's line split in two. Now the outcome says the failure; the hint is the warning's."""
    config, clients, binds, directory = _bind_deployed(tmp_path)
    (first,) = binds.kept[directory]
    binds.faults.inject("remove_version", Fault(hint="check the disk, then run the command again"))
    source, recorder = tmp_path / "report-2.md", Recorder()
    source.write_text("# Report\n\nTwo.\n")
    result = deploy(config.replace("deploy", keep_versions=1),
                    DeployRequest(source=source, subdomain="site-1", verify=False), clients, recorder)
    (left,) = (o for o in result.outcomes if o.resource == "version")
    assert (left.name, left.outcome, left.detail) == (str(directory / "v" / first), KEPT,
                                                      "bind directories: remove_version: refused (injected)")
    assert "\n" not in left.line()
    assert ("warning: old content of site-1 left in place: bind directories: remove_version: refused (injected)\n"
            "  hint: check the disk, then run the command again") in recorder.lines


def test_a_refused_version_does_not_keep_the_older_ones_each_left_is_warned_and_listed(tmp_path):
    """Before, the deploy's drop of the versions that fell off deploy.keep_versions stopped at the first one
    refused: the older ones were neither removed nor said, and piled up. Now each is removed or left on its own;
    each left is warned about and listed in the deploy's result (a `kept version` resource, in --json too); the
    deploy is live, so it is no failure."""
    config, clients, binds, directory = _bind_deployed(tmp_path)
    for turn in (2, 3):
        source = tmp_path / f"report-{turn}.md"
        source.write_text(f"# Report\n\nTurn {turn}.\n")
        deploy(config.replace("deploy", keep_versions=3),
               DeployRequest(source=source, subdomain="site-1", verify=False), clients, Recorder())
    held = sorted(binds.kept[directory])
    assert len(held) == 3
    refused = held[:2]  # whichever the deploy meets first, both are refused and the third still goes
    for sha12 in refused:
        binds.dirs[directory][f"v/{sha12}/notes"] = b"mine"
    source, recorder = tmp_path / "report-4.md", Recorder()
    source.write_text("# Report\n\nFour.\n")
    result = deploy(config.replace("deploy", keep_versions=1),
                    DeployRequest(source=source, subdomain="site-1", verify=False), clients, recorder)
    assert sorted(binds.kept[directory]) == sorted([*refused, result.plan.sha256[:12]])
    left = sorted((o for o in result.outcomes if o.resource == "version"), key=lambda o: o.name)
    assert [(o.name, o.outcome) for o in left] == [(str(directory / "v" / s), KEPT) for s in refused]
    for sha12, outcome in zip(refused, left, strict=True):
        said = (f"{directory}: version {sha12} not removed: graphsite did not put v/{sha12}/notes there; left in "
                "place with its marker: move them out of it, and the next deploy of site-1 drops it")
        assert outcome.detail == said and f"warning: old content of site-1 left in place: {said}" in recorder.lines
        assert outcome.as_json() in result.as_json()["resources"]
