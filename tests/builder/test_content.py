"""No content is ever lost: raw-text elements, unclosed HTML blocks, raw ids, images, task lists, nesting,
and inputs that are not a Markdown file at all."""

from __future__ import annotations

import json
import os
import re

import pytest
from bs4 import BeautifulSoup

from graphsite.builder.markdown import MAX_NESTING
from graphsite.builder.rawhtml import RAW_TEXT
from graphsite.usecases.build import checked_page

WORDS = re.compile(r"[A-Za-z0-9]+")


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def visible_words(html: str) -> list[str]:
    """Return the words of the page's report, notes and references as a reader sees them with every
    accordion open (the page's own chrome — toolbar, §N, Source lines, permalinks — left out)."""
    soup = _soup(html)
    for chrome in soup.select(".idx, .permalink, .source, details > summary, .excerpt, .cited-in, .ref-url"):
        chrome.decompose()
    parts = [soup.find(id=name) for name in ("intro", "report", "notes", "references")]
    return [w for part in parts if part is not None for w in WORDS.findall(part.get_text(" "))]


def in_order(expected: list[str], seen: list[str]) -> bool:
    """Return whether `expected` appears in `seen` as a subsequence (in order, gaps allowed)."""
    stream = iter(seen)
    return all(any(word == candidate for candidate in stream) for word in expected)


def _codes(page) -> list[tuple[str, int | None]]:
    return [(w.code, w.line) for w in page.report.warnings]


@pytest.mark.parametrize("element", sorted(RAW_TEXT))
def test_a_raw_text_element_in_prose_swallows_nothing(write_md, element):
    source = write_md(f"# T\n\n## 1. One\n\nPut it in one <{element}> element, then more prose here.\n\n"
                      "- alpha item\n- beta item\n\n```\ncode words\n```\n\nClosing words [[1](https://a.example/)].\n\n"
                      "## 2. Two\n\nSecond section words.\n\n## References\n\n1. A https://a.example/\n")
    page = checked_page(source)
    words = visible_words(page.html)
    assert in_order(WORDS.findall("Put it in one element then more prose here alpha item beta item code words "
                                  "Closing words Second section words"), words), words
    assert ("raw-html-shown", 5) in _codes(page)
    soup = _soup(page.html)
    assert f"<{element}>" in soup.find(id="report").get_text()
    assert soup.find(id="report").find(element) is None
    assert page.report.sections[0].summary_html.endswith("</p>") and "more prose here" in \
        page.report.sections[0].summary_html


@pytest.mark.parametrize("element", sorted(RAW_TEXT))
def test_a_raw_text_element_opening_an_html_block_swallows_nothing(write_md, element):
    source = write_md(f"# T\n\n## A\n\n<{element}>\nwords inside\n\n## B\n\nNext section words.\n\n"
                      f"<div>\nblock with <{element}> in it\n</div>\n\nLast words.\n")
    page = checked_page(source)
    words = visible_words(page.html)
    assert in_order(["Next", "section", "words", "block", "with", "in", "it", "Last", "words"], words), words
    assert [s.title for s in page.report.sections] == ["A", "B"], "the heading after it is still a heading"
    assert {line for code, line in _codes(page) if code == "raw-html-shown"} >= {5, 13}


@pytest.mark.parametrize("element", ["script", "style", "template"])
def test_a_complete_invisible_element_is_dropped_with_a_warning(write_md, element):
    source = write_md(f"# T\n\n## A\n\nBefore.\n\n<{element}>\nbody {{ color: red }}\n</{element}>\n\nAfter words.\n")
    page = checked_page(source)
    assert ("raw-html-dropped", 7) in _codes(page)
    assert "color" not in _soup(page.html).find(id="report").get_text()
    assert in_order(["Before", "After", "words"], visible_words(page.html))


@pytest.mark.parametrize("opener", ["<!-- a note", "<?php echo 1", "<![CDATA[ raw", "<pre>", "<textarea>"])
def test_an_html_block_that_is_never_closed_is_read_as_markdown(write_md, opener):
    source = write_md(f"# T\n\n## A\n\n{opener}\n\nMore words.\n\n## B\n\n- list words\n")
    page = checked_page(source)
    assert [s.title for s in page.report.sections] == ["A", "B"]
    assert in_order(["More", "words", "list", "words"], visible_words(page.html))
    assert any(code == "raw-html-shown" and line == 5 for code, line in _codes(page)), _codes(page)


