"""Offline citation integrity: the seed report's real defects, each finding code, acceptances."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsite import urls
from graphsite.builder.model import InlineCitation, Reference
from graphsite.builder.report import read_report
from graphsite.citations.integrity import CODES, _fnmatch, check_citations, citation_counts, unmatched_acceptances
from graphsite.config import Acceptance, load_config
from graphsite.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "content" / "graph-engineering.md"
HOME = "file:///home/ubuntu/.hermes/skills/"


@pytest.fixture(scope="module")
def seed():
    """The default report as the builder reads it (the seed's Markdown, restored), and its findings."""
    report = read_report(REPORT)
    return report, check_citations(report.citations, report.references)


def by_code(findings, code):
    return [f for f in findings if f.code == f"citation-{code}"]


def test_the_seed_mismatches_of_21_and_22_name_both_urls(seed):
    report, findings = seed
    lines = REPORT.read_text(encoding="utf-8").splitlines()
    mismatches = {(f.number, f.line): f for f in by_code(findings, "mismatch") if f.number in (21, 22)}
    assert sorted(n for n, _ in mismatches) == [21, 21, 22]
    for (number, line), finding in mismatches.items():
        reference = next(r for r in report.references if r.number == number)
        inline = [c.url for c in report.citations if c.number == number and c.line == line and c.url != reference.url]
        assert inline and inline[0] in finding.message and reference.url in finding.message
        assert f"[{number}](" in lines[line - 1]  # the line named is the inline citation's own line
        assert "\n" not in finding.message


def test_the_seed_placeholders_are_found(seed):
    report, findings = seed
    placeholders = {f.number for f in by_code(findings, "placeholder")}
    assert placeholders == {5, 11}
    assert {r.url for r in report.references if r.number in placeholders} == {
        "https://news.ycombinator.com/item?id=...", "https://twitter.com/steipete/status/..."}


def test_every_home_path_of_the_seed_is_non_public(seed):
    report, findings = seed
    home_refs = {r.number for r in report.references if r.url.startswith("file:///home/")}
    assert home_refs == set(range(21, 27)) | set(range(52, 61))
    flagged = {f.number for f in by_code(findings, "non-public") if "reference URL file:///home/" in f.message}
    assert flagged == home_refs


def test_entries_4_and_6_share_one_url(seed):
    _, findings = seed
    [duplicate] = by_code(findings, "duplicate-url")
    assert duplicate.number == 6 and "[4]" in duplicate.message and "40793021" in duplicate.message


def test_every_finding_has_a_stable_code_a_number_and_a_line(seed):
    report, findings = seed
    total = len(REPORT.read_text(encoding="utf-8").splitlines())
    assert findings and all(f.code in CODES and f.number and 1 <= f.line <= total for f in findings)
    assert findings == sorted(findings, key=lambda f: (f.line, f.number, f.code, f.message))
    assert not by_code(findings, "dangling") and not by_code(findings, "duplicate-number")


def test_citation_counts_of_the_default_report(seed):
    report, _ = seed
    counts = citation_counts(report.citations, report.references, report.links)
    assert counts.inline == len(report.citations) and counts.references == 62
    assert counts.unique_urls >= 30  # the report's own checklist expects at least 30


def test_the_reports_own_acceptances_cover_every_seed_finding_and_none_is_stale(seed):
    report, _ = seed
    accept = report.front.accept
    assert len(accept) == 8 and all(a.reason for a in accept)
    findings = check_citations(report.citations, report.references, accept)
    assert [f for f in findings if not f.accepted] == []
    assert unmatched_acceptances(report.citations, report.references, accept, links=report.written_links) == []


def cite(number, url, line=1):
    return InlineCitation(number, url, line)


def ref(number, url, title="A title", line=100):
    return Reference(number, url, title, line)


def codes(findings):
    return sorted((f.code.removeprefix("citation-"), f.number) for f in findings)


def test_dangling_unused_and_duplicate_number():
    findings = check_citations(
        [cite(1, "https://a.example/"), cite(3, "https://c.example/"), cite(3, "https://c.example/", 9)],
        [ref(1, "https://a.example/"), ref(2, "https://b.example/"), ref(2, "https://b2.example/", line=101)],
    )
    assert codes(findings) == [("dangling", 3), ("duplicate-number", 2), ("unused", 2)]


@pytest.mark.parametrize("url, code", [
    ("javascript:alert(1)", "non-public"),
    ("JaVaScRiPt:alert(document.domain)", "non-public"),
    ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "non-public"),
    ("vbscript:msgbox(1)", "non-public"),
    ("file:///etc/passwd", "non-public"),
    ("/docs/page.html", "non-public"),
    ("http://localhost:8080/admin", "non-public"),
    ("http://127.0.0.1/", "non-public"),
    ("http://10.1.2.3/", "non-public"),
    ("http://192.168.1.1/router", "non-public"),
    ("http://[::1]/", "non-public"),
    ("http://printer.local/", "non-public"),
    ("http://intranet/wiki", "non-public"),
    ("https://exa mple.com/", "malformed"),
    ("https:///no-host", "malformed"),
    ("https://example.com:99999/", "malformed"),
    ("https://bad_host!.com/", "malformed"),
    ("https://news.ycombinator.com/item?id=", "placeholder"),
    ("https://news.ycombinator.com/item?id=...", "placeholder"),
    ("https://x.com/user/status/…", "placeholder"),
    ("https://github.com/<owner>/<repo>", "placeholder"),
    ("https://api.example.com/users/{id}", "placeholder"),
])
def test_a_bad_reference_url_is_reported(url, code):
    findings = check_citations([cite(1, url)], [ref(1, url)])
    assert codes(findings) == [(code, 1)]
    assert url in findings[0].message


