"""What a new version of a page changes against an old one, section by section: pure, from two outlines.

Sections are matched by id (a heading's slug); an old and a new section left unmatched whose words are mostly
the same are one section whose title changed. Words are counted as the page shows them, so a rewritten section
says how many words came and went."""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from graphsite.builder.outline import FRONT_FIELDS, Outline, ReferenceOutline, SectionOutline

RETITLED_AT = 0.6  # share of words in common above which an unmatched old and new section are the same one
Change = Literal["added", "removed", "rewritten"]


@dataclass(frozen=True)
class SectionChange:
    change: Change
    section: SectionOutline  # the new one (the old one when removed)
    old_title: str = ""  # set when a rewritten section's title changed
    old_words: int = 0
    words_added: int = 0
    words_removed: int = 0

    def as_json(self) -> dict[str, Any]:
        section = self.section
        words = {"old": self.old_words, "new": section.words, "added": self.words_added,
                 "removed": self.words_removed}
        if self.change == "added":
            words = {"old": 0, "new": section.words, "added": section.words, "removed": 0}
        elif self.change == "removed":
            words = {"old": section.words, "new": 0, "added": 0, "removed": section.words}
        return {"change": self.change, "id": section.id, "index": section.index, "title": section.title,
                "old_title": self.old_title or None, "words": words}

    def line(self) -> str:
        section = self.section
        if self.change == "added":
            return f"+ {section.label}: added ({section.words} words)"
        if self.change == "removed":
            return f"- {section.label}: removed ({section.words} words)"
        retitled = f", retitled from {self.old_title!r}" if self.old_title else ""
        return (f"~ {section.label}: rewritten, +{self.words_added} -{self.words_removed} words "
                f"({self.old_words} → {section.words}){retitled}")


@dataclass(frozen=True)
class CitationChange:
    """The Source: line of a section present in both versions cites other numbers."""

    section: SectionOutline
    added: tuple[int, ...]
    removed: tuple[int, ...]

    def as_json(self) -> dict[str, Any]:
        return {"id": self.section.id, "index": self.section.index, "title": self.section.title,
                "added": list(self.added), "removed": list(self.removed)}

    def line(self) -> str:
        parts = [f"now cites {_numbers(self.added)}"] if self.added else []
        parts += [f"no longer cites {_numbers(self.removed)}"] if self.removed else []
        return f"~ {self.section.label}: {', '.join(parts)}"


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str  # "" when the old page did not show the field
    new: str

    def as_json(self) -> dict[str, Any]:
        return {"field": self.field, "old": self.old or None, "new": self.new or None}

    def line(self) -> str:
        if not self.old:
            return f"~ {self.field}: added {_short(self.new)}"
        if not self.new:
            return f"~ {self.field}: removed (was {_short(self.old)})"
        return f"~ {self.field}: {_short(self.old)} → {_short(self.new)}"


@dataclass(frozen=True)
class Changes:
    old: Outline
    new: Outline
    sections: tuple[SectionChange, ...]
    citations: tuple[CitationChange, ...]
    references_added: tuple[ReferenceOutline, ...]
    references_removed: tuple[ReferenceOutline, ...]
    references_changed: tuple[tuple[ReferenceOutline, ReferenceOutline], ...]  # (old, new) of one number
    front: tuple[FieldChange, ...]

    @property
    def changed(self) -> bool:
        return bool(self.sections or self.citations or self.references_added or self.references_removed
                    or self.references_changed or self.front)

    def as_json(self) -> dict[str, Any]:
        def side(outline: Outline) -> dict[str, Any]:
            return {"title": outline.title, "sections": sum(bool(s.index) for s in outline.sections),
                    "words": outline.words, "references": len(outline.references)}

        return {"changed": self.changed, "old": side(self.old), "new": side(self.new),
                "sections": [change.as_json() for change in self.sections],
                "citations": [change.as_json() for change in self.citations],
                "references": {"added": [_reference(r) for r in self.references_added],
                               "removed": [_reference(r) for r in self.references_removed],
                               "changed": [{"number": new.number, "old": _reference(old), "new": _reference(new)}
                                           for old, new in self.references_changed]},
                "front_matter": [change.as_json() for change in self.front]}

    def lines(self) -> list[str]:
        """Return the human report, one change a line, grouped (empty when nothing changed)."""
        lines = [change.line() for change in self.sections] + [change.line() for change in self.citations]
        lines += [f"+ reference [{r.number}] {_short(r.title)}{_url(r)}" for r in self.references_added]
        lines += [f"- reference [{r.number}] {_short(r.title)}{_url(r)}" for r in self.references_removed]
        lines += [f"~ reference [{new.number}]: {_short(old.title)}{_url(old)} → {_short(new.title)}{_url(new)}"
                  for old, new in self.references_changed]
        return lines + [f"{change.line()[:2]}front matter {change.line()[2:]}" for change in self.front]


