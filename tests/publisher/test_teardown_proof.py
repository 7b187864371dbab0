"""teardown's proof that the page is gone is three-valued: only an HTTP answer from the edge that is not the page
proves it offline; an edge that could not be asked proves nothing ("not proven"), and such a teardown is not
finished (exit 1). No lab needed: a real socket where nothing listens."""

from __future__ import annotations

import socket

import pytest

from graphsite.commands import present
from graphsite.publisher.outcomes import REMOVED, Outcome
from graphsite.publisher.probe import HttpEdge
from graphsite.usecases.inventory import Holding
from graphsite.usecases.teardown import PageState, TeardownReport, TeardownSettings, page_offline

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
