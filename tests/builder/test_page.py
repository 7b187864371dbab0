"""The default report's page, proven from its parsed HTML against facts read independently from the Markdown."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import yaml

from graphsite.builder.fonts import FACES
from graphsite.builder.section_summary import WORD_LIMIT
from graphsite.urls import problem
from graphsite.usecases.build import checked_page

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "content" / "graph-engineering.md"
SUBDOMAIN = "graph-eng-abc123"
# `[` then one or more `[N](url)` joined by commas: `[[1](u)]`, `[[3](u), [11](v)]`, `[[21](u), "a note"]`.
_GROUP = re.compile(r"\[(?:\[\d+\]\([^)\s]+\)(?:\s*[,;]\s*(?=\[\d+\]\())?)+")
_ONE = re.compile(r"\[(\d+)\]\(([^)\s]+)\)")


def _front_and_body() -> tuple[dict, str]:
    text = REPORT.read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def _outside_code(body: str) -> list[str]:
    """Return the body's lines with fenced code blocked out (fences of any length, backticks or tildes)."""
    lines, fence = [], None
    for line in body.split("\n"):
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if fence is None and marker:
            fence = marker.group(1)
            lines.append("")
        elif fence is not None:
            if marker and stripped.rstrip() == fence[0] * len(marker.group(1)) and len(marker.group(1)) >= len(fence):
                fence = None
            lines.append("")
        else:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return lines


def _sections(body: str) -> list[tuple[str, str, str, str]]:
    """Return (number, title, markdown without code, raw markdown) of every top-level `##` section."""
    lines, raw = _outside_code(body), body.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    result = []
    for start, end in zip(starts, [*starts[1:], len(lines)], strict=False):
        title = lines[start][3:].strip()
        match = re.match(r"(\d+(?:\.\d+)*)\.?\s+(.*)", title)
        number, text = (match.group(1), match.group(2)) if match else ("", title)
        result.append((number, text, "\n".join(lines[start + 1:end]), "\n".join(raw[start + 1:end])))
    return result


def _citations(markdown: str) -> list[tuple[int, str]]:
    return [(int(n), url) for group in _GROUP.finditer(markdown) for n, url in _ONE.findall(group.group(0))]


FRONT, BODY = _front_and_body()
SECTIONS = _sections(BODY)
REFERENCE_SECTION = [s for s in SECTIONS if "reference" in s[1].lower()][-1]
BODY_SECTIONS = [s for s in SECTIONS if s is not REFERENCE_SECTION]


def _text(element) -> str:
    return " ".join(element.get_text(" ").split())


# 1. Top ------------------------------------------------------------------------------------------------

def test_top_of_page(default_soup):
    header = default_soup.find("header", id="top")
    assert _text(header.find(class_="badge")) == FRONT["badge"]
    assert _text(header.find(class_="live")) == f"published at {SUBDOMAIN}"  # never "live": a copy outlives it
    assert _text(header.find(class_="kicker")) == FRONT["kicker"]
    assert [_text(h) for h in default_soup.find_all("h1")] == [FRONT["headline"]]
    assert _text(header.find(class_="lede")) == FRONT["lede"]
    assert default_soup.title.string == FRONT["title"]


def test_no_live_badge_without_subdomain():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(checked_page(REPORT).html, "html.parser")
    assert soup.find(class_="live") is None
    assert "graphsite teardown <subdomain>" in _text(soup.find(id="teardown"))


def test_each_rule_links_to_its_own_sub_section(default_soup):
    rules = default_soup.find(id="rules")
    items = rules.find("ol").find_all("li", recursive=False)
    assert [_text(li) for li in items] == FRONT["rules"]
    targets = [li.a["href"][1:] for li in items]
    assert len(set(targets)) == len(items), "seven rules, seven sub-sections"
    for rule, target in zip(FRONT["rules"], targets, strict=True):
        heading = default_soup.find(id=target)
        title = _text(heading).lower()
        assert heading.name == "h3" and title.startswith("7."), (rule, title)
        assert all(word in title for word in re.findall(r"[a-z]+", rule.lower()) if len(word) > 3), (rule, title)


