"""The pure parts of verify: certificate findings, the page title, retry with backoff."""

from datetime import UTC, datetime

import pytest

from graphsite.publisher.verify import FAIL, PASS, _retry, page_title, tls_findings

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


class _Clock:
    """A monotonic clock that moves only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now, self.slept = 1000.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_retry_stops_at_the_first_pass_and_gives_up_at_the_deadline():
    answers, clock = iter([(FAIL, "not yet"), (FAIL, "not yet"), (PASS, "ok")]), _Clock()
    result = _retry("x", lambda: next(answers), clock() + 30, clock=clock, sleep=clock.sleep)
    assert (result.status, result.evidence, clock.slept) == (PASS, "ok", [0.2, 0.4])
    calls, clock = [], _Clock()
    deadline = clock() + 1.5
    result = _retry("x", lambda: calls.append(1) or (FAIL, "never"), deadline, clock=clock, sleep=clock.sleep)
    assert result.status == FAIL and result.evidence == "never" and len(calls) == 4
    # backoff 0.2, 0.4, 0.8; the next wait (1.6) would pass the deadline, so it gives up before it
    assert clock.slept == [0.2, 0.4, 0.8] and clock.now <= deadline and result.seconds == pytest.approx(1.4)


def test_retry_backoff_stops_growing_at_two_seconds():
    clock = _Clock()
    _retry("x", lambda: (FAIL, "never"), clock() + 10, clock=clock, sleep=clock.sleep)
    assert clock.slept == [0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]
