"""The pure parts of the live check: status rules, Retry-After, anchors, the table, the progress lines."""

from __future__ import annotations

import io
from email.utils import formatdate

import pytest

from graphsite.citations.console import Progress, render_summary
from graphsite.citations.results import (
    LinkReport,
    LinkResult,
    anchors,
    has_fragment,
    retry_after,
    state_for_status,
)


@pytest.mark.parametrize("status, state", [(200, "ok"), (204, "ok"), (401, "blocked"), (403, "blocked"),
                                           (429, "blocked"), (999, "blocked"), (404, "dead"), (410, "dead"),
                                           (400, "dead"), (500, "dead"), (503, "unavailable")])
def test_state_for_a_final_status(status, state):
    assert state_for_status(status) == state


def test_retry_after_in_seconds_or_as_an_http_date():
    assert retry_after("7") == 7.0
    assert retry_after(formatdate(1_000_030, usegmt=True), now=1_000_000) == pytest.approx(30.0)
    assert retry_after(formatdate(999_000, usegmt=True), now=1_000_000) == 0.0
    assert retry_after("soon") is None and retry_after(None) is None
    assert retry_after("\u00b2") is None and retry_after("\u0663") is None  # digits to str.isdigit, not to float


def test_anchors_are_ids_and_named_links_only():
    html = "<h2 id='a'>x</h2><a name='b'></a><meta name='c'><div data-id='d'></div><p id=\"e&amp;f\"></p>"
    assert anchors(html) == {"a", "b", "e&f"}


@pytest.mark.parametrize("fragment, found", [("a", True), ("top", True), ("", True), (":~:text=hello", True),
                                              ("readme", True), ("caf%C3%A9", True), ("zzz", False)])
def test_fragment_targets(fragment, found):
    targets = frozenset({"a", "user-content-readme", "café"})
    assert has_fragment(targets, fragment) is found


def test_the_table_lists_what_is_not_ok_then_the_totals():
    report = LinkReport((LinkResult("https://a.example/", "ok", status=200),
                         LinkResult("https://b.example/x", "dead", "HTTP 404", status=404),
                         LinkResult("https://c.example/", "timeout", "no answer within 1 s", cached=False)),
                        seconds=1.5, requests=4)
    lines = render_summary(report, colour=False).splitlines()
    assert [line.split()[:3] for line in lines[:-1]] == [["dead", "404", "https://b.example/x"],
                                                           ["timeout", "---", "https://c.example/"]]
    assert lines[-1] == "Checked 3 links in 1.50 s (4 requests, 0 from cache): 1 ok, 1 dead, 1 timeout"
    assert len(render_summary(report, every_link=True, colour=False).splitlines()) == 4


def test_progress_off_a_terminal_prints_a_counter_line_every_tenth():
    stream = io.StringIO()
    meter = Progress(40, stream=stream)
    for _ in range(40):
        meter.advance()
    meter.finish()
    lines = stream.getvalue().splitlines()
    assert lines[-1] == "  checked 40/40 links" and len(lines) == 10
    assert all(line.startswith("  checked ") for line in lines)


def test_progress_can_be_silenced():
    stream = io.StringIO()
    meter = Progress(5, enabled=False, stream=stream)
    meter.advance(5)
    meter.finish()
    assert stream.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_redraws_one_bar():
    stream = _Terminal()
    meter = Progress(4, stream=stream)
    meter.advance(2)
    meter.advance(2)
    meter.finish()
    frames = stream.getvalue().split("\r")[1:]
    assert [frame.split("]")[-1].strip() for frame in frames] == ["2/4", "4/4"]
    assert frames[-1].endswith("\n") and "[" + "#" * 28 + "]" in frames[-1]


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_slow_run_names_the_urls_in_flight_every_few_seconds_off_a_terminal():
    stream, clock = io.StringIO(), _Clock()
    meter = Progress(3, stream=stream, clock=clock)
    meter.advance()
    clock.now += 4
    assert meter.idle() == 4
    meter.waiting([("https://slow.example/a", 4.2), ("https://slow.example/b", 3.0)])
    meter.waiting([("https://slow.example/a", 4.7)])  # within WAITING_EVERY of the last line: not repeated
    clock.now += 6
    meter.waiting([("https://slow.example/a", 10.2)])
    lines = stream.getvalue().splitlines()
    assert lines[1:] == ["  waiting on 2 link(s): https://slow.example/a (4 s), https://slow.example/b (3 s)",
                         "  waiting on 1 link(s): https://slow.example/a (10 s)"]


def test_a_slow_run_names_the_url_it_waits_on_on_the_bar():
    stream, clock = _Terminal(), _Clock()
    meter = Progress(2, stream=stream, clock=clock)
    meter.advance()
    meter.waiting([("https://slow.example/a", 5.0), ("https://slow.example/b", 1.0)])
    assert stream.getvalue().split("\r")[-1].endswith("1/2  waiting on https://slow.example/a (5 s) and 1 more")


def test_the_table_names_lines_warnings_and_a_partial_run():
    report = LinkReport((LinkResult("https://a.example/", "ok", status=200, warning="the body ended early",
                                    lines=(3,)),
                         LinkResult("https://b.example/", "unchecked", "not checked: stopped", lines=(4, 9))),
                        seconds=0.5, stopped_by="SIGINT")
    lines = render_summary(report, colour=False).splitlines()
    assert lines[0].endswith("https://a.example/ (line 3)  warning: the body ended early")
    assert "https://b.example/ (lines 4, 9)  not checked: stopped" in lines[1]
    assert lines[-1].startswith("Stopped by SIGINT (partial): Checked 2 links")
    assert report.as_dict()["partial"] is True and report.as_dict()["links"][1]["line"] == 4
