"""Issue 25's proof on the lab, one name for all of it: five deploys, then history lists five with the right shas
and times; each version's URL serves its own bytes (noindex); rollback --to the second under constant requests
fails none and verifies its sha; a sixth deploy drops the oldest; list counts the versions; a look at configs by
name (deploy's, before its service step) finds exactly the kept ones; teardown leaves nothing of any version."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import jsonschema
import pytest

from graphsite.paths import schema_path
from graphsite.publisher.deployment import parse_stamp
from graphsite_lab.probe import Fetched, fetch
from tests.publisher.load import hammer

pytestmark = pytest.mark.lab


def _get(lab, fqdn: str, path: str) -> Fetched:
    """GET https://FQDN/PATH through the lab's edge, as a reader would: a connection the edge closes before any
    answer (it reloads at every route change) is asked once more."""
    return fetch(fqdn, lab.https_port, ca=lab.ca_path, path=path)


def _deploy(publab, tmp_path, name: str, n: int) -> tuple[dict, datetime, datetime]:
    source = tmp_path / f"v{n}.md"
    source.write_text(f"---\ntitle: Edition {n}\n---\n\n# Edition {n}\n\nThe page as it was the {n}th time.\n")
    before = datetime.now(UTC).replace(microsecond=0)
    done = publab.run("deploy", str(source), "--subdomain", name, "--no-verify", "--json")
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout), before, datetime.now(UTC)


def _history(publab, name: str) -> dict:
    shown = publab.run("history", name, "--json")
    assert shown.exit_code == 0, shown.stderr
    found = json.loads(shown.stdout)
    validator = jsonschema.Draft202012Validator(json.loads(schema_path("history.schema.json").read_text()))
    assert not list(validator.iter_errors(found))
    return found


def test_versions_history_rollback_under_load_prune_and_teardown(lab, publab, tmp_path):
    name = publab.name()
    deployed = [_deploy(publab, tmp_path, name, n) for n in range(1, 6)]
    shas = [d["sha256"] for d, _, _ in deployed]
    fqdn = deployed[0][0]["fqdn"]

    found = _history(publab, name)
    assert [v["sha256"] for v in found["versions"]] == shas[::-1] and found["live"] == shas[-1]
    assert [v["live"] for v in found["versions"]] == [True, False, False, False, False]
    for version, (_, before, after) in zip(found["versions"][::-1], deployed, strict=True):
        assert before <= parse_stamp(version["deployed"]) <= after, (version, before, after)
    assert found["versions"][0]["title"] == "Edition 5"

    for sha in shas:  # each version's own URL serves its own bytes, never indexed
        answer = _get(lab, fqdn, f"/v/{sha[:12]}/")
        assert answer.status == 200 and hashlib.sha256(answer.body).hexdigest() == sha
        assert answer.headers["x-robots-tag"] == "noindex, nofollow"

    with hammer(publab.config, fqdn) as load:
        back = publab.run("rollback", name, "--to", shas[1][:12], "--json")
    assert back.exit_code == 0, back.stderr
    rolled = json.loads(back.stdout)
    assert rolled["sha256"] == shas[1] and {c["status"] for c in rolled["checks"]} == {"PASS"}, rolled["checks"]
    assert load.failures == [], load
    assert load.seen[0] == shas[-1] and load.seen[-1] == shas[1] and len(load.seen) > 20
    assert _history(publab, name)["live"] == shas[1]

    sixth, _, _ = _deploy(publab, tmp_path, name, 6)
    kept = [v["sha256"] for v in _history(publab, name)["versions"]]
    assert kept[0] == sixth["sha256"] and shas[0] not in kept and set(kept) == {*shas[1:], sixth["sha256"]}
    assert _get(lab, fqdn, f"/v/{shas[0][:12]}/").status == 404

    listed = publab.run("list", name, "--json")
    assert listed.exit_code == 0, listed.stderr
    assert json.loads(listed.stdout)["deployments"][0]["versions"] == 5

    clients = publab.clients()
    try:
        # deploy's look, right before the service is written, at the configs it mounts: one request for all of
        # them, by exact name (Docker's name filter matches a prefix: NAME-page is one of every page config)
        pages = {f"{name}-page-{sha[:12]}" for sha in kept}
        assert clients.docker.configs_named([*pages, f"{name}-page", f"{name}-page-{'0' * 12}"]) == pages
        gone = publab.run("teardown", name)
        assert gone.exit_code == 0, gone.stderr
        assert clients.docker.labelled_configs(name) == {} and clients.docker.service(name) is None
        assert clients.docker.configs_named(pages) == frozenset()
    finally:
        clients.close()
