"""A property test over generated Markdown reports: whatever the shape, the build either succeeds or fails
with one line; no visible word is lost (against the generator's own list, and against an independent render
of the same source by a plain CommonMark renderer); ids are unique; every `#` link resolves or is warned;
nothing executable reaches the page; the page parses without an HTML5 error; a rebuild is byte-identical.
Bounded: 60 examples, each well under a second."""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import html5lib
from bs4 import BeautifulSoup
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from graphsite.builder.render import load_theme
from graphsite.errors import GraphsiteError
from graphsite.usecases.build import checked_page

from .test_content import WORDS, in_order, visible_words

VOCABULARY = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")
# Raw HTML an author pastes: every raw-text element, handlers, dangerous URLs, ids that may collide.
RAW_INLINE = ("<style>", "</style>", "<script>alert(1)</script>", "<textarea>", "<title>", "<xmp>",
              "<plaintext>", "<iframe>", "<noscript>", "<template>", "<b>", "</b>", "<span id=\"fn1\">",
              "<a id=\"alpha\">", "<img src=x onerror=alert(1)>", "<a href=\"javascript:alert(1)\">",
              "<a href=\"data:text/html,x\">x</a>", "<!-- note -->", "<svg onload=alert(1)>",
              # MathML and SVG, closed or not, and their element names in prose (issue 21)
              "<math><mi>E</mi><mo>=</mo><mi>m</mi></math>", "<math><mi>x</mi>", "<svg><text>t</text></svg>",
              "<path>", "<text>", "<object data=\"x\">", "<input type=password>", "<button>")
RAW_BLOCKS = ("<style>\np { color: red }\n</style>", "<script>\nalert(1)\n</script>", "<div>\n<style>\n</div>",
              "<textarea>", "<!-- open comment", "<div onclick=\"x()\">", "<pre>",
              # tags that never end inside their block: an attribute or `>` missing (issue 21)
              "<div>\n<img src=\"https://e.org/x.png", "<p>\n<a title='open", "<div class=\"x",
              "<div>\n<!-- a note never closed")
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "poster", "srcset", "background", "cite"}

words = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=6)


@dataclass
class Doc:
    """A generated report: its Markdown, and the words a reader must see, in page order."""

    parts: list[str] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # words in the report body, in order
    notes: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)


@st.composite
def blocks(draw: st.DrawFn, doc: Doc, numbers: list[str]) -> None:
    kind = draw(st.sampled_from(["paragraph", "list", "table", "fence", "raw", "quote", "tasks"]))
    text = draw(words)
    if kind == "paragraph":
        extras = []
        if draw(st.booleans()):
            number = draw(st.integers(1, 4))
            extras.append(f"[[{number}](https://site{number}.example/p{draw(st.sampled_from(['', '/']))})]")
        if draw(st.booleans()):
            extras.append(draw(st.sampled_from(RAW_INLINE)))
        if draw(st.booleans()):  # an endnote link, not a citation (issue 21)
            extras.append(draw(st.sampled_from(["[[7](#top)]", "\\[[8](#top)\\]"])))
        if draw(st.booleans()):  # TeX, prices that are not TeX, a link to no fragment, kramdown (issue 21)
            extras.append(draw(st.sampled_from(["$E = mc^2$", "costs $5 and $10", "$$\\frac{a}{b}$$",
                                                "[see](#Nowhere-At-All)", "{: .note}", "{% raw %}"])))
        if numbers and draw(st.booleans()):
            extras.append(f"§{draw(st.sampled_from(numbers))}")
        if draw(st.booleans()):
            label = len(doc.footnotes) + 1
            note = draw(words)
            doc.footnotes.append(f"[^{label}]: {' '.join(note)}")
            doc.notes += note
            extras.append(f"[^{label}]")
        tail = draw(words)
        ending = draw(st.sampled_from([".", ":", "", "!"]))
        doc.parts.append(" ".join([*text, *extras, *tail]) + ending)
        doc.seen += [*text, *tail]
    elif kind == "list":
        items = draw(st.lists(words, min_size=1, max_size=3))
        doc.parts.append("\n".join(f"- {' '.join(item)}" for item in items))
        doc.seen += [w for item in items for w in item]
    elif kind == "tasks":
        items = draw(st.lists(words, min_size=1, max_size=3))
        doc.parts.append("\n".join(f"- [{draw(st.sampled_from([' ', 'x']))}] {' '.join(item)}" for item in items))
        doc.seen += [w for item in items for w in item]
    elif kind == "table":
        cells = draw(st.lists(words, min_size=2, max_size=2))
        doc.parts.append(f"| {' '.join(text)} | h |\n|---|:-:|\n| {' '.join(cells[0])} | {' '.join(cells[1])} |")
        doc.seen += [*text, "h", *cells[0], *cells[1]]
    elif kind == "fence":
        doc.parts.append("```\n" + " ".join(text) + " <style> {\n```")
        doc.seen += text
    elif kind == "quote":
        doc.parts.append("> " + " ".join(text))
        doc.seen += text
    elif draw(st.booleans()):
        doc.parts.append(draw(st.sampled_from(RAW_BLOCKS)))
    else:  # display TeX, or kramdown's table-of-contents placeholder
        doc.parts.append(draw(st.sampled_from(["$$\n\\sum_{i=1}^n x_i\n$$", "* TOC\n{:toc}", "{:toc}"])))


