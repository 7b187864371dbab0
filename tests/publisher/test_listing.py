"""`graphsite list [NAME]`: what it shows and its exit status, decided in commands/present.listing from the
inventory alone (the lab tests in test_lab_inventory.py read real systems)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from graphsite.commands import present
from graphsite.publisher.deployment import Deployment
from graphsite.usecases.inventory import DNS, Holding, Inventory

NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)
EMPTY = Holding("gs-x", "gs-x.example.org")  # survey(name="gs-x") holds the name even when nothing was found
DEPLOYED = Holding("gs-x", "gs-x.example.org", deployment=Deployment("gs-x", "gs-x.example.org", sha256="a" * 64),
                   running="1/1", configs=("gs-x-page-aaaaaaaaaaaa", "gs-x-caddyfile-bbbbbbbbbbbb"), versions=1)


def test_nothing_deployed_for_a_name_is_an_answer_when_every_system_was_read(capsys):
    present.listing(Inventory({"gs-x": EMPTY}), NOW, as_json=False, name="gs-x")
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("nothing deployed for gs-x: no system holds")


def test_nothing_deployed_in_json_is_an_empty_list_with_the_name(capsys):
    present.listing(Inventory({"gs-x": EMPTY}), NOW, as_json=True, name="gs-x")
    assert json.loads(capsys.readouterr().out) == {"name": "gs-x", "deployments": [], "foreign": [], "unreadable": {}}


@pytest.mark.parametrize("as_json", [False, True])
def test_nothing_found_is_not_an_answer_when_a_system_could_not_be_read(capsys, as_json):
    inventory = Inventory({"gs-x": EMPTY}, unreadable={DNS: "timed out"})
    with pytest.raises(present.Incomplete) as info:
        present.listing(inventory, NOW, as_json=as_json, name="gs-x")
    assert info.value.exit_code == 1
    assert info.value.message.startswith("could not read Cloudflare: timed out; nothing of gs-x was found in the "
                                         "other systems, which does not prove it has nothing there")
    assert "run `graphsite list gs-x` again later" in info.value.message
    out, err = capsys.readouterr()
    assert "nothing deployed" not in err
    if as_json:
        assert json.loads(out)["unreadable"] == {DNS: "timed out"}


def test_a_name_shows_its_one_row(capsys):
    present.listing(Inventory({"gs-x": DEPLOYED}), NOW, as_json=False, name="gs-x")
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["FQDN", "AGE", "EXPIRES", "SHA256", "REPLICAS", "NODES", "ACCESS", "VERSIONS",
                              "STATE"]
    assert [row.split()[0] for row in rows] == ["gs-x.example.org"]
    assert [row.split()[7] for row in rows] == ["1"]


def test_a_name_found_with_a_system_unreadable_is_shown_and_exits_1(capsys):
    with pytest.raises(present.Incomplete, match="^could not read Cloudflare: timed out\n  hint: what is listed"):
        present.listing(Inventory({"gs-x": DEPLOYED}, unreadable={DNS: "timed out"}), NOW, as_json=True,
                        name="gs-x")
    shown = json.loads(capsys.readouterr().out)
    assert shown["name"] == "gs-x" and [d["subdomain"] for d in shown["deployments"]] == ["gs-x"]


def test_the_whole_list_keeps_its_shape(capsys):
    present.listing(Inventory({"gs-x": DEPLOYED}), NOW, as_json=True)
    assert set(json.loads(capsys.readouterr().out)) == {"deployments", "foreign", "unreadable"}


def test_versions_not_known_are_a_question_mark_and_null_never_0(capsys):
    unknown = Holding("gs-x", "gs-x.example.org", deployment=DEPLOYED.deployment, running="1/1", versions=None)
    present.listing(Inventory({"gs-x": unknown}), NOW, as_json=False, name="gs-x")
    header, row = capsys.readouterr().out.splitlines()
    assert row.split()[header.split().index("VERSIONS")] == "?"
    present.listing(Inventory({"gs-x": unknown}), NOW, as_json=True, name="gs-x")
    assert json.loads(capsys.readouterr().out)["deployments"][0]["versions"] is None
