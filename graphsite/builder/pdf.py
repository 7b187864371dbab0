"""`graphsite build --pdf`: the built page printed to report.pdf by headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright), with the page's print styles: every accordion open, the report's
title and page numbers in the margins (CSS @page margin boxes), the reference list at the end."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from graphsite.atomic import write_atomic
from graphsite.errors import BuildError

CHROMIUM_ENV = "GRAPHSITE_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
TIMEOUT_MS = 60_000


def chromium_path() -> str:
    """Return the Chromium to print with: $GRAPHSITE_CHROMIUM, else /usr/bin/chromium; BuildError if absent."""
    configured = os.environ.get(CHROMIUM_ENV, "").strip()
    candidate = configured or DEFAULT_CHROMIUM
    found = shutil.which(candidate)
    if not found:
        where = f"{CHROMIUM_ENV}={configured}" if configured else DEFAULT_CHROMIUM
        raise BuildError(f"--pdf: no Chromium at {where}",
                         hint="install Debian's chromium (apt-get install chromium), or point "
                              f"{CHROMIUM_ENV} at a Chromium or Chrome executable")
    return found


def write_pdf(page_path: Path, pdf_path: Path) -> Path:
    """Print the page at `page_path` to `pdf_path` (written atomically) and return `pdf_path`."""
    executable = chromium_path()
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise BuildError("--pdf needs Playwright, which is not installed",
                         hint="pip install 'graphsite[pdf]'") from None
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=["--headless", "--no-sandbox"])
            try:
                tab = browser.new_page()
                tab.goto(Path(page_path).resolve().as_uri(), wait_until="load", timeout=TIMEOUT_MS)
                tab.evaluate("document.fonts.ready")
                tab.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                # The page's own @page rules set the margins and print the title and page numbers in them,
                # in the page's embedded fonts (Chromium's header templates cannot use them).
                data = tab.pdf(format="A4", print_background=False, outline=True, tagged=True)
            finally:
                browser.close()
    except PlaywrightError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BuildError(f"--pdf: Chromium ({executable}) could not print {page_path}: {first_line}",
                         hint=f"check that {executable} starts (`{executable} --headless --version`)") from None
    try:
        write_atomic(pdf_path, data)
    except OSError as exc:
        raise BuildError(f"{pdf_path}: cannot write the PDF: {exc.strerror}",
                         hint="choose a writable --out directory") from None
    return pdf_path
