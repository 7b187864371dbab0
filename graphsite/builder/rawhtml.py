"""Raw HTML in Markdown, made safe for the content around it before the sanitiser sees it.

An HTML parser reads `<style>`, `<script>`, `<title>`, `<textarea>`, `<xmp>`, `<plaintext>`, `<iframe>`,
`<noembed>`, `<noframes>`, `<noscript>` and `<template>` as raw text up to their closing tag, or to the end of
the fragment when there is none: "put it in one <style> element" written in prose would swallow the rest of the
section. So these elements are handled here, at the token level, where the Markdown line is known:

- a complete `<script>`, `<style>` or `<template>` element inside an HTML block is dropped, with a warning;
- any other of their tags (an opening tag written in prose, a `<textarea>…</textarea>`, a stray closing tag)
  is shown as text, with a warning;
- an HTML block that would run to the end of the document because its closing `</style>`, `-->`, `?>` or
  `]]>` never comes is read as Markdown instead (CommonMark would swallow the rest of the report);
- a comment that never ends inside its HTML block (`<div>` then `<!-- note`) is shown as text, with a warning;
- a tag that never ends inside its HTML block (`<img src="https://e.org/x.png` with no closing quote or `>`)
  is shown as text, with a warning: an HTML parser would read everything after it, up to the next quote or
  `>` anywhere in the section, as its attributes;
- a `<math>` or `<svg>` that is never closed (in its paragraph, or its HTML block) is shown as text, with a
  warning: a browser would take the rest of the paragraph into the formula or picture, and an SVG shows no
  text outside its `<text>` elements; a MathML or SVG element's tag outside them (`cp <path> <text>`) is shown
  as text (the sanitiser would drop it with its content);
- a form control (`<input type=password>`, `<button>`, `<select>`, …) or an embedded object (`<object>`,
  `<embed>`, `<applet>`, `<marquee>`) is shown as text, with a warning: the sanitiser would turn an input into
  a fake task-list checkbox, and remove an object only after it had split the paragraph around it (a stray
  `</p>`);
- an `id` or `name` that repeats a generated id (headings, footnotes, the page's own) or an earlier raw one
  is removed, with a warning, so that every id on the page stays unique;
- a protocol-relative image (`//host/x.png`) becomes https (the page is served over https).

Every pattern here is linear: no nested or overlapping quantifiers, and tag scans stop at the next `<`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block.html_block import html_block as commonmark_html_block
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.token import Token

from graphsite.builder.model import Finding
from graphsite.builder.sanitize import MATHML, SVG
from graphsite.builder.tags import RAW_TAG
from graphsite.patterns import lazy_pattern

RAW_TEXT = frozenset({"script", "style", "title", "textarea", "xmp", "plaintext", "iframe", "noembed",
                      "noframes", "noscript", "template"})
FOREIGN = frozenset({"math", "svg"})  # MathML and SVG: what a browser puts in them is not prose
_MATH_TEXT = frozenset({"mi", "mo", "mn", "ms", "mtext"})  # MathML's text integration points
_FOREIGN_CHILDREN = frozenset(name.lower() for name in (MATHML | SVG) - FOREIGN)
# Start tags that end MathML and SVG in a browser (the HTML standard's "breakout" list), and with them the
# place where their elements mean anything.
_BREAKOUT = frozenset({"b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em",
                       "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing",
                       "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong", "strike",
                       "sub", "sup", "table", "tt", "u", "ul", "var"})
_SHOWN = frozenset({"input", "button", "select", "option", "optgroup", "datalist", "form", "object", "embed",
                    "applet", "marquee", "param"})
_DROPPED = frozenset({"script", "style", "template"})  # never visible in a browser: drop the whole element
_id_attribute = lazy_pattern(r"""(\s)(id|name)(\s*=\s*)("[^"<>]*"|'[^'<>]*'|[^\s"'=<>`]+)""", re.IGNORECASE)
_relative_src = lazy_pattern(r"""(\ssrc\s*=\s*["']?)//(?=[^/])""", re.IGNORECASE)
# CommonMark HTML block starts that end only at a closing sequence (types 1, 2, 3 and 5).
_block_open = lazy_pattern(r"<(script|pre|style|textarea)(?=[\s>]|$)|<!--|<\?|<!\[CDATA\[", re.IGNORECASE)


