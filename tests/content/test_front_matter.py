"""The front matter holds what the hosted page's top shows, parsed from the seed's lines 1–37, not retyped."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

KEYS = {"title", "badge", "kicker", "headline", "lede", "prefix", "floors", "counter_frame", "rules"}
CARD_KEYS = {"label", "year", "title", "definition", "critique"}


def _paragraphs(lines: list[str]) -> list[list[str]]:
    groups: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            groups[-1].append(line)
        elif groups[-1]:
            groups.append([])
    return [group for group in groups if group]


def _page_top(seed_lines: list[str]) -> dict:
    """The seed's page top as data: badge, live subdomain, kicker, headline, lede, cards, counter-frame."""
    badge, live, kicker, _, headline, _, lede = seed_lines[:7]
    cards = []
    blocks = _paragraphs(seed_lines[8:35])
    assert len(blocks) == 12, f"expected 4 cards of 3 paragraphs in seed lines 9-35, got {len(blocks)} paragraphs"
    for head, title, definition in zip(blocks[0::3], blocks[1::3], blocks[2::3], strict=False):
        label, year = head
        cards.append({"label": label, "year": year, "title": title[0], "definition": definition[0]})
    frame = re.fullmatch(r'counter-frame: "(.+)" — (.+), (.+) · (.+)', seed_lines[36])
    assert frame, f"seed line 37 is not a counter-frame line: {seed_lines[36]!r}"
    subdomain = re.fullmatch(r"live (.+)-[0-9a-f]{6}", live)
    assert subdomain, f"seed line 2 is not 'live <prefix>-<6 hex>': {live!r}"
    return {
        "badge": badge,
        "prefix": subdomain.group(1),
        "kicker": kicker,
        "headline": headline,
        "lede": lede,
        "floors": cards,
        "counter_frame": dict(zip(("quote", "who", "where", "date"), frame.groups(), strict=False)),
    }


def _plain(markdown: str) -> str:
    """The Markdown's prose with emphasis and code markers dropped and whitespace collapsed."""
    return " ".join(re.sub(r"[*`]", "", markdown).split())


def test_front_matter_has_exactly_the_page_top_keys_with_string_values(front):
    assert set(front) == KEYS | {"accept"}  # accept: the findings the author keeps (tests/citations/)
    for key in KEYS - {"floors", "counter_frame", "rules"}:
        assert isinstance(front[key], str) and front[key], key
    assert isinstance(front["counter_frame"], dict)
    assert all(isinstance(value, str) for value in front["counter_frame"].values())
    assert isinstance(front["rules"], list) and all(isinstance(rule, str) for rule in front["rules"])
    assert len(front["floors"]) == 4
    for card in front["floors"]:
        assert set(card) == CARD_KEYS
        assert all(isinstance(card[key], str) for key in CARD_KEYS - {"critique"})
        assert isinstance(card["critique"], list) and all(isinstance(line, str) for line in card["critique"])


def test_page_top_equals_the_seed(front, seed_lines):
    top = _page_top(seed_lines)
    for key in ("badge", "prefix", "kicker", "headline", "lede", "counter_frame"):
        assert front[key] == top[key], key
    cards = [{key: card[key] for key in CARD_KEYS - {"critique"}} for card in front["floors"]]
    assert cards == top["floors"]


def test_title_is_the_reports_own_heading(front, body):
    first_heading = next(line for line in body.splitlines() if line.startswith("# "))
    assert front["title"] == first_heading[2:].strip()


def _strong_lead(inline) -> str:
    """The text of the first **bold** run of an inline token."""
    children = inline.children
    opened = next(i for i, child in enumerate(children) if child.type == "strong_open")
    return children[opened + 1].content


def test_rules_are_the_short_names_of_section_3_2(front, body):
    tokens = MarkdownIt("gfm-like", {"linkify": False}).parse(body)
    start = next(
        i for i, t in enumerate(tokens)
        if t.type == "inline" and t.content.startswith("3.2 ") and tokens[i - 1].type == "heading_open"
    )
    end = next(i for i in range(start, len(tokens)) if tokens[i].type == "heading_open")
    items = [i for i in range(start, end) if tokens[i].type == "list_item_open"]
    names = [_strong_lead(tokens[i + 2]).rstrip(".") for i in items]
    assert len(names) == 7
    assert names == front["rules"]


def test_critique_lines_are_text_the_report_already_says(front, body):
    plain = _plain(body)
    for card in front["floors"]:
        for line in card["critique"]:
            assert line in plain, f"{card['label']}: critique not found in the report: {line!r}"
