"""deploy says what the new version changes against the live page, and the page carries a "Changed since" note,
on the in-memory fakes (the fake edge serves the deployed page as Caddy does): nothing on a first deploy, the
summary and the note on a redeploy (kept by a redeploy of the same report), an unknown and no note when the live
page cannot be read."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from graphsite.commands import present
from graphsite.config import Config
from graphsite.paths import schema_path
from graphsite.publisher.clients import Clients
from graphsite.usecases.deploy import DeployRequest, DeployResult, deploy
from tests.publisher.fakes import FakeEdge, FakeSwarm, Fault, Recorder, fake_world

OLD = """---
title: A small report
date: 2026-07-01
---

# A small report

## One

The first section says one thing.

## Two <b>bold</b> & "quoted"

The second section says another.
"""


def _write(root: Path, text: str) -> Path:
    path = root / "report.md"
    path.write_text(text, encoding="utf-8")
    return path


def _deploy(config: Config, clients: Clients, source: Path, **request) -> DeployResult:
    return deploy(config, DeployRequest(source=source, subdomain="site-1", **request), clients, Recorder())


def _served(clients: Clients) -> str:
    swarm, edge = clients.swarm, clients.edge
    assert isinstance(swarm, FakeSwarm) and isinstance(edge, FakeEdge)
    return edge._served("site-1").decode("utf-8")


def _answer(result: DeployResult, capsys) -> tuple[str, dict]:
    """Return deploy's human lines (stderr) and its --json object, checked against its schema."""
    present.deploy(result, 1.0, as_json=False)
    human = capsys.readouterr().err
    present.deploy(result, 1.0, as_json=True)
    data = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(json.loads(schema_path("deploy.schema.json").read_text())).validate(data)
    return human, data


def test_a_first_deploy_says_nothing_a_redeploy_says_what_changed_and_the_page_notes_it(tmp_path, capsys):
    config, clients = fake_world(tmp_path)
    first = _deploy(config, clients, _write(tmp_path, OLD))
    human, data = _answer(first, capsys)
    assert first.changes is None and data["changes"] is None and "live page" not in human
    assert 'id="changes"' not in _served(clients)

    new = OLD.replace("says another.", "says another, and now much more.") + "\n## Three\n\nA new section.\n"
    second = _deploy(config, clients, _write(tmp_path, new))
    human, data = _answer(second, capsys)
    assert ("Changes against the live page: 1 section added; 1 section rewritten; the page notes them"
            in human), human
    assert data["changes"] == {"known": True, "changed": True, "noted": True, "since": "2026-07-01",
                               "sections": {"added": 1, "removed": 0, "rewritten": 1}, "citations": 0,
                               "references": {"added": 0, "removed": 0, "changed": 0}, "front_matter": []}
    page = _served(clients)
    assert '<h2 id="changes-title">Changed since <time>2026-07-01</time></h2>' in page
    assert '§2 Two bold &amp; &#34;quoted&#34;</a> <span class="change">rewritten' in page  # escaped, as in the index
    assert '<a href="#three">§3 Three</a> <span class="change">new</span>' in page

    third = _deploy(config, clients, _write(tmp_path, new))  # the same report again: the same page, note kept
    human, data = _answer(third, capsys)
    assert ("Changes against the live page: none (the same sections, words, citations, references and front "
            "matter); the page keeps the note the previous one had") in human.splitlines(), human
    assert data["changes"]["changed"] is False and data["changes"]["noted"] is True
    assert third.plan.sha256 == second.plan.sha256 and _served(clients) == page
    assert {o.resource: o.outcome for o in third.outcomes}["service"] == "unchanged"


def test_a_live_page_that_cannot_be_read_is_an_unknown_and_the_page_carries_no_note(tmp_path, capsys):
    config, clients = fake_world(tmp_path)
    _deploy(config, clients, _write(tmp_path, OLD))
    assert isinstance(clients.docker, FakeSwarm)
    live = clients.docker.services_by_name["site-1"].labels["graphsite.sha256"][:12]
    clients.docker.faults.inject("read_config", Fault.error())  # the first read: the live page's, in the build step
    result = _deploy(config.replace("deploy", keep_versions=1), clients,
                     _write(tmp_path, OLD.replace("one thing", "two things")))
    human, data = _answer(result, capsys)
    line = next(line for line in human.splitlines() if "live page" in line)
    assert line.startswith(f"Changes against the live page: unknown (the live version {live}: "), line
    assert line.endswith("; the page carries no note") and "none" not in line
    assert data["changes"]["known"] is False and data["changes"]["noted"] is False
    assert 'id="changes"' not in _served(clients)


def test_with_show_changes_off_deploy_still_says_what_changed_but_the_page_has_no_note(tmp_path, capsys):
    config, clients = fake_world(tmp_path)
    config = config.replace("site", show_changes=False)
    _deploy(config, clients, _write(tmp_path, OLD))
    result = _deploy(config, clients, _write(tmp_path, OLD.replace("says another", "says more")), dry_run=True)
    human, data = _answer(result, capsys)
    assert "Changes against the live page: 1 section rewritten" in human.splitlines(), human
    assert data["changes"]["noted"] is False and data["changes"]["sections"]["rewritten"] == 1


def test_a_redeploy_in_config_mode_reads_the_live_pages_config_once(tmp_path, capsys):
    """Before, a redeploy read the live page's config twice: in the render step for what the new version changes,
    and in the plan step for the CSP of the version it keeps beside the new one. Swarm never changes a config's
    data: the plan keeps the page the render step read. A live page that could not be read then is read again."""
    config, clients = fake_world(tmp_path)
    _deploy(config, clients, _write(tmp_path, OLD))
    swarm = clients.docker
    assert isinstance(swarm, FakeSwarm) and config.deploy.keep_versions > 1
    live = f"site-1-page-{swarm.services_by_name['site-1'].labels['graphsite.sha256'][:12]}"
    swarm.read_configs.clear()
    result = _deploy(config, clients, _write(tmp_path, OLD.replace("one thing", "two things")))
    assert swarm.read_configs == [live]
    assert live[-12:] in dict(result.plan.server.versions), result.plan.server.versions  # kept, its CSP read
    assert "Changes against the live page: 1 section rewritten" in _answer(result, capsys)[0]

    live = f"site-1-page-{swarm.services_by_name['site-1'].labels['graphsite.sha256'][:12]}"
    swarm.read_configs.clear()
    swarm.faults.inject("read_config", Fault.error())  # the render step's read: the plan reads it itself
    again = _deploy(config, clients, _write(tmp_path, OLD.replace("one thing", "three things")))
    assert again.changes is not None and again.changes.unknown and live in swarm.read_configs
    assert live[-12:] in dict(again.plan.server.versions)