def test_a_closed_comment_stays_hidden_without_a_warning(write_md):
    page = checked_page(write_md("# T\n\n## A\n\n<!-- private note -->\n\nWords.\n"))
    assert "private" not in page.html and page.report.warnings == ()


def test_raw_ids_never_collide_with_generated_ones(write_md):
    source = write_md("# T\n\n## Setup\n\nText[^1] and <a id=\"setup\">x</a> <span id='fn1'>y</span> "
                      '<b id="mine">z</b> <i id="mine">again</i> <a id="anchor" name="anchor">both</a>\n\n'
                      "[^1]: A note.\n")
    page = checked_page(source)
    ids = [tag["id"] for tag in _soup(page.html).find_all(id=True)]
    assert len(ids) == len(set(ids)), ids
    assert {"setup", "fn1", "mine", "anchor"} <= set(ids)
    assert [line for code, line in _codes(page) if code == "raw-html-id"] == [5, 5, 5]
    assert in_order(["x", "y", "z", "again", "both"], visible_words(page.html))


def test_task_lists_are_disabled_checkboxes(write_md):
    soup = _soup(checked_page(write_md("# T\n\n## A\n\nIntro.\n\n- [ ] open task\n- [x] done task\n")).html)
    boxes = soup.find(id="report").find_all("input")
    assert [(b["type"], b.has_attr("disabled"), b.has_attr("checked")) for b in boxes] == \
        [("checkbox", True, False), ("checkbox", True, True)]
    assert "[ ]" not in soup.find(id="report").get_text()


def test_external_images_are_outbound_urls_and_protocol_relative_ones_load(write_md):
    source = write_md('# T\n\n## A\n\n![a](https://img.example/a.png) ![b](//cdn.example/b.png) '
                      '<img src="//raw.example/c.png" alt="c">\n')
    page = checked_page(source)
    assert page.report.images == ("https://img.example/a.png", "https://cdn.example/b.png",
                                  "https://raw.example/c.png")
    assert set(page.report.images) <= set(page.report.links)
    csp = _soup(page.html).find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    assert "img-src https://img.example https://cdn.example https://raw.example" in csp
    assert not any(code == "external-images" for code, _ in _codes(page))
    system = checked_page(source, fonts="system")
    assert [w.message for w in system.report.warnings if w.code == "external-images"][0].startswith(
        "--fonts system, but the page still loads 3 image(s)")


def test_nesting_deeper_than_the_renderer_keeps_is_a_warning(write_md):
    deep = checked_page(write_md("# T\n\n## A\n\n" + ">" * (MAX_NESTING + 20) + " deep words\n\nAfter.\n"))
    assert [line for code, line in _codes(deep) if code == "nesting-too-deep"] == [5]
    assert "After" in visible_words(deep.html)
    kept = checked_page(write_md("# T\n\n## A\n\n" + ">" * (MAX_NESTING - 1) + " kept words\n", "kept.md"))
    assert not any(code == "nesting-too-deep" for code, _ in _codes(kept))
    assert in_order(["kept", "words"], visible_words(kept.html)), "no warning where nothing is cut"