def _numbers(numbers: tuple[int, ...]) -> str:
    return " ".join(f"[{n}]" for n in numbers)


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _url(reference: ReferenceOutline) -> str:
    return f" ({reference.url})" if reference.url else ""


def _reference(reference: ReferenceOutline) -> dict[str, Any]:
    return {"number": reference.number, "title": reference.title, "url": reference.url or None}


def _word_delta(old: SectionOutline, new: SectionOutline) -> tuple[int, int]:
    """Return (words added, words removed) from `old`'s text to `new`'s."""
    before, after = old.text.split(), new.text.split()
    added = removed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def _similar(old: SectionOutline, new: SectionOutline) -> float:
    return SequenceMatcher(None, old.text.split(), new.text.split(), autojunk=False).ratio()


def _pairs(old: Outline, new: Outline) -> tuple[list[tuple[SectionOutline, SectionOutline]], list[SectionOutline],
                                                list[SectionOutline]]:
    """Return the sections in both (by id, then by words for a changed title), the removed and the added."""
    old_by_id = {section.id: section for section in old.sections}
    new_ids = {section.id for section in new.sections}
    pairs = [(old_by_id[section.id], section) for section in new.sections if section.id in old_by_id]
    removed = [section for section in old.sections if section.id not in new_ids]
    added = [section for section in new.sections if section.id not in old_by_id]
    for section in list(added):
        scored = sorted(((_similar(gone, section), at) for at, gone in enumerate(removed)), reverse=True)
        if scored and scored[0][0] >= RETITLED_AT:
            pairs.append((removed.pop(scored[0][1]), section))
            added.remove(section)
    order = {section.id: at for at, section in enumerate(new.sections)}
    return sorted(pairs, key=lambda pair: order[pair[1].id]), removed, added


def _rewritten(old: SectionOutline, new: SectionOutline) -> SectionChange | None:
    if old.text == new.text and old.title == new.title:
        return None
    added, removed = _word_delta(old, new)
    return SectionChange("rewritten", new, old.title if old.title != new.title else "", old.words, added, removed)


def _cited(old: SectionOutline, new: SectionOutline) -> CitationChange | None:
    added = tuple(n for n in new.sources if n not in old.sources)
    removed = tuple(n for n in old.sources if n not in new.sources)
    return CitationChange(new, added, removed) if added or removed else None


def compare(old: Outline, new: Outline) -> Changes:
    """Return what `new` changes against `old`."""
    pairs, removed, added = _pairs(old, new)
    sections = [SectionChange("removed", section) for section in removed]
    sections += [change for change in (_rewritten(a, b) for a, b in pairs) if change]
    sections += [SectionChange("added", section) for section in added]
    citations = tuple(change for change in (_cited(a, b) for a, b in pairs) if change)
    old_refs = {r.number: r for r in old.references}
    new_refs = {r.number: r for r in new.references}
    old_front, new_front = dict(old.front), dict(new.front)
    front = tuple(FieldChange(name, old_front.get(name, ""), new_front.get(name, ""))
                  for name in sorted({*old_front, *new_front}, key=FRONT_FIELDS.index)
                  if old_front.get(name, "") != new_front.get(name, ""))
    return Changes(old, new, tuple(sections), citations,
                   tuple(r for n, r in new_refs.items() if n not in old_refs),
                   tuple(r for n, r in old_refs.items() if n not in new_refs),
                   tuple((old_refs[n], r) for n, r in new_refs.items() if n in old_refs and old_refs[n] != r),
                   front)