def test_rules_fall_back_to_section_3_2_without_sub_sections(write_md):
    from bs4 import BeautifulSoup

    source = write_md("---\nrules:\n  - Boring nodes\n  - Budget in state\n---\n# T\n\n## 3. Rules\n\n"
                      "### 3.2 The rules\n\nText.\n\n### 3.3 Budget in state\n\nMore.\n")
    soup = BeautifulSoup(checked_page(source).html, "html.parser")
    assert [li.a["href"] for li in soup.find(id="rules").find_all("li")] == ["#32-the-rules", "#33-budget-in-state"]


# 2. Cards and ladder -------------------------------------------------------------------------------------

def test_one_card_per_floor_and_the_counter_frame(default_soup):
    cards = default_soup.find(id="cards").find_all("article", recursive=False)
    floors = FRONT["floors"]
    assert len(cards) == len(floors) + 1
    for card, floor in zip(cards, floors, strict=False):
        assert _text(card.find(class_="card-label")) == floor["label"]
        assert _text(card.find(class_="card-year")) == str(floor["year"])
        assert _text(card.find(class_="card-title")) == floor["title"]
        assert _text(card.find(class_="card-definition")) == floor["definition"]
        critique = card.find(class_="card-critique")
        assert ([_text(li) for li in critique.find_all("li")] if critique else []) == (floor.get("critique") or [])
    counter = cards[-1]
    frame = FRONT["counter_frame"]
    assert _text(counter.find("blockquote")) == frame["quote"]
    who = _text(counter.find(class_="card-who"))
    assert frame["who"] in who and frame["where"] in who and str(frame["date"]) in who


def test_ladder_svg_is_drawn_from_the_cards(default_soup):
    svg = default_soup.find(id="ladder").find("svg")
    steps = svg.find_all("g", class_="step")
    assert [_text(step.find("text", class_="step-title")) for step in steps] == \
        [f["title"] for f in FRONT["floors"]]
    heights = [float(step.rect["height"]) for step in steps]
    assert heights == sorted(heights) and len(set(heights)) == len(heights), "each floor stands higher"
    assert not svg.find_all(["image", "use", "script", "foreignObject"])
    assert not [tag for tag in svg.find_all(True) if tag.get("href") or tag.get("xlink:href")]


# 3. Sections ------------------------------------------------------------------------------------------------

def test_every_section_with_its_own_number(default_soup):
    rendered = default_soup.find(id="report").find_all("section", recursive=False)
    assert len(rendered) == len(BODY_SECTIONS)
    for section, (number, title, _, _) in zip(rendered, BODY_SECTIONS, strict=False):
        heading = section.find("h2")
        index = _text(heading.find(class_="idx"))
        assert index == (f"§{number}" if number else "§")
        assert _text(heading).startswith(f"{index} {title}"[:40].strip())


def test_source_line_names_citations_in_order_of_first_use(default_soup):
    rendered = default_soup.find(id="report").find_all("section", recursive=False)
    for section, (_, title, markdown, _) in zip(rendered, BODY_SECTIONS, strict=False):
        expected = list(dict.fromkeys(n for n, _ in _citations(markdown)))
        source = section.find(class_="source")
        if not expected:
            assert _text(source) == "Source: no sources cited in this section", title
            continue
        assert _text(source).startswith("Source:")
        assert [int(a.get_text().strip("[]")) for a in source.find_all("a")] == expected, title
        for a in source.find_all("a"):
            assert a["href"] == f"#ref-{a.get_text().strip('[]')}"