class Guard:
    """The ids already on the page, and the warnings found while guarding raw HTML."""

    def __init__(self, taken: Iterable[str], reserved: Callable[[str], bool]) -> None:
        self.taken = set(taken)
        self.reserved = reserved
        self.raw_ids: set[str] = set()
        self.warnings: list[Finding] = []

    def warn(self, code: str, message: str, line: int) -> None:
        self.warnings.append(Finding(code, message, line=line))


def install_block_rule(md: MarkdownIt) -> None:
    """Replace markdown-it's html_block rule with one that refuses an HTML block whose closing sequence never
    comes (it would swallow the rest of the document), so that the line is read as Markdown."""
    def html_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        position = state.bMarks[start] + state.tShift[start]
        if position < len(state.src) and state.src[position] == "<":
            match = _block_open().match(state.src, position)
            if match is not None and _unclosed(state, match, position):
                if not silent:
                    state.env.setdefault("graphsite_unclosed", []).append((start, match.group(0)))
                return False
        return bool(commonmark_html_block(state, start, end, silent))

    md.block.ruler.at("html_block", html_block, {"alt": ["paragraph", "reference", "blockquote"]})


def _closer(opener: str) -> str:
    lowered = opener.lower()
    if lowered.startswith("<!--"):
        return "-->"
    if lowered.startswith("<?"):
        return "?>"
    if lowered.startswith("<!["):
        return "]]>"
    return f"</{lowered[1:]}>"


def _unclosed(state: StateBlock, match: re.Match[str], position: int) -> bool:
    """Return whether the closing sequence of the HTML block opening at `position` never comes (computed once
    per document and closer: the last occurrence of each)."""
    last: dict[str, int] = state.env.setdefault("graphsite_last_closer", {})
    closer = _closer(match.group(0))
    if closer not in last:
        last[closer] = state.src.lower().rfind(closer)
    return last[closer] < match.end()


def unclosed_warnings(env: dict[str, Any], body_line: int) -> list[Finding]:
    """Return a warning for every HTML block start that was read as Markdown because it is never closed."""
    return [Finding("raw-html-shown", f"{opener} is never closed: read as Markdown and shown as text (left "
                    "open, it would take in the rest of the report)", line=line + body_line)
            for line, opener in env.get("graphsite_unclosed", ())]


def _task_box(tokens: list[Token], index: int) -> int | None:
    """Return 0 when the inline `tokens[index]` opens a task-list item: its first child is the checkbox the
    task-list plugin made (known by where it stands, not by its text), the only input the page shows."""
    item = tokens[index - 2] if index >= 2 else None
    if item is not None and item.type == "list_item_open" and "task-list-item" in str(item.attrGet("class") or ""):
        return 0
    return None


def guard_tokens(tokens: list[Token], guard: Guard, body_line: int) -> None:
    """Make every raw HTML token safe for the content around it (see the module's docstring), in place."""
    for index, token in enumerate(tokens):
        line = (token.map[0] if token.map else 0) + body_line
        if token.type == "html_block":
            token.content = guard_block(token.content, guard, line)
        elif token.type == "inline" and token.children:
            # each raw tag is matched once, here: the passes below share the matches
            tags = [RAW_TAG.match(c.content) if c.type == "html_inline" else None for c in token.children]
            unclosed, foreign = _unclosed_foreign(tags), _Foreign()
            box = _task_box(tokens, index)
            for at, (child, match) in enumerate(zip(token.children, tags, strict=True)):
                if at == box:
                    continue
                if at in unclosed:
                    _show(child, guard, line, "is never closed in its paragraph")
                elif match is not None and foreign.stray(match):
                    child.type, child.tag = "text", ""
                elif match is not None:
                    _guard_inline(child, match, guard, line)
                elif child.type == "image":
                    src = str(child.attrGet("src") or "")
                    if src.startswith("//") and not src.startswith("///"):
                        child.attrSet("src", "https:" + src)


