"""A built page's outline, read back from its HTML: the front-matter fields it shows, its sections (id, §N,
title, text, sources) and its reference list. `graphsite diff` compares two outlines, so a report's Markdown
and a page a server sends are read the same way (the Markdown is built first), and the page needs to carry
nothing extra.

The theme marks what is read here with stable ids and classes (builder/page.py): `header#top`,
`section.sec` with its `h2[id]`, `span.idx` and `p.source`, `div#intro`, `section#notes`, `section#references`
with `li[value]`. A page without `<meta name="generator" content="graphsite">` and `div#report` is not one
graphsite built, and reading it is an error, never an empty outline."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from graphsite.errors import BuildError

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})
_HIDDEN = frozenset({"script", "style", "svg", "nav", "footer", "figure", "template"})
_NUMBER = re.compile(r"\[(\d+)\]")
# The front-matter fields a page shows, in the page's order; each is read from the element named beside it.
FRONT_FIELDS = ("title", "description", "badge", "kicker", "headline", "subtitle", "lede", "authors", "date",
                "floors", "counter_frame", "rules")
_HEADER_CLASSES = {"badge": "badge", "kicker": "kicker", "subtitle": "subtitle", "lede": "lede",
                   "byline": "authors", "live": "", "dot": ""}


class OutlineError(BuildError):
    """The HTML is not a page graphsite built, so it has no outline to compare."""


@dataclass(frozen=True)
class SectionOutline:
    """One section as the page shows it: `intro` and `notes` are sections too, with those ids."""

    id: str
    index: str  # §N, or "" for the introduction and the notes
    title: str
    text: str  # the section's words, whitespace collapsed (summary and detail; not the Source: line)
    sources: tuple[int, ...] = ()  # the citation numbers of its Source: line

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def label(self) -> str:
        return f"{self.index} {self.title}" if self.index else self.title


@dataclass(frozen=True)
class ReferenceOutline:
    number: int
    title: str
    url: str  # "" when the page shows the entry as not public


@dataclass(frozen=True)
class NoteOutline:
    """The page's own "Changed since" note (builder/changenote.py), which a redeploy of the same content keeps."""

    since: str  # the date it shows, "" for "the previous version"
    lines: tuple[tuple[str, str, str], ...]  # (anchor or "", label, change word or "") of each item


@dataclass(frozen=True)
class Outline:
    front: tuple[tuple[str, str], ...]  # (field, value) of every field the page shows, in FRONT_FIELDS order
    sections: tuple[SectionOutline, ...]
    references: tuple[ReferenceOutline, ...]
    note: NoteOutline | None = field(default=None, compare=False)  # not what the page says: how it says what changed

    @property
    def title(self) -> str:
        return dict(self.front).get("title", "")

    @property
    def words(self) -> int:
        return sum(section.words for section in self.sections)


