"""The default report's rendered structure, pinned as a reviewable JSON summary of the parsed page.

Regenerate after an intended change with `GRAPHSITE_UPDATE_GOLDEN=1 pytest tests/builder/test_golden.py`
and review the diff of tests/builder/golden/default-report.json.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden" / "default-report.json"


def _text(element) -> str:
    return " ".join(element.get_text(" ").split()) if element is not None else ""


def structure(soup) -> dict:
    """Return what a reader sees of the page, as data: top, cards, rules, sections, references, footer."""
    main = soup.find("main")
    sections = []
    for section in soup.find(id="report").find_all("section", recursive=False):
        details = section.find("details")
        sections.append({
            "index": _text(section.h2.find(class_="idx")),
            "id": section.h2["id"],
            "title": _text(section.h2).removeprefix(_text(section.h2.find(class_="idx"))).rstrip(" #").strip(),
            "source": [a.get_text() for a in section.select(".source a")],
            "summary_words": len(_text(section.find(class_="summary")).split()),
            "outline": [a["href"] for a in section.select(".outline a")],
            "detail_headings": [h["id"] for h in details.find_all(["h3", "h4", "h5", "h6"])] if details else [],
            "detail_blocks": sorted({tag.name for tag in details.find(class_="detail-body").find_all(recursive=False)})
            if details else [],
            "citations": len(section.find_all("sup", class_="cite")),
        })
    csp = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    return {
        "title": soup.title.string,
        "h1": _text(soup.h1),
        "badge": _text(soup.find(class_="badge")),
        "live": _text(soup.find(class_="live")),
        "kicker": _text(soup.find(class_="kicker")),
        "lede_words": len(_text(soup.find(class_="lede")).split()),
        "cards": [[_text(card.find(class_="card-label")), _text(card.find(class_="card-year")),
                   _text(card.find(class_="card-title")), len(card.select(".card-critique li"))]
                  for card in soup.find(id="cards").find_all("article")],
        "rules": [[_text(li), li.a["href"] if li.a else ""] for li in soup.find(id="rules").find_all("li")],
        "ladder": [_text(step.find(class_="step-title")) for step in soup.select("#ladder g.step")],
        "toc": [a["href"] for a in soup.find(id="toc").find_all("a")],
        "sections": sections,
        "notes": len(soup.select("#notes li")),
        "references": [[li.get("id", ""), (li.select_one(":scope > a") or {}).get("href") or "(not public)",
                        [a["href"] for a in li.select(".cited-in a")]]
                       for li in soup.find(id="references").find_all("li")],
        "teardown": [_text(code) for code in soup.find(id="teardown").find_all("code")],
        "csp": [part.split()[0] for part in csp.split(";")],
        "external_hrefs": len({a["href"] for a in main.find_all("a", href=True) if a["href"].startswith("http")}),
    }


def test_default_report_structure_matches_golden(default_soup):
    actual = json.dumps(structure(default_soup), indent=1, ensure_ascii=False, sort_keys=False) + "\n"
    if os.environ.get("GRAPHSITE_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(actual, encoding="utf-8")
        pytest.skip(f"rewrote {GOLDEN.name}: review the diff; a rewrite proves nothing")
    assert GOLDEN.exists(), f"no golden file: run with GRAPHSITE_UPDATE_GOLDEN=1 to create {GOLDEN}"
    assert actual == GOLDEN.read_text(encoding="utf-8"), \
        "the page's structure changed: review, then regenerate with GRAPHSITE_UPDATE_GOLDEN=1"
