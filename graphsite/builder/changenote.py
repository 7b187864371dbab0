"""The page's "Changed since <date>" note: the sections a version changes against the previous one, made from
`compare`'s Changes (pure), as a short list under a heading, a region of its own.

The date is the one the previous version showed (its front matter's `date`, as its byline printed it): what a
reader who read that version saw. Section titles come from the report, the date from the old page: both are
escaped. A section removed has no anchor on the new page, so it is named, not linked. Front-matter changes are
not listed: the header that shows them is on screen. A version that changes nothing against a page with a note
keeps that note (read back by builder/outline.py): the same content gives the same page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from graphsite.builder.page import escape
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.builder.compare import Changes
    from graphsite.builder.outline import NoteOutline

LISTED = 8  # sections named in the note; the rest are counted ("and 3 more sections")
Noted = Literal["new", "rewritten", "removed", "sources changed"]


@frozen
class NotedSection:
    """One line of the note: a section, what happened to it, and its anchor on the new page ("" if removed)."""

    change: Noted
    label: str  # "§4 Title" as the page names it
    target: str = ""


def noted_sections(changes: Changes) -> tuple[NotedSection, ...]:
    """Return the sections the note names: new, rewritten, or whose Source: line alone changed, in the new
    page's order; then the removed ones."""
    words: dict[str, Noted] = {"added": "new", "rewritten": "rewritten"}
    noted = {change.section.id: NotedSection(words[change.change], change.section.label, change.section.id)
             for change in changes.sections if change.change != "removed"}
    for cited in changes.citations:
        noted.setdefault(cited.section.id, NotedSection("sources changed", cited.section.label, cited.section.id))
    present = [noted[section.id] for section in changes.new.sections if section.id in noted]
    return (*present, *(NotedSection("removed", change.section.label) for change in changes.sections
                        if change.change == "removed"))


def references_changed(changes: Changes) -> bool:
    return bool(changes.references_added or changes.references_removed or changes.references_changed)


def carried(changes: Changes) -> NoteOutline | None:
    """Return the previous version's own note when this version changes nothing against it: the same content
    keeps the same note, so a redeploy of the same report (or a rerun of a killed one) gives the same page."""
    return changes.old.note if not changes.changed and changes.old.note and changes.old.note.lines else None


def since(changes: Changes) -> str:
    """Return the previous version's date as it showed it ("" when it showed none)."""
    return dict(changes.old.front).get("date", "")


def note(changes: Changes) -> NoteOutline | None:
    """Return the note the page shows for `changes`, its date and its lines (anchor or "", label, change word or
    ""), or None when there is nothing to note: no section nor the reference list changed, and the previous
    version had no note to keep. Made once a page: the render takes its style and its markup from it."""
    from graphsite.builder.outline import NoteOutline

    kept = carried(changes)
    if kept is not None:
        return kept
    sections = noted_sections(changes)
    references = references_changed(changes)
    if not sections and not references:
        return None
    lines = [(item.target, item.label, str(item.change)) for item in sections[:LISTED]]
    more = len(sections) - LISTED
    if more > 0:
        lines.append(("", f"and {more} more section{'s' if more > 1 else ''}", ""))
    if references:
        lines.append(("references" if changes.new.references else "", "The references", "changed"))
    return NoteOutline(since(changes), tuple(lines))


def note_html(shown: NoteOutline | None) -> str:
    """Return the note's markup, or "" when there is none (no previous version, or nothing changed that the note
    lists)."""
    if shown is None:
        return ""
    when = f"<time>{escape(shown.since)}</time>" if shown.since else "the previous version"
    parts = ['<section id="changes" class="changes" aria-labelledby="changes-title">\n'
             f'  <h2 id="changes-title">Changed since {when}</h2>\n  <ul>\n']
    for target, label, change in shown.lines:
        named = f'<a href="#{escape(target)}">{escape(label)}</a>' if target else escape(label)
        word = f' <span class="change">{escape(change)}</span>' if change else ""
        parts.append(f"    <li>{named}{word}</li>\n")
    parts.append("  </ul>\n</section>\n")
    return "".join(parts)
