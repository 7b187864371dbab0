"""The page's pictures in docs/builder.md: the default report's first screen at a phone's, a tablet's and a wide
screen's width (375, 768, 1440 px) in Debian's Chromium, and the first two pages of its `--pdf`.

Run after changing theme/:  .venv/bin/python scripts/page_screenshots.py [docs/images]
and commit what changed under docs/images/."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from graphsite.builder.build import page_from_source, write_page
from graphsite.builder.pdf import chromium_path, write_pdf

WIDTHS = ((375, 812), (768, 1024), (1440, 900))
PDF_PAGES = 2


def pictures(report: Path, folder: Path) -> list[Path]:
    """Write `page-WIDTH.png` per width and `page-print.pdf` (the PDF's first pages) into `folder`; return them."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="graphsite-pictures-") as temporary:
        page = write_page(page_from_source(report, subdomain="graph-eng-abc123"), Path(temporary))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=["--headless", "--no-sandbox"])
            try:
                for width, height in WIDTHS:
                    tab = browser.new_page(viewport={"width": width, "height": height})
                    tab.goto(page.as_uri())
                    tab.evaluate("document.fonts.ready")
                    target = folder / f"page-{width}.png"
                    tab.screenshot(path=str(target))
                    written.append(target)
                    tab.close()
            finally:
                browser.close()
        reader = PdfReader(write_pdf(page, Path(temporary) / "report.pdf"))
        writer = PdfWriter()
        for number in range(min(PDF_PAGES, len(reader.pages))):
            writer.add_page(reader.pages[number])
        writer.add_metadata({"/Title": str(reader.metadata.title if reader.metadata else "")})
        target = folder / "page-print.pdf"
        with target.open("wb") as handle:
            writer.write(handle)
        written.append(target)
    return written


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")
    for path in pictures(Path(__file__).resolve().parents[1] / "content" / "graph-engineering.md", folder):
        print(path)