def test_summary_is_the_first_paragraph_and_the_rest_is_folded(default_soup):
    from bs4 import BeautifulSoup
    from markdown_it import MarkdownIt

    plain = MarkdownIt("commonmark").enable("table")
    plain.validateLink = lambda url: True
    # Citations print as [1][2] where the Markdown reads [[1](u), [2](v)]; compare the words, not that punctuation.
    def squash(text):
        return re.sub(r"[\s\[\],]|\(\S+?://\S+?\)", "", text)
    rendered = default_soup.find(id="report").find_all("section", recursive=False)
    for section, (_, title, _, markdown) in zip(rendered, BODY_SECTIONS, strict=False):
        blocks = BeautifulSoup(plain.render(markdown.strip()), "html.parser").find_all(recursive=False)
        while blocks and blocks[-1].name == "hr":
            blocks.pop()  # a closing rule separates sections; the page draws a border instead
        summary = section.find(class_="summary")
        details = section.find("details")
        if blocks and blocks[0].name == "p" and not _text(blocks[0]).endswith(":"):
            # The first paragraph, whole when it is short, else cut at a sentence within the word limit.
            assert len(summary.find_all("p")) == 1
            if summary.find(class_="excerpt") is None:
                assert squash(_text(summary)) == squash(_text(blocks[0])), title
            else:
                assert _text(summary).endswith(" …"), title  # a cut summary says so
                assert squash(_text(blocks[0])).startswith(squash(_text(summary)).removesuffix("…")), title
                assert len(_text(summary).split()) <= WORD_LIMIT and _text(summary)[-1] in ".!?…", title
        if len(blocks) > 1:
            assert details is not None and not details.has_attr("open"), title
            assert details.summary is not None


def test_ids_are_unique_and_every_heading_has_a_permalink(default_soup):
    ids = [tag["id"] for tag in default_soup.find_all(id=True)]
    assert len(ids) == len(set(ids))
    for heading in default_soup.find("main").find_all(["h2", "h3", "h4", "h5", "h6"]):
        if heading.find_parent(id="cards") or heading.find_parent(id="rules") or heading.find_parent(id="toc"):
            continue
        if heading.find_parent(id="notes") or heading.find_parent(id="references"):
            continue
        assert heading.get("id"), heading
        assert heading.find("a", class_="permalink")["href"] == f"#{heading['id']}"


def test_table_of_contents_reaches_every_section(default_soup):
    links = [a["href"] for a in default_soup.find(id="toc").find_all("a")]
    section_ids = [s.find("h2")["id"] for s in default_soup.find(id="report").find_all("section", recursive=False)]
    assert links[: len(section_ids)] == [f"#{i}" for i in section_ids]
    assert "#references" in links and "#teardown" in links
    for href in links:
        assert default_soup.find(id=href[1:]) is not None


def test_cross_references_link_to_the_numbered_heading(default_soup):
    xrefs = default_soup.find_all("a", class_="xref")
    assert {a.get_text() for a in xrefs} >= {"§3.2", "§4", "§10", "§12"}
    for a in xrefs:
        target = default_soup.find(id=a["href"][1:])
        number = a.get_text()[1:]
        assert re.match(rf"(§)?{re.escape(number)}\.?\s", _text(target)), (a, _text(target))


# 4. Citations and references ---------------------------------------------------------------------------------

def _public(url: str) -> bool:
    return url.startswith(("http://", "https://")) and problem(url) is None


def _reference_urls() -> dict[str, str]:
    return dict(re.findall(r"^(\d+)\. .*?(\S+://\S+)\s*$", REFERENCE_SECTION[2], re.MULTILINE))


def test_inline_citations_follow_the_reference_list(default_soup):
    expected = [c for _, _, markdown, _ in BODY_SECTIONS for c in _citations(markdown)]
    references = _reference_urls()
    cites = [sup for sup in default_soup.find(id="report").find_all("sup", class_="cite")
             if sup.find_parent(class_="excerpt") is None]  # a summary's shortened copy repeats its citations
    assert len(cites) == len(expected)
    for sup, (number, _inline_url) in zip(cites, expected, strict=True):
        assert sup.a.get_text() == f"[{number}]"
        url = references[str(number)]
        if _public(url):
            assert sup.a["href"] == url and "cite-out" in sup.a["class"], "the reference's URL, not the inline one"
        else:
            assert sup.a["href"] == f"#ref-{number}", "a reference without a public URL: its entry"
        assert sup.a["aria-label"].startswith(f"Reference {number}: ")