def _unclosed_foreign(tags: list[re.Match[str] | None]) -> set[int]:
    """Return the indexes of the raw `<math>`/`<svg>` tags among a paragraph's children (`tags`: each one's
    raw tag, or None) that no closing tag follows (one pass from the end)."""
    closed: set[str] = set()
    found = set()
    for at in range(len(tags) - 1, -1, -1):
        match = tags[at]
        if match is None or match.group(2).lower() not in FOREIGN:
            continue
        if match.group(1):
            closed.add(match.group(2).lower())
        elif match.group(2).lower() not in closed and not match.group(3).rstrip().endswith("/"):
            found.add(at)
    return found


class _Foreign:
    """Whether a MathML/SVG element's tag stands inside an open `<math>` or `<svg>`, tag after tag."""

    def __init__(self) -> None:
        self.depth = 0
        self.text = 0  # open MathML token elements (mi, mo, mn, ms, mtext): HTML inside them does not break out

    def stray(self, match: re.Match[str]) -> bool:
        """Return whether the tag `match` is a MathML/SVG element's, opening or closing, outside them (after
    updating the depth)."""
        name, closing = match.group(2).lower(), bool(match.group(1))
        if name in FOREIGN and not match.group(3).rstrip().endswith("/"):
            self.depth = max(self.depth - 1, 0) if closing else self.depth + 1
            self.text = 0 if self.depth == 0 else self.text
        elif name in _MATH_TEXT and self.depth:
            self.text = max(self.text - 1, 0) if closing else self.text + 1
        elif name in _BREAKOUT and not closing and not self.text:
            self.depth = 0
        # a closing tag too: `<text>hi</text>` outside an SVG is shown whole, not with its `</text>` dropped
        return name in _FOREIGN_CHILDREN and self.depth == 0


def _is_shown(match: re.Match[str]) -> bool:
    """Return whether the tag `match` (written by the author) is a form control or an object, shown as text."""
    return match.group(2).lower() in _SHOWN


def _show(token: Token, guard: Guard, line: int, why: str) -> None:
    """Turn the raw HTML `token` into text, with a warning saying `why`."""
    token.type, token.tag = "text", ""
    guard.warn("raw-html-shown", f"raw HTML {_shown(token.content)} {why}: shown as text, so that it does not "
               "hide what follows it", line)


def _guard_inline(token: Token, match: re.Match[str], guard: Guard, line: int) -> None:
    if match.group(2).lower() in RAW_TEXT or _is_shown(match):
        _show(token, guard, line, "is not allowed on the page")
        return
    token.content = _guard_attributes(match, guard, line) + token.content[match.end():]


def _shown(tag: str) -> str:
    return tag if len(tag) <= 40 else tag[:39] + "…"


def guard_block(html: str, guard: Guard, line: int) -> str:
    """Return the HTML block `html` with raw-text elements dropped or escaped and duplicate ids removed."""
    html = _open_comment(html, guard, line)
    matches = list(RAW_TAG.finditer(html))
    if not matches:
        return html
    closers: dict[str, list[int]] = {}
    for index, match in enumerate(matches):
        if match.group(1):
            closers.setdefault(match.group(2).lower(), []).append(index)
    unterminated = _unterminated(html, matches)
    out: list[str] = []
    foreign = _Foreign()
    position = skip_to = 0
    counted, lines = 0, line  # the line of html[counted], advanced as the scan goes (linear)

    def line_of(offset: int) -> int:
        nonlocal counted, lines
        lines += html.count("\n", counted, offset)
        counted = offset
        return lines

    for index, match in enumerate(matches):
        if index < skip_to:
            continue
        name = match.group(2).lower()
        out.append(html[position:match.start()])
        position = match.end()
        if index in unterminated:
            out.append("&lt;" + match.group(0)[1:])
            guard.warn("raw-html-shown", f"raw HTML {_shown(match.group(0).strip())} never ends (a quote or `>` "
                       "is missing): shown as text, so that it does not take in what follows", line_of(match.start()))
            continue
        if name in FOREIGN and not match.group(1) and not match.group(3).rstrip().endswith("/") \
                and _next_closer(closers.get(name, []), index) is None:
            out.append("&lt;" + match.group(0)[1:])
            guard.warn("raw-html-shown", f"raw HTML {_shown(match.group(0))} is never closed in its HTML block: "
                       "shown as text, so that it does not hide what follows it", line_of(match.start()))
            continue
        if foreign.stray(match):
            out.append("&lt;" + match.group(0)[1:])
            continue
        if _is_shown(match):
            out.append("&lt;" + match.group(0)[1:])
            guard.warn("raw-html-shown", f"raw HTML {_shown(match.group(0))} is not allowed on the page: shown "
                       "as text", line_of(match.start()))
            continue
        if name not in RAW_TEXT:
            out.append(_guard_attributes(match, guard, line) if not match.group(1) else match.group(0))
            continue
        close = _next_closer(closers.get(name, []), index) if not match.group(1) else None
        if name in _DROPPED and close is not None:
            position, skip_to = matches[close].end(), close + 1
            guard.warn("raw-html-dropped", f"a raw <{name}> element is not allowed on the page and was removed",
                       line_of(match.start()))
            continue
        out.append("&lt;" + match.group(0)[1:])
        guard.warn("raw-html-shown", f"raw HTML {_shown(match.group(0))} is shown as text: the page does not "
                   "allow it, and an HTML parser would hide what follows it", line_of(match.start()))
    out.append(html[position:])
    return "".join(out)


