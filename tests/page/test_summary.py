"""Summaries end at real sentence ends: initials, honorifics, abbreviations, dotted capitals, versions and
decimals are not sentence ends; a cut summary ends with an ellipsis; a list-only section names its first items."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from graphsite.builder.section_summary import WORD_LIMIT, is_sentence_end, summarise

_MD = MarkdownIt("commonmark")
FILLER = "More " + " ".join(["words"] * (WORD_LIMIT + 10))


def _summary(source: str) -> str:
    summary, _ = summarise(_MD.parse(source))
    return _MD.renderer.render(summary, _MD.options, {})


@pytest.mark.parametrize("text", [
    "Set by Josh C. Smith",
    "Ask Dr. Who",
    "Some tools, e.g. LangGraph",
    "That is, i.e. Temporal",
    "See pp. 4-7",
    "In vol. 3",
    "The U.S. Army",
    "Mr. and Mrs. Smith",
    "As J. R. R. Tolkien",
])
def test_an_abbreviation_is_not_a_sentence_end(text):
    ends = [i + 1 for i, ch in enumerate(text) if ch == "." and (i + 1 == len(text) or text[i + 1] == " ")]
    assert ends and not any(is_sentence_end(text, end) for end in ends), text


@pytest.mark.parametrize("text", ["It shipped in 2026.", "Done!", "It works. Then", "Ask Bob Smith.",
                                  "Version 3.11 shipped. Next"])
def test_a_real_sentence_end_is_one(text):
    end = next(i + 1 for i, ch in enumerate(text) if ch in ".!" and (i + 1 == len(text) or text[i + 1] == " "))
    assert is_sentence_end(text, end), text


def test_a_summary_with_initials_ends_at_the_real_sentence_end_with_an_ellipsis():
    first = ("The term was coined by Josh C. Simmons and Dr. A. B. Jones, e.g. in vol. 2 of the U.S. journal, "
             "pp. 4-7, for version 3.11 at 2.5 times the cost.")
    summary = _summary(f"{first} Second sentence follows here. {FILLER}.")
    assert "Josh C. Simmons and Dr. A. B. Jones, e.g. in vol. 2 of the U.S. journal, pp. 4-7" in summary
    assert summary.rstrip().endswith("Second sentence follows here. …</p>"), summary


def test_a_list_only_section_names_its_first_items():
    summary = _summary("- Alpha item\n- Beta item\n- Gamma item\n- Delta item\n")
    assert "Alpha item; Beta item; Gamma item; …" in summary and "Delta" not in summary
