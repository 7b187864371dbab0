"""Fixtures of the builder tests: the default report built once, parsed pages, a CLI runner, Markdown files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner, Result

from graphsite.cli import main
from graphsite.usecases.build import BuiltPage, checked_page

REPO = Path(__file__).resolve().parents[2]
DEFAULT_REPORT = REPO / "content" / "graph-engineering.md"
CORPUS = REPO / "tests" / "corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SUBDOMAIN = "graph-eng-abc123"


def parse_html(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


@pytest.fixture(scope="session")
def default_page() -> BuiltPage:
    """The embedded default report, built with a subdomain."""
    return checked_page(DEFAULT_REPORT, subdomain=SUBDOMAIN)


@pytest.fixture(scope="session")
def default_soup(default_page: BuiltPage) -> BeautifulSoup:
    return parse_html(default_page.html)


@pytest.fixture()
def run_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Run `graphsite …` in-process from an empty folder with no configuration; stdout and stderr apart."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)

    def run(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    return run


@pytest.fixture()
def write_md(tmp_path: Path) -> Callable[..., Path]:
    """Write Markdown (text or bytes) into tmp_path and return its path."""
    def write(content: str | bytes, name: str = "report.md") -> Path:
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path
    return write
