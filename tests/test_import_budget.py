"""The import budget of `graphsite build` on a plain document (no front matter), proven in a fresh process: no
module of another command or of a feature the document does not use is imported, nor a template engine (the
page's markup is `builder/page.py`). A budget of imports, not a timed test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Imported by the build of a plain document, any of these is start-up time spent for nothing: YAML (front matter
# only), the publisher's clients (Docker, Cloudflare, HTTP), schema validation, password hashing, the browser,
# the network stack, the link checker and the lab; and Jinja2 (and MarkupSafe), which no build needs any more.
DENIED = ("jinja2", "markupsafe", "yaml", "docker", "cloudflare", "httpx", "httpcore", "requests", "urllib3",
          "jsonschema", "bcrypt", "playwright", "asyncio", "ssl", "socket", "fontTools.subset", "fontTools.ttLib",
          "graphsite.publisher", "graphsite_lab", "graphsite.citations.live", "graphsite.citations.checker",
          "graphsite.commands.deploy")
# Imported only by what needs them, so a warm build of a plain document (its font subsets cached) never does: json
# (--json), shutil with its bz2 and lzma (emptying a cache directory found open), idna (a name outside ASCII),
# random and secrets (the page's mark comes from os.urandom), tempfile.
LAZY = ("json", "shutil", "bz2", "lzma", "idna", "random", "secrets", "tempfile")

_PROBE = """
import sys
from graphsite.cli import main
main(["-q", "build", sys.argv[1], "--out", sys.argv[2]], standalone_mode=False)
modules = sorted(sys.modules)
import json
print(json.dumps({"modules": modules}))
"""


def _build(tmp_path: Path, source: Path) -> dict[str, object]:
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", _PROBE, str(source), str(tmp_path / "site")], capture_output=True,
                            text=True, env=environment, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    answer: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


def _denied(modules: object, denied: tuple[str, ...] = DENIED) -> list[str]:
    assert isinstance(modules, list)
    return [name for name in modules if name in denied or name.startswith(tuple(f"{d}." for d in denied))]


def test_a_plain_document_imports_nothing_it_does_not_use(tmp_path: Path) -> None:
    source = tmp_path / "plain.md"
    source.write_text("# A plain note\n\nOne paragraph with a [link](https://example.org/).\n", encoding="utf-8")
    first = _build(tmp_path, source)
    # the first build subsets the embedded fonts (fontTools), later ones read the subsets from the cache
    assert [name for name in _denied(first["modules"]) if not name.startswith("fontTools")] == []
    second = _build(tmp_path, source)
    assert _denied(second["modules"], DENIED + LAZY) == []


def test_the_budget_sees_an_import(tmp_path: Path) -> None:
    """The probe is honest: front matter brings YAML, which the budget then reports."""
    source = tmp_path / "front.md"
    source.write_text("---\ntitle: A note\n---\n\nOne paragraph.\n", encoding="utf-8")
    assert "yaml" in _denied(_build(tmp_path, source)["modules"])
