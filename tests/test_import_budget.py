"""The import budgets, proven in a fresh process: `graphsite build` on a plain document (no front matter) imports
no module of another command or of a feature the document does not use, nor a template engine (the page's markup
is `builder/page.py`); `graphsite links` sends its first request before it imports the builder's parse, and never
imports the page's rendering. Budgets of imports, not timed tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Imported by the build of a plain document, any of these is start-up time spent for nothing: YAML (front matter
# only), the publisher's clients (Docker, Cloudflare, HTTP), schema validation, password hashing, the browser,
# the network stack, the link checker and the lab; Jinja2 (and MarkupSafe), which no build needs any more; and
# signal, whose Signals enum only a stopped run names; and click, whose parsing a plain command line of build does
# without (graphsite/commands/words.py).
DENIED = ("click", "jinja2", "markupsafe", "yaml", "docker", "cloudflare", "httpx", "httpcore", "requests", "urllib3",
          "jsonschema", "bcrypt", "playwright", "asyncio", "ssl", "socket", "fontTools.subset", "fontTools.ttLib",
          "graphsite.publisher", "graphsite_lab", "graphsite.citations.live", "graphsite.citations.checker",
          "graphsite.commands.deploy", "signal")
# Imported only by what needs them, so a warm build of a plain document (its font subsets cached) never does: json
# (--json), shutil with its bz2 and lzma (emptying a cache directory found open), idna (a name outside ASCII),
# random and secrets (the page's mark comes from os.urandom), tempfile, and fontTools (the font cache's key is its
# dist-info RECORD, read without importing it); hashlib with OpenSSL's _hashlib (the build's digests are CPython's
# own: graphsite/digests.py); importlib.util (an installed package's folder is found by importlib.machinery's
# PathFinder: graphsite/paths.py); datetime (only PyYAML makes a date); base64 (binascii encodes the page's data).
LAZY = ("json", "shutil", "bz2", "lzma", "idna", "random", "secrets", "tempfile", "fontTools", "hashlib", "_hashlib",
        "importlib.util", "datetime", "base64")

# The executable's own entry, as `graphsite -q build SOURCE --out SITE` runs it; what it imported is read as it ends.
_PROBE = """
import atexit, functools, re, sys
def imported():
    modules = sorted(sys.modules)
    compiled = sorted(f"{name}.{attribute}" for name, module in list(sys.modules.items())
                      if name.startswith("graphsite") for attribute, value in vars(module).items()
                      if isinstance(getattr(value, "__wrapped__", None), functools.partial)
                      and value.__wrapped__.func is re.compile and value.cache_info().currsize)
    import json
    print(json.dumps({"modules": modules, "compiled": compiled}))
atexit.register(imported)
sys.argv = ["graphsite", "-q", "build", sys.argv[1], "--out", sys.argv[2]]
from graphsite.entry import main
main()
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
    assert _denied(second["modules"], DENIED + LAZY + TASK_LISTS) == []
    # nor compiles a regular expression of raw HTML, images, dates, leftovers… (graphsite/patterns.py)
    assert second["compiled"] == []


# The task-list plugin, with the uuid and platform it imports: a task list is graphsite's own rule
# (builder/tasklists.py), at every build.
TASK_LISTS = ("mdit_py_plugins.tasklists", "uuid", "platform")


def test_a_task_list_imports_no_plugin(tmp_path: Path) -> None:
    source = tmp_path / "tasks.md"
    source.write_text("# Tasks\n\n- [ ] to do\n- [x] done\n", encoding="utf-8")
    modules = _build(tmp_path, source)["modules"]
    assert _denied(modules, TASK_LISTS) == []
    assert "graphsite.builder.tasklists" in _denied(modules, ("graphsite.builder",))  # the probe sees the rule


def test_the_budget_sees_an_import(tmp_path: Path) -> None:
    """The probe is honest: front matter brings YAML, which the budget then reports, and raw HTML compiles the
    patterns that guard it; the same front matter built again is read from the cache (builder/front_yaml.py),
    without YAML."""
    source = tmp_path / "front.md"
    source.write_text('---\ntitle: A note\n---\n\n<div id="x">One paragraph.</div>\n', encoding="utf-8")
    first = _build(tmp_path, source)
    assert "yaml" in _denied(first["modules"])
    compiled = first["compiled"]
    assert isinstance(compiled, list) and "graphsite.builder.rawhtml._id_attribute" in compiled
    assert _denied(_build(tmp_path, source)["modules"], DENIED + LAZY) == []


# `graphsite links` asks its first URLs before the builder reads and parses the report: before the first request
# it has imported neither markdown-it nor the builder, and at no time the page's rendering, its templates and
# fonts, YAML (no front matter here), the publisher's clients, the lab or click.
LINKS_DENIED = ("click", "jinja2", "graphsite.builder.render", "graphsite.builder.fonts", "graphsite.builder.images",
                "fontTools", "yaml", "docker", "cloudflare", "httpx", "httpcore", "requests", "urllib3", "jsonschema",
                "bcrypt", "playwright", "graphsite.publisher", "graphsite_lab", "graphsite.usecases.build")
BEFORE_THE_FIRST_REQUEST = ("markdown_it", "mdit_py_plugins", "nh3", "graphsite.builder")

_LINKS_PROBE = """
import atexit, json, sys
import graphsite.citations.http as http
first = []
send = http.Client.send
async def _send(self, method, url):
    if not first:
        first.append(sorted(sys.modules))
    return await send(self, method, url)
http.Client.send = _send
atexit.register(lambda: print(json.dumps({"first": first[0] if first else None, "modules": sorted(sys.modules)})))
sys.argv = ["graphsite", "-q", "links", sys.argv[1], "--no-cache", "--allow-private"]
from graphsite.entry import main
main()
"""


def _listed(modules: object, names: tuple[str, ...]) -> list[str]:
    assert isinstance(modules, list)
    return [name for name in modules if name in names or name.startswith(tuple(f"{n}." for n in names))]


def test_links_asks_before_it_parses_and_never_imports_the_page(tmp_path: Path) -> None:
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        source = tmp_path / "links.md"
        source.write_text(f"# Links\n\n## 1. Links\n\n- [a]({base}/a)\n- [b]({base}/b)\n", encoding="utf-8")
        environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
        result = subprocess.run([sys.executable, "-c", _LINKS_PROBE, str(source)], capture_output=True, text=True,
                                env=environment, cwd=tmp_path, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["first"] is not None, result.stderr  # a request went out
    assert _listed(answer["first"], BEFORE_THE_FIRST_REQUEST) == []
    assert _listed(answer["modules"], BEFORE_THE_FIRST_REQUEST) != []  # the probe sees the parse, after
    assert _listed(answer["modules"], LINKS_DENIED) == []
