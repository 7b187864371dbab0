"""Footnotes as the author wrote them: every definition is shown, cited or not.

markdown-it's footnote plugin keeps only the definitions the text refers to; one nobody refers to vanished
without a word, and so did the notes it refers to in turn (their backlinks then pointed at a missing
`#fnref`). Here every definition is listed: the referenced ones in order of first reference, then the others,
in the order written, without a backlink and with a warning naming their line.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from mdit_py_plugins.footnote.index import footnote_tail

from graphsite.builder.model import Finding

_UNREFERENCED = "graphsite_unreferenced_notes"


def install_footnote_tail(md: MarkdownIt) -> None:
    """Replace the plugin's footnote_tail rule with one that lists unreferenced definitions too."""
    md.core.ruler.at("footnote_tail", _footnote_tail)


def _footnote_tail(state: StateCore) -> None:
    data = state.env.get("footnotes")
    if not data:
        return
    missing = [label for label, number in data.get("refs", {}).items() if number < 0]
    lines = _definition_lines(state, missing)
    ids = set()
    for label in missing:
        number = len(data.setdefault("list", {}))
        data["list"][number] = {"label": label[1:], "count": 0}
        data["refs"][label] = number
        ids.add(number)
        state.env.setdefault(_UNREFERENCED, []).append((label[1:], lines.get(label, 0)))
    footnote_tail(state)
    if ids:  # a note nobody refers to has no reference to go back to
        state.tokens = [t for t in state.tokens if t.type != "footnote_anchor" or t.meta.get("id") not in ids]


def _definition_lines(state: StateCore, labels: list[str]) -> dict[str, int]:
    """Return the 0-based line of each definition in `labels` (the plugin gives its opening token none)."""
    wanted, lines = set(labels), {}
    for index, token in enumerate(state.tokens):
        if token.type == "footnote_reference_open" and ":" + token.meta["label"] in wanted:
            following = state.tokens[index + 1] if index + 1 < len(state.tokens) else None
            lines[":" + token.meta["label"]] = following.map[0] if following is not None and following.map else 0
    return lines


def footnote_ids(env: dict[str, Any]) -> tuple[str, ...]:
    """Return the ids the footnote plugin gives the notes (`fn1`) and each reference to them (`fnref1`, then
    `fnref1:1`, … for a note referred to again): the `#fn9` of a page with two notes is no target."""
    ids: list[str] = []
    for number, note in sorted((env.get("footnotes") or {}).get("list", {}).items()):
        ids.append(f"fn{number + 1}")
        count = int(note.get("count", 0))
        ids += [f"fnref{number + 1}" if sub == 0 else f"fnref{number + 1}:{sub}" for sub in range(count)]
    return tuple(ids)


def unreferenced_warnings(env: dict[str, Any], body_line: int) -> list[Finding]:
    """Return a warning for every footnote definition the text never refers to."""
    return [Finding("footnote-unreferenced", f"footnote [^{label}] is never referred to in the text: listed "
                    "at the end of the notes, without a way back", line=line + body_line)
            for label, line in env.get(_UNREFERENCED, ())]