@dataclass
class _Open:
    """A section or reference being read: its pieces of text by role."""

    id: str
    parts: dict[str, list[str]] = field(default_factory=dict)

    def add(self, role: str, text: str) -> None:
        self.parts.setdefault(role, []).append(text)

    def text(self, role: str) -> str:
        return " ".join("".join(self.parts.get(role, ())).split())


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str]] = []  # (tag, role) of every open element
        self.front: dict[str, list[str]] = {}
        self.sections: list[_Open] = []
        self.references: list[_Open] = []
        self.generator = self.report = False
        self.note: list[list[str]] | None = None  # [anchor, label, change] of each item, once a note is read
        self.since = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "meta":
            self._meta(attributes)
        if tag in _VOID:
            return
        parent = self.stack[-1][1] if self.stack else ""
        role = self._role(tag, attributes, parent)
        if role in ("front:floors", "front:rules") and role != parent:  # a new item of a list field
            self.front.setdefault(role[6:], []).append("")
        self.stack.append((tag, role))

    def _meta(self, attributes: dict[str, str]) -> None:
        name, content = attributes.get("name", ""), attributes.get("content", "")
        if name == "generator" and content == "graphsite":
            self.generator = True
        elif name == "description" and content:
            self.front["description"] = [content]

    def _role(self, tag: str, attributes: dict[str, str], parent: str) -> str:
        """Return what the element's text is: `front:FIELD`, `sec`, `sec:title`, `sec:index`, `sec:source`,
        `ref:title`, `ref:url`, `skip`, or "" (nothing read)."""
        classes, element_id = set(attributes.get("class", "").split()), attributes.get("id", "")
        if parent == "skip" or tag in _HIDDEN:
            return "skip"
        if parent.startswith("note"):
            return self._in_note(tag, attributes, classes, parent)
        if element_id == "changes" and not parent and self.note is None:
            self.note = []
            return "note"
        if parent.startswith(("sec", "ref")):  # inside a section: the author's HTML never starts a new part
            return self._inside(tag, attributes, classes, parent)
        if parent.startswith("front:"):
            return "front:date" if tag == "time" else parent
        if parent == "header":
            if tag == "h1":
                return "front:headline"
            known = [role for name, role in _HEADER_CLASSES.items() if name in classes]
            return f"front:{known[0]}" if known and known[0] else ("skip" if known else parent)
        if parent == "rules":
            return "front:rules" if tag == "li" else parent
        return self._part(tag, attributes, classes, element_id, parent)

    def _part(self, tag: str, attributes: dict[str, str], classes: set[str], element_id: str, parent: str) -> str:
        """Return the role of an element of the page's own structure, outside every section."""
        if tag == "title" and not parent:
            return "front:title"
        self.report = self.report or element_id == "report"
        if element_id in ("intro", "notes") or (tag == "section" and "sec" in classes):
            self.sections.append(_Open(element_id or attributes.get("aria-labelledby", "")))
            return "sec"
        roles = {"top": "header", "rules": "rules", "references": "refs"}
        if element_id in roles:
            return roles[element_id]
        if "card-title" in classes:
            return "front:floors"
        return "front:counter_frame" if "card-quote" in classes else parent

    def _in_note(self, tag: str, attributes: dict[str, str], classes: set[str], parent: str) -> str:
        """Return the role of an element inside the note: its heading's date, an item, its link, its change."""
        assert self.note is not None
        if parent == "note":
            if tag == "li":
                self.note.append(["", "", ""])
                return "note:label"
            return {"h2": "note:heading", "ul": "note"}.get(tag, "skip")
        if parent == "note:heading":
            return "note:since" if tag == "time" else "skip"
        if parent == "note:label" and tag == "a":
            self.note[-1][0] = attributes.get("href", "").removeprefix("#")
            return "note:label"
        return "note:change" if parent == "note:label" and "change" in classes else "skip"

    def _inside(self, tag: str, attributes: dict[str, str], classes: set[str], parent: str) -> str:
        """Return the role of an element inside a section or the reference list."""
        if parent == "refs":
            value = attributes.get("value", "")
            if tag == "li" and value.isascii() and value.isdigit():  # "²" is a digit to isdigit, not to int()
                self.references.append(_Open(attributes["value"]))
                return "ref"
            return "refs" if tag == "ol" else "skip"  # the list's headings and the author's own text
        if parent == "ref":  # a link check's verdict (build --check-links) is not what the page says of a source
            return {"ref-url": "ref:url", "cited-in": "skip", "not-public": "skip", "ref-state": "skip"}.get(
                next(iter(classes & {"ref-url", "cited-in", "not-public", "ref-state"}), ""), "ref:title")
        if parent == "sec":
            if tag == "h2":
                return "sec:title" if self.sections[-1].id != "notes" else "skip"
            if "source" in classes:
                return "sec:source"
            if tag == "summary" or "outline" in classes:
                return "skip"  # "Read §N in full", and the links to the subsections the detail has anyway
        if parent == "sec:title":
            return "sec:index" if "idx" in classes else ("skip" if "permalink" in classes else parent)
        return parent

    def handle_endtag(self, tag: str) -> None:
        for at in range(len(self.stack) - 1, -1, -1):
            if self.stack[at][0] == tag:
                del self.stack[at:]
                return

    def handle_data(self, data: str) -> None:
        role = self.stack[-1][1] if self.stack else ""
        kind, _, part = role.partition(":")
        if kind == "front":
            values = self.front.setdefault(part, [""])
            values[-1] += data
        elif kind == "sec" and self.sections:
            self.sections[-1].add(part or "text", data)
        elif kind == "ref" and self.references:
            self.references[-1].add(part or "title", data)
        elif kind == "note" and self.note is not None:
            if part == "since":
                self.since += data
            elif self.note and part in ("label", "change"):
                self.note[-1][1 if part == "label" else 2] += data


def _front(fields: dict[str, list[str]]) -> tuple[tuple[str, str], ...]:
    values = {name: "; ".join(" ".join(value.split()) for value in values) for name, values in fields.items()}
    if "authors" in values:  # the byline reads "By A, B · <date>": the date is its own field
        values["authors"] = values["authors"].removeprefix("By ").rstrip(" ·")
    return tuple((name, values[name]) for name in FRONT_FIELDS if values.get(name))


def _section(found: _Open) -> SectionOutline:
    titles = {"intro": "Introduction", "notes": "Notes"}
    sources = tuple(int(number) for number in _NUMBER.findall(found.text("source")))
    return SectionOutline(found.id, found.text("index"), found.text("title") or titles.get(found.id, found.id),
                          found.text("text"), sources)


def read_outline(html: str, *, where: str = "the page") -> Outline:
    """Return the outline of a page graphsite built; raise OutlineError when `html` is not one (`where` names it
    in the message)."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    if not reader.generator or not reader.report:
        missing = "its generator meta tag" if not reader.generator else "its #report element"
        raise OutlineError(f"{where} is not a page graphsite built ({missing} is missing), so it has no sections "
                           "to compare", hint="compare a report's Markdown, or a page `graphsite build` wrote")
    note = None if reader.note is None else NoteOutline(
        " ".join(reader.since.split()),
        tuple((anchor, " ".join(label.split()), " ".join(change.split())) for anchor, label, change in reader.note))
    return Outline(_front(reader.front), tuple(_section(found) for found in reader.sections),
                   tuple(ReferenceOutline(int(found.id), found.text("title"), found.text("url"))
                         for found in reader.references), note)
