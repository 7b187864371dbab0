"""Fixtures for the embedded default report: the seed it was restored from and the restored file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
SEED = HERE / "seed" / "000_cff21c558dc60a40.txt"
REPORT = HERE.parents[1] / "content" / "graph-engineering.md"

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


@pytest.fixture(scope="session")
def seed_lines() -> list[str]:
    """The seed's 38 lines: 1–37 the page top, 38 the Markdown with its line breaks lost."""
    lines = SEED.read_text(encoding="utf-8").split("\n")
    assert len(lines) >= 38, f"{SEED}: expected 38 lines, found {len(lines)}"
    return lines


@pytest.fixture(scope="session")
def report_text() -> str:
    return REPORT.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def front_yaml(report_text: str) -> str:
    match = _FRONT.match(report_text)
    assert match, f"{REPORT}: no YAML front matter between two '---' lines at the top"
    return match.group(1)


@pytest.fixture(scope="session")
def front(front_yaml: str) -> dict:
    data = yaml.safe_load(front_yaml)
    assert isinstance(data, dict), "front matter is not a mapping"
    return data


@pytest.fixture(scope="session")
def body(report_text: str) -> str:
    """The Markdown after the front matter."""
    match = _FRONT.match(report_text)
    assert match
    return report_text[match.end():]
