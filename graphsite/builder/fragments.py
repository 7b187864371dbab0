"""What the page does to the section HTML the Markdown side made, before it goes into the template.

The reference list is the authority for `[N]`: an inline citation links to its reference's public URL, or to
the entry `#ref-N` when the reference has none. A link whose URL a reader cannot follow (a placeholder, `file:`,
a private address, a scheme the sanitiser refused) becomes plain text. Code blocks and tables that may scroll
sideways become named, focusable regions; permalinks are named for their heading.

The input is the sanitiser's output (nh3 serialises every tag the same way), so these rewrites can match it
with patterns instead of parsing it again.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from graphsite.builder.model import Reference
from graphsite.builder.sanitize import is_safe_url, url_scheme
from graphsite.builder.tags import ANY_TAG
from graphsite.patterns import lazy_pattern
from graphsite.urls import memoise_short, problem
from graphsite.values import frozen

_CITE = re.compile(r'<sup class="cite"><a\b([^>]*)>\[(\d+)\]</a></sup>')
_LINK = re.compile(r"<a\b([^>]*)>(.*?)</a>", re.DOTALL)
_HREF = re.compile(r'\shref="([^"]*)"')
_REL = lazy_pattern(r'\srel="[^"]*"')
_PERMALINK = re.compile(r'(<h([1-6]) id="([^"]+)">)((?:(?!</h[1-6]>).)*?)<a class="permalink" href="#\3" '
                        r'aria-label="Permalink"(?: rel="noopener noreferrer")?>', re.DOTALL)
_SCROLLERS = re.compile(r"<(pre|table)\b|</(pre|table)>")
NAME_LIMIT = 80  # characters of a citation's accessible name: a screen reader reads it whole at every [N]
_TO_ENTRY = "; goes to the reference list)"
_SUFFIXES = (" (opens the source)", " (in the reference list)")  # what follows a linked reference's name


@frozen
class Citable:
    """Where a citation number leads on the page: a public URL, or its entry `#ref-N`, and its name."""

    number: int
    href: str
    label: str  # the accessible name of a citation's link: the name, then where the link goes
    outbound: bool
    name: str = ""  # "Reference 3: its title" (empty for a citation without an entry)


@memoise_short
def public_url(url: str) -> str:
    """Return `url` when a reader of a public page can follow it (absolute http(s), public host, no
    placeholder), else "". Memoised: each reference's URL is asked for its entry, its title and every citation."""
    if not url or url_scheme(url) not in {"http", "https"} or not is_safe_url(url):
        return ""
    return "" if problem(url) else url


def unlinked_note(url: str) -> str:
    """Return why a reference entry is not a link, in a reader's words: no URL, a URL only the author can open
    (`file:`, a private host: "not public"), one withheld or incomplete; "" when `url` is a public link."""
    if not url.strip():
        return "no URL given"
    if public_url(url):
        return ""
    scheme = url_scheme(url)
    found = problem(url) if scheme in {"http", "https"} else None
    if scheme == "file" or (found and found[0] == "non-public"):
        return "not public"
    if scheme not in {"http", "https"}:
        return "not a web link"
    kind = found[0] if found else ""
    return {"secret-in-url": "link withheld: it holds a credential", "placeholder": "link incomplete"}.get(
        kind, "malformed link")


_local_path = lazy_pattern(r"(?:file://)?(?:~|/)[^\s`'\"()<>]*/([^\s/`'\"()<>]+/[^\s/`'\"()<>]+)")


def reference_title(reference: Reference) -> str:
    """Return the title a reader sees: without the author's local paths when the reference is not public
    (`~/.hermes/skills/x/SKILL.md` becomes `x/SKILL.md`), never empty."""
    title = reference.title if reference.title != reference.url else ""
    if not public_url(reference.url):
        title = _local_path().sub(lambda match: match.group(1), title)
    return " ".join(title.split()) or f"Reference {reference.number}"