@pytest.mark.parametrize("url", ["https://example.com/a?b=1&c=2#frag", "http://93.184.215.14/", "https://Example.COM"])
def test_a_good_url_is_not_reported(url):
    assert check_citations([cite(1, url)], [ref(1, url)]) == []


def test_an_inline_url_with_its_own_problem_is_reported_beside_the_mismatch():
    findings = check_citations([cite(1, "javascript:alert(1)")], [ref(1, "https://a.example/")])
    assert codes(findings) == [("mismatch", 1), ("non-public", 1)]


def test_acceptance_is_limited_by_code_number_and_url():
    citations = [cite(1, "https://x.example/one"), cite(2, "https://x.example/two")]
    references = [ref(1, "https://a.example/"), ref(2, "https://b.example/")]
    accept = [Acceptance(code="mismatch", number=2, reason="known"),
              Acceptance(code="citation-mismatch", url="https://x.example/o*", reason="pattern")]
    accepted = {f.number: f.accepted for f in check_citations(citations, references, accept)}
    assert accepted == {1: "pattern", 2: "known"}
    narrow = [Acceptance(code="mismatch", number=3, reason="other"), Acceptance(code="unused", reason="no")]
    assert {f.accepted for f in check_citations(citations, references, narrow)} == {""}
    assert unmatched_acceptances(citations, references, narrow, links=()) == narrow


def test_an_acceptance_needs_a_known_code_and_a_reason(tmp_path):
    config = tmp_path / "graphsite.toml"
    config.write_text('[[citations.accept]]\ncode = "citation-typo"\nreason = "x"\n'
                      '[[citations.accept]]\ncode = "citation-unused"\n')
    with pytest.raises(ConfigError) as error:
        load_config(config, environ={})
    message = str(error.value)
    assert "unknown code 'citation-typo'" in message and "needs a code and a reason" in message


def test_a_reference_without_a_url_says_so():
    findings = check_citations([cite(1, "https://a.example/", 5)], [ref(1, "")])
    assert [(f.code, f.message) for f in findings] == [
        ("citation-mismatch", "[1] inline URL https://a.example/ differs from reference 1 (line 100): (no URL)"),
        ("citation-malformed", "[1] reference has no URL: a reader cannot follow it")]


def test_a_reference_list_without_any_numbered_citation_is_a_plain_bibliography():
    assert check_citations([], [ref(1, "https://a.example/"), ref(2, "https://b.example/")]) == []


