"""Where graphsite finds its own files: the theme, the embedded report, the deploy defaults, the schemas.

In a source checkout they are the top-level folders `theme/`, `content/`, `deploy/`; in an installed
wheel they are packaged under `graphsite/_data/`. Look in the wheel first, then the checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_DATA = PACKAGE_DIR / "_data"
_CHECKOUT = PACKAGE_DIR.parent

DEFAULT_REPORT_NAME = "graph-engineering.md"


def data_dir(name: str) -> Path:
    """Return the directory `name` (theme, content, deploy) from the wheel or the source checkout."""
    for base in (_DATA, _CHECKOUT):
        candidate = base / name
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"graphsite's {name}/ folder is missing from the installation ({_DATA})")


def theme_dir() -> Path:
    return data_dir("theme")


def packaged_report() -> Path:
    return data_dir("content") / DEFAULT_REPORT_NAME


def default_source(cwd: Path | None = None) -> Path:
    """Return `content/graph-engineering.md` in the working directory, else the packaged copy."""
    local = (cwd or Path.cwd()) / "content" / DEFAULT_REPORT_NAME
    return local if local.is_file() else packaged_report()


def user_cache_dir(*parts: str) -> Path:
    """Return graphsite's cache directory `parts` under the user's: $XDG_CACHE_HOME/graphsite, else
    ~/.cache/graphsite. A relative (or empty) XDG_CACHE_HOME is ignored, as the XDG specification says: the
    cache would otherwise follow the working directory (and the compiled templates are code)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root.joinpath("graphsite", *parts)


def schema_path(name: str) -> Path:
    """Return a JSON schema shipped in graphsite/schemas/ (see its SOURCES.md)."""
    return PACKAGE_DIR / "schemas" / name
