"""The `graphsite links` verb: build the report in memory, then check every outbound URL of the page."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from graphsite.citations.live import check_links
from graphsite.citations.results import LinkReport

if TYPE_CHECKING:
    from graphsite.config import Config


def check_report_links(source: Path, config: Config, *, use_cache: bool = True,
                       progress: bool = True) -> LinkReport:
    """Return the live verdict on every outbound http(s) URL the page built from `source` links to."""
    from graphsite.builder.build import build_page

    page = build_page(Path(source), config=config)
    return check_links(page.report.links, config, use_cache=use_cache, progress=progress)
