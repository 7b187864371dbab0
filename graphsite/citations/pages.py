"""Reading a page for its `#fragment` targets as it streams in: the charset, then every `id=` and `<a name=>`.

Pure (no network): the checker feeds the body chunk by chunk and stops as soon as every wanted fragment was
seen, so a target past the first megabytes of a big page costs only the bytes up to it and no copy of the page
is kept (only a start tag whose `>` has not come yet). A regular-expression scanner, not html.parser: it is
about forty times faster on big pages, and it still skips comments, scripts and styles, where an `id=` is no
target. Linear in the page whatever the chunks: inside a comment, script or style it looks for the ending in
the new text only, and an unfinished start tag is searched for its `>` in the new text only, its parts joined
once that has come.
"""

from __future__ import annotations

import codecs
import html
import re
from urllib.parse import unquote

from graphsite.patterns import lazy_pattern

SNIFF_BYTES = 4096  # how much of the body is looked at for a BOM or a <meta> charset before decoding
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# The scanner's patterns are compiled when first used: a check whose links have no #fragment scans no page.
_META_CHARSET = lazy_pattern(rb"""<meta\s[^>]*?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
# Where the scanner looks next: a comment's opening, or a start tag (its name, then up to its '>' when it has
# come). End tags, `<!doctype>` and `<?…>` hold no target and are passed over as text.
_OPEN = lazy_pattern(r"<(?:(!--)|([a-zA-Z][a-zA-Z0-9-]*)[^>]*(>)?)")
_COMMENT_END = lazy_pattern("-->")
# Raw text ends at `</script` or `</style` followed by a space, `/` or `>` (HTML's "appropriate end tag").
_RAW_END = {"script": lazy_pattern(r"</script[\s/>]", re.IGNORECASE),
            "style": lazy_pattern(r"</style[\s/>]", re.IGNORECASE)}
_CARRY = 16  # the end of a chunk that may hold the start of a tag or of an ending the next chunk completes
_ATTRIBUTE = lazy_pattern(r"""[\s"'/](id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""", re.IGNORECASE)


_TITLE = re.compile(rb"<title[^>]*>([^<]{0,300})</title", re.IGNORECASE)
# A page's title that says the page is not there: "404", "Page not found", "Error 404 (Not Found)!!1", …
_NOT_FOUND = re.compile(r"^\W*(?:error\W*)?404\b|\b404\W*$|\bnot found\b|\bpage (?:does not|doesn't) exist\b|"
                        r"\bno longer (?:exists|available)\b", re.IGNORECASE)


def soft_404(start: bytes) -> str:
    """Return why a page answered 2xx reads as a "not found" page (its <title>), or "" when it does not."""
    title = _TITLE.search(start)
    if title is None:
        return ""
    text = " ".join(title.group(1).decode("utf-8", errors="replace").split())
    return f"the page's title says it is not there: {text[:80]!r}" if _NOT_FOUND.search(text) else ""


def wanted_names(fragment: str) -> frozenset[str]:
    """Return the ids that satisfy `fragment` (as written, decoded, GitHub's `user-content-` form); empty when
    the fragment needs no target at all (the top of the page, a text fragment)."""
    name = unquote(fragment)
    if name in ("", "top") or name.startswith(":~:"):
        return frozenset()
    return frozenset({name, fragment, f"user-content-{name}"})


def sniff_charset(prefix: bytes, declared: str | None) -> str:
    """Return the codec for a body that starts with `prefix`: its BOM, else the Content-Type charset, else a
    `<meta>` charset, else UTF-8 when the prefix is valid UTF-8, else windows-1252 (what browsers assume)."""
    for bom, name in _BOMS:
        if prefix.startswith(bom):
            return name
    for candidate in (declared, _meta_charset(prefix)):
        codec = _codec(candidate)
        if codec:
            return codec
    try:
        codecs.getincrementaldecoder("utf-8")().decode(prefix, final=False)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def _meta_charset(prefix: bytes) -> str | None:
    match = _META_CHARSET().search(prefix)
    return match.group(1).decode("ascii") if match else None


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None
    # The HTML standard reads a declared UTF-16 without a BOM as UTF-8, and latin-1 as windows-1252.
    if codec.startswith("utf-16"):
        return "utf-8"
    return "cp1252" if codec in ("latin-1", "iso8859-1", "ascii") else codec


class AnchorScanner:
    """Fed a page's bytes in chunks; `found` holds the wanted names seen so far, `done` is True once every
    group (the names of one fragment, from `wanted_names`) has one of its names found."""

    def __init__(self, groups: list[frozenset[str]], declared_charset: str | None = None) -> None:
        self.groups = [g for g in groups if g]
        self.wanted = frozenset().union(*self.groups)
        self.declared = declared_charset
        self.found: set[str] = set()
        self.names: set[str] = set()  # every target seen (kept only when nothing in particular is wanted)
        self.charset: str | None = None
        self.received = 0
        self._head = b""
        self._decoder: codecs.IncrementalDecoder | None = None
        self._carry = ""  # the end of the text so far that the next chunk may complete
        self._tag: list[str] = []  # the parts of a start tag whose '>' has not come yet
        self._inside: re.Pattern[str] | None = None  # the ending of the comment, script or style we are in
        self._open, self._attribute = _OPEN(), _ATTRIBUTE()  # compiled by the first scanner of a run

    @property
    def done(self) -> bool:
        return bool(self.groups) and all(not group.isdisjoint(self.found) for group in self.groups)

    def feed(self, chunk: bytes) -> None:
        self.received += len(chunk)
        if self._decoder is None:
            self._head += chunk
            if len(self._head) < SNIFF_BYTES:
                return
            head, self._head = self._head, b""
            self._start(head)
            return
        self._scan(self._decoder.decode(chunk, final=False))

    def close(self) -> None:
        """Scan what is left (the end of the page, or a page shorter than the sniffing window)."""
        if self._decoder is None:
            head, self._head = self._head, b""
            self._start(head)
        assert self._decoder is not None
        self._scan(self._decoder.decode(b"", final=True), final=True)

    def _start(self, head: bytes) -> None:
        self.charset = sniff_charset(head[:SNIFF_BYTES], self.declared)
        for bom, _ in _BOMS:
            if head.startswith(bom):
                head = head[len(bom):]
                break
        self._decoder = codecs.getincrementaldecoder(self.charset)(errors="replace")
        self._scan(self._decoder.decode(head, final=False))

    def _scan(self, new: str, final: bool = False) -> None:
        text, pos = self._carry + new, 0
        self._carry = ""
        if self._tag:  # an unfinished start tag: its '>' is looked for in the new text only, its parts kept apart
            assert text == new  # nothing else is carried while a tag is
            end = text.find(">")
            if end < 0 and not final:
                self._tag.append(text)
                return
            pos = len(text) if end < 0 else end + 1
            whole, self._tag = "".join(self._tag) + text[:pos], []
            opened = self._open.match(whole)
            assert opened is not None  # `whole` begins with the start tag _OPEN found when it was set aside
            self._start_tag(opened.group(2), whole)
        while pos < len(text):
            if self._inside is not None:  # a comment, script or style: only its ending matters
                ending = self._inside.search(text, pos)
                if ending is None:
                    self._carry = "" if final else text[max(pos, len(text) - _CARRY):]
                    return
                pos, self._inside = ending.end(), None
            for match in self._open.finditer(text, pos):
                comment, tag, closed = match.groups()
                pos = match.end()
                if comment:
                    self._inside = _COMMENT_END()
                    break
                if not closed and not final:
                    self._tag = [text[match.start():]]
                    return
                if self._start_tag(tag, match.group(0)):
                    break
            else:
                break
        # A '<' in the last few characters may open a comment or a tag that the next chunk completes.
        tail = text.rfind("<", max(pos, len(text) - _CARRY))
        self._carry = text[tail:] if tail >= 0 and not final else ""

    def _start_tag(self, tag: str, text: str) -> bool:
        """Read the tag's targets; return True when it opens raw text (a script or style)."""
        tag = tag.lower()
        if "=" in text:
            self._attributes(tag, text)
        raw = _RAW_END.get(tag)
        self._inside = raw() if raw is not None else None
        return self._inside is not None

    def _attributes(self, tag: str, text: str) -> None:
        for key, double, single, bare in self._attribute.findall(text):
            if tag != "a" and key.lower() == "name":
                continue
            value = double or single or bare
            if "&" in value:
                value = html.unescape(value)
            if not value:
                continue
            if not self.wanted:
                self.names.add(value)
            elif value in self.wanted:
                self.found.add(value)


def anchors(document: str) -> frozenset[str]:
    """Return every fragment target of an HTML document: `id=` attributes and `<a name=…>`."""
    scanner = AnchorScanner([])
    scanner.feed(document.encode("utf-8"))
    scanner.close()
    return frozenset(scanner.names)
