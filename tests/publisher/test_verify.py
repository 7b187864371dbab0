"""The pure parts of verify: certificate findings, the page title, what is retried (only what can change with
time) and how."""

import json
import time
from datetime import UTC, datetime

import pytest

from graphsite.publisher import probe
from graphsite.usecases.verify import (
    CONFIRM_AFTER,
    FAIL,
    PASS,
    SKIP,
    WAIT,
    _retry,
    changing,
    next_read,
    page_title,
    tls_findings,
)
from tests.publisher.fakes import FakeClock

NOW = datetime(2026, 7, 1, tzinfo=UTC)


def _cert(names=("*.hhdevs.space",), before="Jun  1 00:00:00 2026 GMT", after="Aug 30 00:00:00 2026 GMT"):
    return {"subjectAltName": tuple(("DNS", n) for n in names), "notBefore": before, "notAfter": after,
            "issuer": ((("commonName", "R11"),),)}


def test_a_good_certificate_has_no_findings():
    assert tls_findings(_cert(), "graph-eng-0a1b2c.hhdevs.space", NOW) == []
    assert tls_findings(_cert(names=("graph-eng-0a1b2c.hhdevs.space",)), "graph-eng-0a1b2c.hhdevs.space", NOW) == []


def test_a_wildcard_covers_one_label_only():
    assert "does not cover" in tls_findings(_cert(), "a.b.hhdevs.space", NOW)[0]
    assert "does not cover" in tls_findings(_cert(names=("other.hhdevs.space",)), "x.hhdevs.space", NOW)[0]


def test_old_and_expiring_certificates_are_findings():
    old = tls_findings(_cert(before="Jan  1 00:00:00 2026 GMT"), "x.hhdevs.space", NOW)
    assert old == ["notBefore 2026-01-01 is not within the last 90 days"]
    soon = tls_findings(_cert(after="Jul 10 00:00:00 2026 GMT"), "x.hhdevs.space", NOW)
    assert soon == ["notAfter 2026-07-10 is less than 14 days away"]


def test_page_title_is_parsed_not_searched():
    assert page_title(b"<html><head><title>A &amp; B</title></head><body><title>no</title></body>") == "A & B"
    assert page_title(b"<html><body>no title</body></html>") is None


def test_retry_stops_at_the_first_pass_and_gives_up_waiting_at_the_deadline():
    answers, clock = iter([(WAIT, "not yet"), (WAIT, "not yet"), (PASS, "ok")]), FakeClock()
    result = _retry("x", lambda: next(answers), clock() + 30, clock=clock, sleep=clock.sleep)
    assert (result.status, result.evidence, clock.slept) == (PASS, "ok", [0.2, 0.4])
    calls, clock = [], FakeClock()
    deadline = clock() + 1.5
    result = _retry("x", lambda: calls.append(1) or (WAIT, "never"), deadline, clock=clock, sleep=clock.sleep)
    assert result.status == FAIL and result.evidence == "never" and len(calls) == 4  # WAIT is never a result
    # backoff 0.2, 0.4, 0.8; the next wait (1.6) would pass the deadline, so it gives up before it
    assert clock.slept == [0.2, 0.4, 0.8] and clock.now <= deadline and result.seconds == pytest.approx(1.4)


def test_retry_backoff_stops_growing_at_two_seconds():
    clock = FakeClock()
    _retry("x", lambda: (WAIT, "never"), clock() + 10, clock=clock, sleep=clock.sleep)
    assert clock.slept == [0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]


@pytest.mark.parametrize("status, evidence, previous, step", [
    (PASS, "ok", None, "stop"),
    (SKIP, "no edge here", None, "stop"),
    (WAIT, "0/1 replicas running", None, "retry"),
    (WAIT, "HTTP 502", "HTTP 502", "retry"),  # what can change with time is waited for, however often it repeats
    (FAIL, "headers: X missing", None, "confirm"),  # a mismatch seen once is read again
    (FAIL, "sha256 ab… is not cd…", "sha256 ef… is not cd…", "confirm"),  # it changed: read again
    (FAIL, "headers: X missing", "headers: X missing", "stop"),  # the same twice: it will not change
])
def test_next_read_waits_for_time_and_confirms_a_mismatch_once(status, evidence, previous, step):
    assert next_read(status, evidence, previous) == step


def test_a_mismatch_fails_on_its_second_alike_read_not_at_the_deadline():
    clock = FakeClock()
    reads = iter([(WAIT, "HTTP 404"), (FAIL, "CSP differs"), (FAIL, "CSP differs"), (PASS, "never read")])
    result = _retry("public", lambda: next(reads), clock() + 60, clock=clock, sleep=clock.sleep)
    assert (result.status, result.evidence) == (FAIL, "CSP differs")
    assert clock.slept == [0.2, CONFIRM_AFTER]  # the backoff while the route loads, then one confirming read
    assert next(reads) == (PASS, "never read")


