"""teardown's proof that the page is gone is three-valued: only an HTTP answer from the edge that is not the page
proves it offline; an edge that could not be asked proves nothing ("not proven"), and such a teardown is not
finished (exit 1). No lab needed: a real socket where nothing listens."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest

from graphsite.commands import present
from graphsite.errors import ConfigError
from graphsite.publisher.outcomes import REMOVED, Outcome
from graphsite.publisher.probe import HttpEdge
from graphsite.usecases import gc as gc_module
from graphsite.usecases.inventory import Holding
from graphsite.usecases.teardown import PageState, TeardownReport, TeardownSettings, page_offline, teardown
from tests.publisher.fakes import Recorder
from tests.publisher.test_rules import NOW, _clients, _config, _deploy, _state

HELD = Holding("gs-x", "gs-x.example.org")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_an_edge_that_cannot_be_reached_leaves_the_page_s_absence_not_proven(production):
    config = production.replace("verify", origin_address=f"127.0.0.1:{_closed_port()}", resolve_https="")
    state, evidence = page_offline(TeardownSettings.from_config(config), HELD, HttpEdge(), wait=0)
    assert state == PageState.NOT_PROVEN
    assert evidence.endswith("the edge could not be asked, so the page's absence is not proven"), evidence


def test_an_edge_with_no_address_to_ask_proves_nothing(production):
    config = production.replace("verify", origin_address="", resolve_https="")
    state, evidence = page_offline(TeardownSettings.from_config(config), HELD, HttpEdge(), wait=0)
    assert state == PageState.NOT_PROVEN and evidence.startswith("not asked:"), evidence


def test_a_teardown_whose_page_is_not_proven_gone_is_not_finished(capsys):
    report = TeardownReport("gs-x", "gs-x.example.org", (Outcome("route", "/d/gs-x.yml", REMOVED),), (),
                            "https://gs-x.example.org/: refused: the page's absence is not proven",
                            PageState.NOT_PROVEN)
    assert not report.clean and not report.page_offline
    with pytest.raises(present.Incomplete, match="^teardown of gs-x is not finished; left: the page's absence is "
                                                 "not proven"):
        present.teardown(report, as_json=False)
    assert "nothing is left" not in capsys.readouterr().err


def test_a_ca_bundle_that_cannot_load_in_the_proof_leaves_the_page_not_proven_not_the_report_lost(production,
                                                                                                  tmp_path):
    """The bundle is checked before a teardown removes anything (below); one that stops loading since (removed,
    rewritten) must not turn the proof into an error that hides every outcome before it."""
    config = production.replace("verify", origin_address=f"127.0.0.1:{_closed_port()}", resolve_https="",
                                ca_bundle=str(tmp_path / "gone.pem"))
    state, evidence = page_offline(TeardownSettings.from_config(config), HELD, HttpEdge(), wait=0)
    assert state == PageState.NOT_PROVEN
    assert evidence.startswith(f"not asked: verify.ca_bundle: cannot load {tmp_path / 'gone.pem'}"), evidence


@pytest.mark.parametrize("command", ["teardown", "gc"])
def test_a_ca_bundle_that_cannot_load_refuses_teardown_and_gc_before_anything_is_removed(tmp_path, command):
    """The proof asks the edge with verify.ca_bundle: a bundle that cannot load failed there, after the route,
    service, configs, directory and record were gone, and the report of what was removed was lost with it."""
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, "site-1", now=NOW - timedelta(days=2))  # expired: gc's to collect
    before = _state(clients, config)
    config = config.replace("verify", ca_bundle=str(tmp_path / "nope.pem"))
    with pytest.raises(ConfigError, match=r"^verify\.ca_bundle: cannot load .*nope\.pem"):
        if command == "teardown":
            teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
        else:
            gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(), now=NOW)
    assert _state(clients, config) == before


def test_a_teardown_that_asks_no_edge_does_not_need_the_ca_bundle(tmp_path):
    config = _config(tmp_path).replace("verify", origin_address="", ca_bundle=str(tmp_path / "nope.pem"))
    clients = _clients(config)
    _deploy(config, clients, "site-1")
    report = teardown(TeardownSettings.from_config(config), "site-1", clients, Recorder())
    assert report.left == () and report.page.startswith("not asked:") and _state(clients, config) == ((), (), (), ())