def _open_comment(html: str, guard: Guard, line: int) -> str:
    """Return `html` with a `<!--` that no `-->` follows in the block shown as text: the comment would hide
    the rest of the section."""
    close = html.rfind("-->")
    start = html.find("<!--", close + 3 if close >= 0 else 0)
    if start < 0:
        return html
    guard.warn("raw-html-shown", "raw HTML <!-- is never closed in its HTML block: shown as text, so that it "
               "does not hide what follows it", line + html.count("\n", 0, start))
    return html[:start] + "&lt;" + html[start + 1:]


def _unterminated(html: str, matches: list[re.Match[str]]) -> set[int]:
    """Return the indexes of the tags in `matches` that an HTML parser would read past the end of the block `html`:
    an attribute value whose quote never closes, or a tag whose `>` never comes (linear: each tag's attributes
    are scanned once, what lies after them is looked up)."""
    last = {char: html.rfind(char) for char in "\"'>"}
    found = set()
    for index, match in enumerate(matches):
        quote = _open_quote(match.group(3))
        if quote:
            if last[quote] < match.end():
                found.add(index)
        elif not match.group(4) and last[">"] < match.end():
            found.add(index)
    return found


def _open_quote(attributes: str) -> str:
    """Return the quote left open at the end of a tag's `attributes` ("" when none is), read the way an HTML
    tokenizer reads them: a quote opens a value only right after `=` (and spaces)."""
    quote, after_equals = "", False
    for char in attributes:
        if quote:
            if char == quote:
                quote = ""
        elif char == "=":
            after_equals = True
        elif after_equals and char in "\"'":
            quote, after_equals = char, False
        elif not char.isspace():
            after_equals = False
    return quote


def _next_closer(indexes: list[int], after: int) -> int | None:
    at = bisect.bisect_right(indexes, after)
    return indexes[at] if at < len(indexes) else None


def _guard_attributes(match: re.Match[str], guard: Guard, line: int) -> str:
    """Return the opening tag `match` without an id/name already on the page, and with an https image."""
    attributes = match.group(3)
    if not attributes:
        return match.group(0)
    own: set[str] = set()  # `<a id="x" name="x">` names one anchor twice: that is no repeat
    if match.group(2).lower() == "img" and "//" in attributes:
        attributes = _relative_src().sub(r"\1https://", attributes)

    def check(found: re.Match[str]) -> str:
        value = found.group(4).strip("\"'")
        if value in own:
            return found.group(0)
        if value in guard.taken or value in guard.raw_ids or guard.reserved(value):
            guard.warn("raw-html-id", f"raw HTML {found.group(2)}={value!r} repeats an id the page already "
                       "has; removed so that every id stays unique", line)
            return found.group(1)
        guard.raw_ids.add(value)
        own.add(value)
        return found.group(0)

    if "id" in attributes.lower() or "name" in attributes.lower():
        attributes = _id_attribute().sub(check, attributes)
    return f"<{match.group(1)}{match.group(2)}{attributes}{match.group(4)}"