def test_a_mismatch_whose_confirmation_would_pass_the_deadline_fails_at_once():
    calls = []
    result = _retry("tls", lambda: calls.append(1) or (FAIL, "notAfter in 3 days"), time.monotonic() + 1)
    assert result.status == FAIL and len(calls) == 1


def _answer(status: int = 0, failure: str = "") -> probe.Probe:
    return probe.Probe(url="https://x/", status=status, failure=failure, error="boom" if failure else "")


@pytest.mark.parametrize("answer, waits", [
    (_answer(failure="unreachable"), True),  # refused, reset, timed out: the edge or the task is not there yet
    (_answer(failure="no-certificate"), True),  # the edge's default certificate until it holds the name's
    (_answer(404), True),  # the edge has not loaded the route yet
    (_answer(502), True),
    (_answer(503), True),
    (_answer(failure="tls"), False),  # a trusted certificate for another name, or expired
    (_answer(failure="invalid"), False),
    (_answer(200), False),  # a 200 where a 401 or a redirect was wanted
    (_answer(401), False),
    (_answer(403), False),
    (_answer(500), False),
])
def test_only_answers_that_can_change_with_time_are_waited_for(answer, waits):
    assert changing(answer) is waits


@pytest.mark.parametrize("args, message", [
    (["--password-file", "{empty}"], "holds no password on its first line"),
    (["--password-file", "{missing}"], "No such file"),
    (["--password", "secret"], "No such option '--password'"),  # never an argument: argv is visible to all
    (["--password-file", "{latin1}"], "is not UTF-8 text"),
])
def test_the_password_comes_from_a_file_or_the_environment_only(tmp_path, args, message):
    from click.testing import CliRunner

    from graphsite.cli import main

    (tmp_path / "empty").write_text("\nsecond line\n")
    (tmp_path / "latin1").write_bytes("pässword\n".encode("latin-1"))
    args = [a.format(empty=tmp_path / "empty", missing=tmp_path / "missing", latin1=tmp_path / "latin1") for a in args]
    done = CliRunner().invoke(main, ["verify", "graph-eng-0a1b2c", *args])
    assert done.exit_code == 2 and message in done.output, done.output


def _report(made_by: str, status: str = PASS, content_checked: bool = True):
    from graphsite.publisher.deployment import Deployment
    from graphsite.usecases.verify import CheckResult, VerifyReport

    deployment = Deployment(name="graph-eng-0a1b2c", fqdn="graph-eng-0a1b2c.hhdevs.space", sha256="a" * 64,
                            created="2026-07-01T12:00:00Z", made_by=made_by)
    checks = (CheckResult("service", PASS, "1/1 replicas running", seconds=1.0),
              CheckResult("public", status, "https://…: HTTP 200, but security headers: missing …", seconds=2.1))
    return VerifyReport(deployment, checks, content_checked)


def test_verify_says_which_graphsite_made_the_deployment_and_when(capsys):
    from graphsite import __version__
    from graphsite.commands import present

    present.verify(_report(__version__), as_json=False)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"graph-eng-0a1b2c: made by graphsite {__version__} at 2026-07-01T12:00:00Z"
    assert err[-1] == "Verified graph-eng-0a1b2c: 2 passed"
    present.verify(_report("0.0.9"), as_json=False)
    other = capsys.readouterr().err.splitlines()[0]
    assert other.endswith(f"made by graphsite 0.0.9 at 2026-07-01T12:00:00Z (this is graphsite {__version__})")


def test_a_failed_verify_of_an_older_deployment_says_how_to_bring_it_up_to_date(capsys):
    from graphsite.commands import present

    older = ("made by an older graphsite at 2026-07-01T12:00:00Z; "
             "`graphsite deploy [SOURCE] --subdomain graph-eng-0a1b2c` brings it up to date")
    with pytest.raises(present.Incomplete) as failed:
        present.verify(_report("", status=FAIL), as_json=True)
    assert failed.value.message == f"graph-eng-0a1b2c: 1 check(s) failed: public\n  hint: {older}"
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0] == f"graph-eng-0a1b2c: {older}"
    report = json.loads(captured.out)
    assert (report["made_by"], report["created"], report["ok"]) == (None, "2026-07-01T12:00:00Z", False)


def test_a_summary_says_when_the_content_was_not_read(capsys):
    from graphsite.commands import present

    present.verify(_report("x", status=SKIP, content_checked=False), as_json=False)
    assert capsys.readouterr().err.splitlines()[-1] == (
        "Verified graph-eng-0a1b2c: 1 passed, 1 skipped; content not checked: the page is private and no password "
        "was given (--password-file FILE or GRAPHSITE_PASSWORD)")
