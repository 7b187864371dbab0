"""Front matter in the ecosystem's words: the keys Pandoc, Quarto, Hugo, Jekyll and MkDocs authors already write
fill the page's top and meta tags when graphsite's own keys are absent, and are never reported as unused."""

from __future__ import annotations

from bs4 import BeautifulSoup

from graphsite.usecases.build import checked_page

PANDOC = """---
title: "Graphs at scale"
subtitle: "A field guide"
description: "What to build first when a team outgrows one database."
author:
  - name: Ada Lovelace
  - Grace Hopper
date: 2026-07-01
tags: [graphs, storage]
---

## 1. Why

Text [[1](https://example.org/a)].

## References

1. Source — https://example.org/a
"""


def _page(tmp_path, text: str):
    source = tmp_path / "report.md"
    source.write_text(text, encoding="utf-8")
    page = checked_page(source, fonts="system")
    return page, BeautifulSoup(page.html, "html.parser")


def test_pandoc_and_hugo_keys_fill_the_page_top_and_meta_tags(tmp_path):
    page, soup = _page(tmp_path, PANDOC)
    assert soup.find("h1").get_text(strip=True) == "Graphs at scale" and page.title == "Graphs at scale"
    assert soup.select_one(".lede").get_text(strip=True) == "What to build first when a team outgrows one database."
    assert soup.find("meta", attrs={"name": "description"})["content"] == \
        "What to build first when a team outgrows one database."
    assert soup.select_one(".kicker").get_text(strip=True) == "graphs · storage"
    assert soup.select_one(".byline").get_text(" ", strip=True) == "By Ada Lovelace, Grace Hopper · 2026-07-01"
    assert not [w for w in page.report.warnings if w.code == "front-matter-unused"]


def test_graphsite_s_own_keys_win(tmp_path):
    text = PANDOC.replace('subtitle: "A field guide"\n', 'subtitle: "A field guide"\nlede: "Our own lede."\n'
                          'kicker: "Brief"\n')
    _, soup = _page(tmp_path, text)
    assert soup.select_one(".lede").get_text(strip=True) == "Our own lede."
    assert soup.select_one(".kicker").get_text(strip=True) == "Brief"
    # the author's description is still the meta description
    assert soup.find("meta", attrs={"name": "description"})["content"].startswith("What to build first")


def test_a_subtitle_alone_is_the_lede_and_an_unknown_key_is_still_reported(tmp_path):
    page, soup = _page(tmp_path, "---\ntitle: T\nsubtitle: Only a subtitle\nlayout: post\n---\n\n## 1. A\n\nText.\n")
    assert soup.select_one(".lede").get_text(strip=True) == "Only a subtitle"
    assert [w.message for w in page.report.warnings if w.code == "front-matter-unused"] == \
        ["front matter key `layout` is not shown on the page"]


def test_a_document_without_any_title_takes_its_first_heading_never_its_file_name(tmp_path):
    page, soup = _page(tmp_path, "## 1. First things\n\nText.\n\n## 2. Second\n\nMore.\n")
    assert page.title == "1. First things"
    assert "report" not in soup.find("title").get_text()