@st.composite
def documents(draw: st.DrawFn) -> Doc:
    doc = Doc()
    level = draw(st.sampled_from([1, 2]))
    numbered = draw(st.booleans())
    if draw(st.booleans()):
        doc.parts.append(f"---\ntitle: {' '.join(draw(words))}\nbadge: {draw(st.sampled_from(VOCABULARY))}\n---")
    if (level == 2 or numbered) and draw(st.booleans()):
        doc.parts.append("# " + " ".join(draw(words)))  # the report's title, shown in the page's header
    count = draw(st.integers(1 if level == 2 or numbered else 2, 4))  # one unnumbered `#` is a title
    numbers = [str(n) for n in range(1, count + 1)] if numbered else []
    slugs = []
    for index in range(1, count + 1):
        title = draw(words)
        number = f"{index}. " if numbered else ""
        doc.parts.append("#" * level + f" {number}{' '.join(title)}")
        slugs.append("-".join([*([str(index)] if numbered else []), *title]))
        doc.seen += title
        for _ in range(draw(st.integers(0, 3))):
            draw(blocks(doc, numbers))
        if draw(st.booleans()):
            sub = draw(words)
            subnumber = f"{index}.1 " if numbered else ""
            doc.parts.append("#" * (level + 1) + f" {subnumber}{' '.join(sub)}")
            doc.seen += sub
            draw(blocks(doc, numbers))
    if draw(st.booleans()):  # links to the sections as GitHub writes them, in mixed case (issue 21)
        doc.parts.append(" ".join(f"[{VOCABULARY[0]}](#{slug.title()})" for slug in slugs))
        doc.seen += [VOCABULARY[0]] * len(slugs)
    if draw(st.booleans()):
        doc.parts.append("#" * draw(st.sampled_from([level, level + 1])) + " References")
        entries = []
        for number in range(1, draw(st.integers(1, 4)) + 1):
            title = draw(words)
            entries.append(f"{number}. {' '.join(title)} https://site{number}.example/p")
            doc.references += title
        doc.parts.append("\n".join(entries))
        if draw(st.booleans()):  # a heading after the list, inside the reference section (issue 21)
            extra, text = draw(words), draw(words)
            doc.parts.append("#" * (level + 2) + f" {' '.join(extra)}\n\n{' '.join(text)}")
            doc.references += [*extra, *text]
    if draw(st.booleans()):  # a note nobody refers to, which refers to another (issue 21): both are listed
        lonely, inner = draw(words), draw(words)
        doc.footnotes += [f"[^lonely]: {' '.join(lonely)} [^inner]", f"[^inner]: {' '.join(inner)}"]
        doc.notes += [*inner, *lonely]
    doc.parts += doc.footnotes
    return doc


def _assert_inert(soup: BeautifulSoup) -> None:
    scripts = soup.find_all("script")
    assert [s.string for s in scripts] == [load_theme().fonts_js, load_theme().js]  # the theme's own, no other
    for tag in soup.find_all(True):
        for name, value in tag.attrs.items():
            assert not name.lower().startswith("on"), (tag.name, name)
            if name.lower() in URL_ATTRIBUTES:
                for url in value if isinstance(value, list) else [value]:
                    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url).lower()
                    assert not cleaned.startswith(("javascript:", "data:", "vbscript:")), (tag.name, url)


# Each example's characters are new, so each subsets the four font faces afresh when the run's cache starts empty
# (tests/conftest.py): up to 3 s an example alone, 10-17 s beside the browser tests on two busy cores, which failed a
# 5 s deadline (before the tests had their own cache, the developer's warm one hid it). 60 examples still bound it.
@settings(max_examples=60, deadline=30000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(documents())
def test_any_generated_report_builds_safely_and_loses_nothing(doc):
    markdown = "\n\n".join(doc.parts) + "\n"
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "report.md"
        path.write_text(markdown, encoding="utf-8")
        try:
            page = checked_page(path)
        except GraphsiteError as exc:  # allowed: one line (and perhaps a hint), never a traceback
            assert "\n" not in exc.format_message().split("\n  hint:")[0]
            return
        assert checked_page(path).html == page.html, "byte-identical on rebuild"
    parser = html5lib.HTMLParser(strict=False)
    parser.parse(page.html)
    assert parser.errors == [], (markdown, parser.errors)
    soup = BeautifulSoup(page.html, "html.parser")
    seen = visible_words(page.html)
    assert in_order([*doc.seen, *doc.notes, *doc.references], seen), (markdown, seen)
    ids = [tag["id"] for tag in soup.find_all(id=True)]
    assert len(ids) == len(set(ids)), markdown
    anchors = set(ids) | {tag["name"] for tag in soup.find_all("a", attrs={"name": True})}
    broken = {a["href"] for a in soup.find_all("a", href=True)
              if a["href"].startswith("#") and a["href"][1:] not in anchors}
    warned = {w.message.split()[3] for w in page.report.warnings if w.code == "link-missing-fragment"}
    assert broken <= warned, (markdown, broken, warned)  # a link to no fragment is never silent
    assert _vocabulary(_independent_words(markdown)) <= _vocabulary(WORDS.findall(soup.body.get_text(" "))), \
        markdown
    _assert_inert(soup)


def _independent_words(markdown: str) -> list[str]:
    """Return the words a plain CommonMark renderer (markdown-it with raw HTML, none of graphsite's rules)
    shows for the report's body, read by an HTML parser: the reference for "no prose word lost"."""
    body = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.DOTALL)
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(body)
    return WORDS.findall(BeautifulSoup(rendered, "html.parser").get_text(" "))


def _vocabulary(found: list[str]) -> Counter[str]:
    return Counter(word for word in found if word in VOCABULARY)