def test_reference_footer(default_soup):
    entries = re.findall(r"^(\d+)\. .*?(\S+://\S+)\s*$", REFERENCE_SECTION[2], re.MULTILINE)
    footer = default_soup.find(id="references")
    items = footer.find_all("li")
    assert len(items) == len(entries) >= 60
    cited = {n: set() for n, _ in entries}
    for section in default_soup.find(id="report").find_all("section", recursive=False):
        for sup in section.find_all("sup", class_="cite"):
            cited.setdefault(sup.a.get_text().strip("[]"), set()).add(section.find("h2")["id"])
    for item, (number, url) in zip(items, entries, strict=False):
        assert item["id"] == f"ref-{number}" and item["value"] == number
        link = item.select_one(":scope > a")
        if _public(url):
            assert link["href"] == url and _text(item.find(class_="ref-url")) == url, "printed in full"
        else:
            assert link is None and item.find(class_="ref-note") is not None
            assert url not in str(item) and "file:" not in str(item), "no private path on a public page"
        backlinks = {a["href"][1:] for a in item.select(".cited-in a")}
        assert backlinks == cited.get(number, set()), number


def test_no_link_to_a_placeholder_or_private_url(default_soup):
    for link in default_soup.find_all("a", href=True):
        href = link["href"]
        if not href.startswith(("#", "mailto:")):
            assert _public(href), href
    assert default_soup.select("span.neutralised"), "the placeholder links of the report are text"


# 5. Footer ---------------------------------------------------------------------------------------------------

def test_footer_badge_and_teardown(default_soup):
    badge = default_soup.find("footer").find("a", class_="hosted")
    assert _text(badge) == "Hosted on Dokploy / Swarm / Traefik / Cloudflare"
    assert badge["href"] == "#teardown"
    teardown = default_soup.find(id="teardown")
    assert f"graphsite teardown {SUBDOMAIN}" in [_text(code) for code in teardown.find_all("code")]


# 6-7. Theme, fonts, JS, CSP ----------------------------------------------------------------------------------

def _csp(soup) -> dict[str, list[str]]:
    meta = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    directives = [part.split() for part in meta["content"].split(";") if part.strip()]
    return {d[0]: d[1:] for d in directives}


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_theme_colours_are_in_the_inline_stylesheet(default_soup):
    css = default_soup.find_all("style")[-1].string
    for colour in ("#0a0e17", "#1f2937", "#0f172a", "#7dd3fc"):
        assert colour in css
    assert "@media print" in css and "details-content" in css


def test_embedded_fonts_by_default_google_and_system_on_request(default_soup):
    assert not default_soup.find_all("link", rel="stylesheet"), "no request for a font by default"
    fonts = default_soup.find("style").string
    assert {"gs-sans", "gs-serif", "gs-mono"} <= set(re.findall(r"font-family:([-a-z]+)", fonts))
    assert fonts.count("url(data:font/woff2;base64,") == fonts.count("@font-face") == len(FACES)
    assert _csp(default_soup)["font-src"] == ["data:"]
    assert _hash(fonts) in _csp(default_soup)["style-src"]
    from bs4 import BeautifulSoup

    google = BeautifulSoup(checked_page(REPORT, fonts="google").html, "html.parser")
    links = [link["href"] for link in google.find_all("link", rel="stylesheet")]
    assert len(links) == 1 and links[0].startswith("https://fonts.googleapis.com/css2?")
    for family in ("Inter", "IBM+Plex+Mono", "Source+Serif+4"):
        assert f"family={family}" in links[0]
    assert _csp(google)["font-src"] == ["https://fonts.gstatic.com"]
    system = BeautifulSoup(checked_page(REPORT, fonts="system").html, "html.parser")
    assert not system.find_all("link", rel="stylesheet") and len(system.find_all("style")) == 1
    assert len(system.find_all("script")) == len(google.find_all("script")) == 1, "no font loader without fonts"
    assert "font-src" not in _csp(system)
    assert "https://fonts.googleapis.com" not in _csp(system)["style-src"]