def _short(text: str, limit: int) -> str:
    text = " ".join(text.replace("**", "").replace("`", "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip(" ,.;:") + "…"


def citables(references: Iterable[Reference]) -> dict[int, Citable]:
    """Return, per reference number (its first entry wins), where its citations link and how they are named."""
    found: dict[int, Citable] = {}
    for reference in references:
        if reference.number in found:
            continue
        url = public_url(reference.url)
        if url:
            name = _name(reference, _SUFFIXES)
            found[reference.number] = Citable(reference.number, url, f"{name}{_SUFFIXES[0]}", True, name)
        else:
            why = f" ({unlinked_note(reference.url).split(':')[0]}{_TO_ENTRY}"  # "link withheld", not its reason
            name = _name(reference, (why, _SUFFIXES[1]))
            found[reference.number] = Citable(reference.number, f"#ref-{reference.number}", f"{name}{why}", False,
                                              name)
    return found


def _name(reference: Reference, suffixes: tuple[str, ...]) -> str:
    """Return "Reference N: its title", the title shortened so that the name with any of `suffixes` stays within
    NAME_LIMIT characters."""
    head = f"Reference {reference.number}: "
    return head + _short(reference_title(reference), NAME_LIMIT - len(head) - max(map(len, suffixes)))


def _cite(match: re.Match[str], table: dict[int, Citable]) -> str:
    number = int(match.group(2))
    entry = table.get(number)
    if entry is None:  # no reference entry: the inline URL is all there is (the build reports it)
        href_match = _HREF.search(match.group(1))
        url = public_url(html.unescape(href_match.group(1))) if href_match else ""
        if not url:
            return f'<sup class="cite"><span class="cite-none">[{number}]</span></sup>'
        entry = Citable(number, url, f"Citation {number} (not in the reference list; opens the source)", True)
    kind = "cite-out" if entry.outbound else "cite-in"
    rel = ' rel="noopener noreferrer"' if entry.outbound else ""
    return (f'<sup class="cite"><a class="{kind}" href="{html.escape(entry.href)}" '
            f'aria-label="{html.escape(entry.label)}"{rel}>[{number}]</a></sup>')


def _link(match: re.Match[str]) -> str:
    attributes, text = match.group(1), match.group(2)
    href_match = _HREF.search(attributes)
    if href_match is None:
        if 'class="neutralised"' not in attributes:  # an anchor the author named (`<a name=…>`): keep it,
            return f"<a{_REL().sub('', attributes)}>{text}</a>"  # without the rel that needs an href
    else:
        href = html.unescape(href_match.group(1))
        scheme = url_scheme(href)
        if scheme in {"mailto"} or not scheme or public_url(href):
            return match.group(0)
    return f'<span class="neutralised" title="not a public link">{text}</span>'


def _permalink(match: re.Match[str]) -> str:
    heading = " ".join(html.unescape(ANY_TAG.sub("", match.group(4))).split())
    # a no-break space glues the "#" to the heading's last word: it never wraps onto a line of its own
    return (f'{match.group(1)}{match.group(4).rstrip()}&nbsp;<a class="permalink" href="#{match.group(3)}" '
            f'aria-label="Link to this heading: {html.escape(heading)}">')


def _scrollers(fragment: str, place: str) -> str:
    """Wrap each top-level `<pre>` and `<table>` in a focusable, named region (they may scroll sideways)."""
    counts = {"pre": 0, "table": 0}
    depth = 0
    parts: list[str] = []
    last = 0
    for match in _SCROLLERS.finditer(fragment):
        opening = match.group(1)
        parts.append(fragment[last:match.start()])
        last = match.end()
        if opening:
            if depth == 0:
                counts[opening] += 1
                kind = "Code block" if opening == "pre" else "Table"
                label = html.escape(f"{kind} {counts[opening]}{place}")
                parts.append(f'<div class="scroll" tabindex="0" role="region" aria-label="{label}">')
            depth += 1
            parts.append(match.group(0))
        else:
            depth = max(depth - 1, 0)
            parts.append(match.group(0))
            if depth == 0:
                parts.append("</div>")
    parts.append(fragment[last:])
    return "".join(parts)


def page_fragment(fragment: str, table: dict[int, Citable], place: str = "") -> str:
    """Return a section's HTML as the page shows it: honest citations and links, named permalinks and
    scroll regions. `place` ends the regions' names (" in §4")."""
    if not fragment:
        return fragment
    fragment = _CITE.sub(lambda match: _cite(match, table), fragment)
    fragment = _LINK.sub(lambda match: match.group(0) if 'class="cite-' in match.group(1) else _link(match),
                         fragment)
    fragment = _PERMALINK.sub(_permalink, fragment)
    return _scrollers(fragment, place)
