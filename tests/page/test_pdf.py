"""`graphsite build --pdf`: Debian's Chromium prints the page with its print styles; a missing Chromium is a
one-line error that says what to install."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from graphsite.cli import main

from .conftest import REPORT

pytestmark = pytest.mark.browser


def _build(tmp_path, *args, env=None):
    result = CliRunner().invoke(main, ["build", str(REPORT), "--out", str(tmp_path), *args], env=env,
                                catch_exceptions=False)
    return result


def test_pdf_has_the_title_on_page_one_every_section_page_numbers_and_the_references(tmp_path):
    from pypdf import PdfReader

    result = _build(tmp_path, "--pdf", env={"GRAPHSITE_CHROMIUM": ""})
    assert result.exit_code == 0, result.output
    assert f"Printed {tmp_path / 'report.pdf'}" in result.output
    reader = PdfReader(tmp_path / "report.pdf")
    pages = [" ".join(page.extract_text().split()) for page in reader.pages]
    assert len(pages) >= 10
    assert reader.metadata.title == "Graph Engineering — A Decision-Ready Plan for July 2026"
    assert "The fourth floor: graph engineering" in pages[0]
    text = " ".join(pages)
    sections = re.findall(r"^## (?:(\d+)\. )?(.+)$", REPORT.read_text(encoding="utf-8"), re.MULTILINE)
    numbered = [(number, title) for number, title in sections if number]
    assert len(numbered) >= 14
    for number, title in numbered:
        words = " ".join(title.split()[:3]).replace("`", "")
        assert f"§{number} {words}" in text, (number, title)
    for index, page in enumerate(pages, start=1):  # in the margins, printed before or after the page's text
        assert f"{index} / {len(pages)}" in page, f"page {index} has no page number"
        assert reader.metadata.title in page, f"page {index} has no title"
    assert "https://arxiv.org/abs/2604.11378" in text, "reference URLs print in full"
    assert "Read §" not in text, "accordions print open, without their toggles"


def test_pdf_without_chromium_is_a_one_line_error_and_the_page_is_still_written(tmp_path):
    result = _build(tmp_path, "--pdf", env={"GRAPHSITE_CHROMIUM": str(tmp_path / "no-chromium")})
    assert result.exit_code == 1
    assert f"Error: --pdf: no Chromium at GRAPHSITE_CHROMIUM={tmp_path / 'no-chromium'}" in result.output
    assert "apt-get install chromium" in result.output and "Traceback" not in result.output
    assert (tmp_path / "index.html").is_file() and not (tmp_path / "report.pdf").exists()