def test_embedded_fonts_hold_only_the_page_s_characters(default_soup):
    import io

    from fontTools.ttLib import TTFont

    text = set(default_soup.find("main").get_text())
    face = re.search(r"base64,([A-Za-z0-9+/=]+)", default_soup.find("style").string).group(1)
    font = TTFont(io.BytesIO(base64.b64decode(face)))
    covered = {chr(code) for code in font.getBestCmap()}
    assert {c for c in text if c.isascii() and c.isprintable()} <= covered
    assert "Ж" not in covered and len(covered) < 250, "a subset, not the whole Latin file"


def test_meta_description_social_cards_and_robots(default_soup):
    def meta(**attrs):
        return default_soup.find("meta", attrs=attrs)["content"]
    description = meta(name="description")
    assert description.startswith("After prompt engineering (2023)") and len(description) <= 160
    assert meta(property="og:description") == meta(name="twitter:description") == description
    assert meta(property="og:title") == meta(name="twitter:title") == FRONT["headline"]
    assert meta(name="robots") == "noindex, nofollow", "previews are not indexed by default"


def test_canonical_url_and_indexing_setting(tmp_path):
    from bs4 import BeautifulSoup

    from graphsite.config import load_config

    config_file = tmp_path / "graphsite.toml"
    config_file.write_text('[site]\ndomain = "pages.example"\nindexable = true\n', encoding="utf-8")
    soup = BeautifulSoup(checked_page(REPORT, subdomain=SUBDOMAIN, config=load_config(config_file)).html,
                         "html.parser")
    url = f"https://{SUBDOMAIN}.pages.example/"
    assert soup.find("link", rel="canonical")["href"] == url
    assert soup.find("meta", property="og:url")["content"] == url
    assert soup.find("meta", attrs={"name": "robots"})["content"] == "index, follow"


def test_small_inline_scripts_and_a_strict_csp(default_soup, default_page):
    # The page's script at the end of the body; with embedded fonts, a one-line loader after their style sheet.
    fonts_loader, page_script = default_soup.find_all("script")
    assert not fonts_loader.has_attr("src") and not page_script.has_attr("src")
    assert fonts_loader.find_previous("style").string.startswith("@font-face")
    loader = "document.fonts.forEach(function (face) { face.load().catch(function () {}); });"
    assert fonts_loader.string.strip().endswith(loader)
    js = page_script.string
    assert len(js.encode()) == default_page.js_bytes <= 5 * 1024
    csp = _csp(default_soup)
    assert csp["default-src"] == ["'none'"]
    assert csp["script-src"] == [_hash(fonts_loader.string), _hash(js)]
    assert [_hash(style.string) for style in default_soup.find_all("style")] == csp["style-src"]
    assert not any("unsafe" in value for values in csp.values() for value in values)
    assert csp["base-uri"] == ["'none'"] and csp["form-action"] == ["'none'"]


def test_identical_input_gives_identical_bytes(default_page):
    again = checked_page(REPORT, subdomain=SUBDOMAIN)
    assert again.html == default_page.html and again.sha256 == default_page.sha256


def test_at_least_thirty_unique_outbound_urls(default_soup, default_page):
    hrefs = {a["href"] for a in default_soup.find("main").find_all("a", href=True)
             if a["href"].startswith(("http://", "https://"))}
    assert len(hrefs) >= 30
    assert {url for url in default_page.report.links if _public(url)} == hrefs


def test_a_section_without_a_first_paragraph_shows_its_outline(default_soup):
    for section in default_soup.find(id="report").find_all("section", recursive=False):
        if section.find(class_="summary") is not None:
            assert section.find(class_="outline") is None
            continue
        details = section.find("details")
        subsections = [h["id"] for h in details.find_all("h3")]
        assert subsections, section.h2
        assert [a["href"] for a in section.find(class_="outline").find_all("a")] == [f"#{i}" for i in subsections]