@pytest.mark.parametrize("written, normalised", [
    ("HTTPS://Example.COM", "https://example.com/"),
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:8443/a", "https://example.com:8443/a"),
    ("https://bücher.example/straße", "https://xn--bcher-kva.example/stra%C3%9Fe"),
    ("https://example.com/a b?q=x y#f g", "https://example.com/a%20b?q=x%20y#f%20g"),
    ("https://example.com/a/./b/../c", "https://example.com/a/c"),
    ("https://example.com/x|y", "https://example.com/x%7Cy"),
    ("https://example.com/x%7cy", "https://example.com/x%7Cy"),
    ("https://example.com/Graph_(discrete)", "https://example.com/Graph_(discrete)"),
    ("https://example.com/50%", "https://example.com/50%25"),
    ("https://example.com/?q='a'", "https://example.com/?q=%27a%27"),
    ("https://[2001:DB8:0:0::1]/", "https://[2001:db8::1]/"),
    ("https:\\\\example.com\\a", "https://example.com/a"),
    ("  https://example.com/\t", "https://example.com/"),
    ("mailto:Someone@Example.com", "mailto:Someone@Example.com"),
    ("relative/path", "relative/path"),
    ("https://exa mple.com/", "https://exa mple.com/"),
])
def test_one_url_normaliser_the_whatwg_way(written, normalised):
    assert urls.normalize(written) == normalised
    assert urls.normalize(normalised) == normalised, "idempotent"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("hostile", ["+" * 200_000, "%3C" * 100_000, "{" * 200_000, "<" * 200_000,
                                     "a+" * 100_000 + ":", "https://x.example/" + "%3c" * 100_000 + "%3e"])
def test_url_checks_stay_linear_on_long_runs(hostile):
    # A quadratic pattern takes minutes on these; the timeout only guards against a hang, it is not a target.
    urls.problem(hostile)
    urls.normalize(hostile)


@pytest.mark.timeout(20)
def test_every_citation_mismatched_is_reported_once_each():
    # The old check rescanned every citation and reference per mismatch: minutes at this size (hang guard only).
    count = 4000
    citations = [InlineCitation(n, f"https://example.org/doc/{n}", n) for n in range(1, count + 1)]
    citations += [InlineCitation(7, "https://example.org/doc/7", count + 1)]
    references = [Reference(n, f"https://example.org/doc/{n}/", f"T{n}", 2 * count + n) for n in range(1, count + 1)]
    findings = check_citations(citations, references)
    assert [f.code for f in findings] == ["citation-mismatch"] * count
    seventh = next(f for f in findings if f.number == 7)
    assert "(2 places)" in seventh.message and "https://example.org/doc/7/" in seventh.message


def test_a_long_url_is_normalised_but_never_kept():
    """An embedded image's data: URL (megabytes) is normalised at every build: a memo keyed on it would keep every
    version alive in `serve`, which rebuilds for each change of the image."""
    from graphsite.urls import normalize, origin

    long_url = "data:image/png;base64," + "A" * 4096
    long_link = "https://Example.org/" + "a" * 4096
    for memoised in (normalize, origin):
        memoised.cache_clear()  # type: ignore[attr-defined]
    assert normalize(long_url) == long_url and normalize(long_link) == "https://example.org/" + "a" * 4096
    assert origin(long_link) == "https://example.org"
    assert [memoised.cache_info().currsize for memoised in (normalize, origin)] == [0, 0]  # type: ignore[attr-defined]
    assert (normalize("https://Example.org/a"), origin("https://Example.org/a")) == ("https://example.org/a",
                                                                                    "https://example.org")
    assert [memoised.cache_info().currsize for memoised in (normalize, origin)] == [1, 1]  # type: ignore[attr-defined]


def test_normalize_is_memoised_and_origin_keys_a_host_however_it_is_written():
    """A run normalises each URL several times (classification, the cache, the builder): uncached it cost about
    15 µs a call (IDNA), and a decorator once moved to the wrong function without a test noticing."""
    from graphsite.urls import normalize, origin

    assert normalize.cache_info().maxsize >= 65536  # type: ignore[attr-defined]
    assert origin("HTTPS://Example.ORG:8443/a?b#c") == origin("https://example.org:8443/x") == \
        "https://example.org:8443"
    assert origin("http://example.org/") != origin("https://example.org/")
    assert origin("https://u@Example.org.:443/x") == origin("https://example.org/") == "https://example.org"
    assert origin("http://[::1]:8080/") == "http://[::1]:8080"


# an acceptance's URL pattern against a finding's URL: fnmatch's answer, with or without a compiled pattern
_GLOB = st.text(alphabet="ab/:.*?[]!\n", max_size=8)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(_GLOB, _GLOB)
def test_an_acceptance_pattern_matches_as_fnmatch_does(url: str, pattern: str) -> None:
    assert _fnmatch(url, pattern) == fnmatch.fnmatchcase(url, pattern)
    assert _fnmatch(url + pattern, pattern + "*") == fnmatch.fnmatchcase(url + pattern, pattern + "*")
