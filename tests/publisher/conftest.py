"""Fixtures of the publisher tests: a fixed plan for golden files, and the lab (see lab_support.py)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from graphsite.config import Config

GOLDEN = Path(__file__).parent / "golden"
NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=timezone.utc)
HTML = "<!doctype html><html><head><title>Graph engineering</title></head><body>live graph-eng-0a1b2c</body></html>"


def _golden(name: str, text: str) -> str:
    """Return the golden file `name`; with GRAPHSITE_UPDATE_GOLDEN=1, first rewrite it with `text`."""
    path = GOLDEN / name
    if os.environ.get("GRAPHSITE_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


@pytest.fixture
def golden():
    return _golden


@pytest.fixture
def sample():
    """A small page and the moment plans are made at."""
    return HTML, NOW


@pytest.fixture
def production() -> Config:
    return Config()


@pytest.fixture
def fixed_plan(production):
    import hashlib

    from graphsite.publisher.plan import make_plan

    sha = hashlib.sha256(HTML.encode()).hexdigest()
    return make_plan(production, "graph-eng-0a1b2c", html=HTML, sha256=sha, title="Graph engineering",
                     content="config", now=NOW, ttl=timedelta(days=7))
