"""The reload script and its CSP, injected only in serve mode; the preview's state after good and failed builds."""

from __future__ import annotations

import base64
import hashlib
import re

from bs4 import BeautifulSoup

from graphsite.builder.build import page_from_source
from graphsite.errors import SourceError
from graphsite.usecases.preview import Preview, inject_reload


def csp(html: str) -> dict[str, list[str]]:
    meta = BeautifulSoup(html, "html.parser").find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert meta is not None
    return {part.split()[0]: part.split()[1:] for part in str(meta["content"]).split(";") if part.strip()}


def test_the_reload_script_is_allowed_by_hash_and_only_in_serve_mode(tmp_path):
    source = tmp_path / "r.md"
    source.write_text('---\ntitle: "T"\n---\n\n# T\n\n## 1. One\n\nText.\n')
    built = page_from_source(source, fonts="system").html
    served = inject_reload(built, 3)
    before, after = csp(built), csp(served)
    assert before["connect-src"] == after["connect-src"] == ["'self'"]  # serve polls its own origin only
    scripts = [s.string for s in BeautifulSoup(served, "html.parser").find_all("script")]
    reload_script = scripts[-1]
    assert reload_script is not None and "const page = 3;" in reload_script
    digest = "'sha256-" + base64.b64encode(hashlib.sha256(reload_script.encode()).digest()).decode() + "'"
    assert after["script-src"] == [*before["script-src"], digest]
    assert after == {**before, "script-src": after["script-src"]}
    assert len(re.findall("graphsite-serve-error", built)) == 0


def test_a_failed_build_keeps_the_last_good_page():
    outcomes = iter(["<html><body>one</body></html>", SourceError("r.md", "broken", line=2),
                     "<html><body>two</body></html>"])

    def build() -> str:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    preview = Preview(build, lambda: [])
    preview.rebuild()
    assert preview.wait(-1) == {"page": 1, "version": 1, "error": None}
    preview.rebuild()
    assert preview.wait(1) == {"page": 1, "version": 2, "error": "r.md:2: broken"}
    assert b"one" in preview.state.html
    preview.rebuild()
    assert preview.wait(2) == {"page": 2, "version": 3, "error": None}
    assert b"two" in preview.state.html
    assert preview.wait(3, timeout=0.05)["version"] == 3  # nothing new: returns at the timeout


def test_an_edit_during_a_build_is_not_lost(tmp_path):
    """The edit lands after the build read the file but before the watcher's first look: it must still build."""
    import threading

    source = tmp_path / "r.md"
    source.write_text("one")
    edited = threading.Event()

    def build() -> str:
        text = source.read_text()
        if not edited.is_set():
            source.write_text("two")  # same size, same mtime tick, while this build is under way
            edited.set()
        return f"<html><body>{text}</body></html>"

    preview = Preview(build, lambda: [source])
    preview.rebuild()
    assert b"one" in preview.state.html
    watcher = threading.Thread(target=preview.watch, kwargs={"interval": 0.01}, daemon=True)
    watcher.start()
    try:
        state = preview.wait(1, timeout=5)
    finally:
        preview.stop()
        watcher.join(timeout=5)
    assert state["page"] == 2 and b"two" in preview.state.html


def test_serve_defaults_to_the_fonts_build_embeds():
    """The preview is the page a deploy publishes: embedded fonts by default, as `build` (it was Google's)."""
    from graphsite.commands.build import COMMAND
    from graphsite.commands.options import click_command
    from graphsite.commands.serve import serve_command

    def default(command) -> str:
        return next(p for p in command.params if p.name == "fonts").default

    assert default(serve_command) == default(click_command(COMMAND)) == "embedded"