def _error_line(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_fifo_is_refused_without_hanging(run_cli, tmp_path):
    fifo = tmp_path / "report.md"
    os.mkfifo(fifo)
    line = _error_line(run_cli("build", str(fifo), "--out", str(tmp_path / "site")))
    assert str(fifo) in line and "not a regular file (a FIFO)" in line


def test_a_device_is_refused(run_cli, tmp_path):
    line = _error_line(run_cli("build", "/dev/zero", "--out", str(tmp_path / "site")))
    assert "/dev/zero" in line and "character device" in line


def test_a_fifo_with_a_writer_and_data_is_refused_too(run_cli, tmp_path):
    fifo = tmp_path / "stream.md"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that the write end opens without blocking
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(writer, b"# T\n\nwords\n")
        assert "not a regular file" in _error_line(run_cli("build", str(fifo), "--out", str(tmp_path / "site")))
        assert os.read(reader, 100) == b"# T\n\nwords\n", "the build did not consume the stream"
    finally:
        os.close(writer)
        os.close(reader)


def test_the_size_limit_is_configurable(run_cli, write_md, tmp_path, monkeypatch):
    source = write_md("# T\n\n" + "words " * 400)
    monkeypatch.setenv("GRAPHSITE_BUILD_MAX_BYTES", "1000")
    line = _error_line(run_cli("build", str(source), "--out", str(tmp_path / "site")))
    assert str(source) in line and "more than the limit of 1,000" in line
    monkeypatch.setenv("GRAPHSITE_BUILD_MAX_BYTES", "100000")
    assert run_cli("build", str(source), "--out", str(tmp_path / "site")).exit_code == 0


def test_the_size_limit_s_hint_says_how_far_it_may_be_raised(run_cli, write_md, tmp_path, monkeypatch):
    source = write_md("# T\n\n" + "words " * 400)
    monkeypatch.setenv("GRAPHSITE_BUILD_MAX_BYTES", "1000")
    result = run_cli("build", str(source), "--out", str(tmp_path / "site"))
    assert result.exit_code == 1 and "raise build.max_bytes" in result.stderr, result.stderr
    assert "at most 1,073,741,824" in result.stderr, result.stderr


@pytest.mark.parametrize("from_stdin", [False, True], ids=["file", "stdin"])
def test_a_limit_of_a_gib_costs_a_small_report_no_more_memory_than_the_default(write_md, tmp_path, from_stdin):
    """read(n) takes n bytes of address space before it reads: build.max_bytes at its largest (1 GiB) must not
    make a small report's build fail where the default limit lets it run."""
    import resource
    import subprocess
    import sys

    source = write_md("# T\n\nwords\n")
    def limited() -> None:  # an address space of 800 MB: room for graphsite, not for a GiB read
        resource.setrlimit(resource.RLIMIT_AS, (800 << 20, 800 << 20))

    argv = [sys.executable, "-m", "graphsite", "-q", "build", "-" if from_stdin else str(source),
            "--out", str(tmp_path / "site")]
    env = {**os.environ, "GRAPHSITE_BUILD_MAX_BYTES": str(1 << 30), "GRAPHSITE_CONFIG": ""}
    done = subprocess.run(argv, input=source.read_bytes(), capture_output=True, env=env, cwd=tmp_path,
                          preexec_fn=limited, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "site" / "index.html").is_file()


def test_json_prints_an_error_object_on_failure(run_cli, tmp_path):
    result = run_cli("build", str(tmp_path / "missing.md"), "--json", "--out", str(tmp_path / "site"))
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert sorted(data) == ["error", "hint", "status"] and data["status"] == 1
    assert "missing.md" in data["error"] and "not found" in data["error"] and data["hint"]


def test_every_corpus_document_keeps_its_words(corpus_with_images):
    for path in sorted(corpus_with_images.glob("*.md")):
        page = checked_page(path)
        words = visible_words(page.html)
        assert len(words) > 50, path.name


def test_an_unclosed_raw_link_with_an_id_is_not_repeated_by_the_parser(write_md):
    # An HTML parser reopens an unclosed <a id=x> in the blocks after it: the copies lose the id.
    page = checked_page(write_md('# 1. A\n\n## 1.1 B\n\nalpha <a id="mine" name="mine"> bravo.\n\nNext paragraph.\n'))
    soup = _soup(page.html)
    ids = [tag["id"] for tag in soup.find_all(id=True)]
    assert ids.count("mine") == 1 and len(soup.find_all(attrs={"name": "mine"})) == 1
    assert in_order(["alpha", "bravo", "Next", "paragraph"], visible_words(page.html))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("body", [
    "See https://a.example/x" + "." * 100_000 + " end.",
    "See https://a.example/x" + ")" * 100_000 + " end.",
    "See https://a.example/x" + "&amp;" * 20_000 + " end.",
    "Sentence. " * 20_000,
    "Options:\n\n" + "- item words\n" * 8_000,
    "<div>\n" + "<style> " * 20_000 + "\n</div>",
    "<div>\n" + '<a id="x">' * 20_000 + "\n</div>",
    "## S\n\n### Sub\n\ntext [[1](https://a.example/)]\n\n" * 2_000,
    "## References\n\n1. Ref https://a.example/x" + ")" * 100_000 + "\n",
])
def test_long_runs_build_in_linear_time(write_md, body):
    # A hang guard, not a speed target (benchmarks/build_scale.py measures): each of these took minutes when a
    # step rescanned or re-sliced the text per character, heading or warning.
    page = checked_page(write_md("# T\n\n## A\n\n" + body + "\n"))
    assert page.report.sections
