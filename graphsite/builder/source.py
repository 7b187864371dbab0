"""Read a Markdown report: decode it, split off its YAML front matter and type-check every field.

Every problem is a SourceError naming the file, the line and the field, so the person at the keyboard
knows exactly what to fix; nothing here touches the output directory.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from graphsite.builder.front_yaml import Node, load_front_yaml
from graphsite.builder.model import Card, CounterFrame, Finding, FrontMatter
from graphsite.codes import CITATION_CODES, CITATION_PREFIX
from graphsite.config import MOST_SOURCE_BYTES
from graphsite.errors import SourceError
from graphsite.patterns import lazy_pattern
from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.config import Acceptance

_FENCE = re.compile(r"^---[ \t]*$")
_CLOSE = lazy_pattern(r"^(?:---|\.\.\.)[ \t]*$")
# Front matter starts with a `key:` line; a document that merely opens with a `---` rule does not.
_KEY_LINE = lazy_pattern(r"^[A-Za-z_][\w-]*[ \t]*:(?:[ \t]|$)")
# C0 controls (other than tab, newline, form feed, carriage return) are HTML parse errors: show them as the
# Unicode control pictures (U+0001 → ␁), visible and faithful, instead of passing them through.
_CONTROLS = {code: 0x2400 + code for code in (*range(0x09), 0x0B, *range(0x0E, 0x20))} | {0x7F: 0x2421}
_CONTROL_CHARACTERS = tuple(map(chr, _CONTROLS))
DEFAULT_MAX_BYTES = 20 * 1024 * 1024  # build.max_bytes: 20 MB, a hundred times the longest report we know
# A date as YAML reads it unquoted (a datetime) or as an author quotes it: printed as its day, `2020-04-07`.
_date_time = lazy_pattern(r"^(\d{4}-\d{2}-\d{2})[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?$")
_TEXT_FIELDS = ("title", "badge", "kicker", "headline", "lede", "prefix")
# The keys Pandoc, Quarto, Hugo, Jekyll and MkDocs authors already write: they fill the page's top when
# graphsite's own keys are absent (ECOSYSTEM_TEXT: one line of text each; author and tags: one or a list).
_ECOSYSTEM_TEXT = ("subtitle", "description", "abstract", "summary", "date")
_KNOWN = frozenset(_TEXT_FIELDS + _ECOSYSTEM_TEXT + ("floors", "counter_frame", "rules", "author", "authors",
                                                      "tags", "accept"))
_ACCEPTANCE_KEYS = ("code", "reason", "number", "url")


@frozen
class Source:
    """A decoded report: its front matter, its Markdown body and the file line the body starts on."""

    path: Path
    front: FrontMatter
    body: str
    body_line: int  # 1-based line in the file of the body's first line
    warnings: tuple[Finding, ...] = ()
    head: str = ""  # the front matter with its two fences, as in the file (its lines precede the body's)

    def text(self) -> str:
        """Return the whole file as decoded (line endings made \\n): the front matter's lines, then the body's."""
        return f"{self.head}\n{self.body}" if self.head else self.body


STDIN = Path("-")  # the report read from standard input
STDIN_NAME = Path("<stdin>")  # its name in messages; it has no directory of its own
# Byte-order marks of the encodings a report may come in besides UTF-8; the UTF-32 ones first (UTF-32-LE's BOM
# begins with UTF-16-LE's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


def read_source(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Source:
    """Return the decoded report at `path` (`-`: standard input), or raise SourceError (missing, not a regular
    file, too large, empty, not UTF-8 nor UTF-16/32 with a byte-order mark, bad YAML)."""
    raw = _read_stdin(max_bytes) if path == STDIN else _read_bytes(path, max_bytes)
    return parse_source(STDIN_NAME if path == STDIN else path, raw)


_stdin: dict[object, bytes] = {}  # standard input, read once: a build with --check-links reads the report twice


def _read_stdin(max_bytes: int) -> bytes:
    """Return standard input's bytes, at most `max_bytes` of them."""
    if sys.stdin is None:  # started with standard input closed
        raise SourceError(STDIN_NAME, "standard input is closed", hint="pipe the report in, or give its path")
    stream = sys.stdin.buffer
    try:
        data = _stdin[stream] if stream in _stdin else _stdin.setdefault(stream, _read_at_most(stream, max_bytes))
    except OSError as exc:
        raise SourceError(STDIN_NAME, f"cannot read standard input: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise SourceError(STDIN_NAME, f"is more than the limit of {max_bytes:,} bytes", hint=_RAISE_LIMIT)
    return data


_RAISE_LIMIT = (f"raise build.max_bytes in graphsite.toml (GRAPHSITE_BUILD_MAX_BYTES; at most "
                f"{MOST_SOURCE_BYTES:,}, 1 GiB) if the report really is this long")
_CHUNK = 1 << 20


def _read_at_most(stream: BinaryIO, limit: int, size: int = 0) -> bytes:
    """Return what `stream` holds, at most `limit` + 1 bytes (one more than the limit tells a longer source).
    It is read in chunks, the first of `size` + 1 bytes when that is known: read(n) takes n bytes of memory
    before it reads one, and a limit of a GiB must cost only what the source holds."""
    parts, total, want = [], 0, min(size, limit) + 1 if size else _CHUNK
    while total <= limit:
        part = stream.read(min(want, limit + 1 - total))
        if part is None:  # a non-blocking stream with nothing more yet: what came is not the whole source
            raise BlockingIOError(errno.EAGAIN, "it is non-blocking and had nothing more to read yet")
        if not part:
            break
        parts.append(part)
        total, want = total + len(part), _CHUNK
    return b"".join(parts)


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    """Return the bytes of the regular file `path`, at most `max_bytes` of them. A FIFO, a device (`/dev/zero`)
    or a socket is refused before it is read: reading one could block forever or never end."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not hang; a regular file ignores the flag.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SourceError(path, "file not found", hint="give the path of a Markdown report") from None
    except IsADirectoryError:
        raise SourceError(path, "is a directory, not a Markdown file") from None
    except OSError as exc:
        raise SourceError(path, f"cannot read the file: {exc.strerror}") from None
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise SourceError(path, "is a directory, not a Markdown file")
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(path, f"is not a regular file (a {_kind(info.st_mode)})",
                              hint="give the path of a Markdown file; copy a stream into a file first")
        if info.st_size > max_bytes:
            raise SourceError(path, f"is {info.st_size:,} bytes, more than the limit of {max_bytes:,}",
                              hint=_RAISE_LIMIT)
        with os.fdopen(os.dup(descriptor), "rb") as stream:
            data = _read_at_most(stream, max_bytes, info.st_size)  # the file may have grown since fstat
    except OSError as exc:
        raise SourceError(path, f"cannot read the file: {exc.strerror}") from None
    finally:
        os.close(descriptor)
    if len(data) > max_bytes:
        raise SourceError(path, f"is more than the limit of {max_bytes:,} bytes", hint=_RAISE_LIMIT)
    return data


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def parse_source(path: Path, raw: bytes) -> Source:
    """Return the report held in `raw` (the bytes of `path`)."""
    text = decode(path, raw).replace("\r\n", "\n").replace("\r", "\n")
    if any(character in text for character in _CONTROL_CHARACTERS):
        # str.translate looks up every character (10 ms for the default report, 0.25 s at 50x); 30 searches for
        # one that needs it take 0.1 ms
        text = text.translate(_CONTROLS)
    if not text.strip():
        raise SourceError(path, "the file is empty", hint="write the report's Markdown into it")
    lines = text.split("\n")
    end = _front_matter_end(lines)
    if end is None:
        _check_unclosed(path, lines)
        return Source(path, FrontMatter(), text, 1)
    data, nodes = load_front_yaml(path, "\n".join(lines[1:end]))
    front, warnings = front_matter(path, data, nodes)
    return Source(path, front, "\n".join(lines[end + 1:]), end + 2, warnings, "\n".join(lines[:end + 1]))


def decode(path: Path, raw: bytes) -> str:
    """Return `raw` decoded: UTF-16 or UTF-32 when it starts with that encoding's byte-order mark, else UTF-8 (its
    own mark dropped); raise SourceError naming the encoding, the byte offset and the line of a bad byte."""
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), "utf-8-sig")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        shown = "UTF-8" if encoding == "utf-8-sig" else f"{encoding.upper()} (it starts with that byte-order mark)"
        line = raw[: exc.start].count(b"\n") + 1 if encoding == "utf-8-sig" else None
        raise SourceError(path, f"not valid {shown} at byte offset {exc.start} (byte 0x{raw[exc.start]:02x})",
                          line=line, hint="save the file as UTF-8") from None


def _opens_front_matter(lines: list[str]) -> bool:
    return len(lines) >= 2 and bool(_FENCE.match(lines[0])) and bool(_KEY_LINE().match(lines[1]))


def _front_matter_end(lines: list[str]) -> int | None:
    """Return the index of the closing `---` when the file opens with YAML front matter."""
    if not _opens_front_matter(lines):
        return None
    close = _CLOSE()
    for index in range(1, len(lines)):
        if close.match(lines[index]):
            return index
    return None


def _check_unclosed(path: Path, lines: list[str]) -> None:
    """Raise SourceError when the file opens like front matter (`---`, then a field the page shows) but
    never closes it: read as Markdown, the fields would silently turn into a paragraph."""
    if not _opens_front_matter(lines):
        return
    key = lines[1].split(":", 1)[0].strip()
    if key in _KNOWN:
        raise SourceError(path, f"front matter opened here (with `{key}:`) is never closed", line=1,
                          hint="end it with a line `---` before the Markdown starts")


class _Value(NamedTuple):
    """A front-matter value, its YAML node, and the file line of its key (where a wrong type is reported)."""

    node: Node
    value: Any
    line: int


def _line(node: Node) -> int:
    return int(node[0]) + 2  # +1 for 1-based lines, +1 for the opening ---


def _is_date(value: object) -> bool:
    """Return whether `value` is a date (or a datetime), as YAML reads one unquoted: only PyYAML makes one, and it
    imports datetime, which a build without front matter never does (sys.modules tells, without importing it)."""
    module = sys.modules.get("datetime")
    return module is not None and isinstance(value, module.date)


class _Fields:
    """Type checks of front-matter values, each error naming the field path and its line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, item: _Value, field: str, expected: str) -> SourceError:
        got = "nothing" if item.value is None else type(item.value).__name__
        return SourceError(self.path, f"front matter field `{field}`: expected {expected}, got {got}",
                           line=item.line)

    def text(self, item: _Value, field: str) -> str:
        value = item.value
        if value is None:
            return ""
        if _is_date(value):
            return str(value.isoformat())
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(item, field, "text")
        return str(value).strip()

    def items(self, item: _Value, field: str, expected: str) -> list[_Value]:
        if not isinstance(item.value, list):
            raise self.fail(item, field, expected)
        return [_Value(node, value, _line(node)) for node, value in zip(item.node[1], item.value, strict=False)]

    def texts(self, item: _Value, field: str) -> tuple[str, ...]:
        if item.value is None:
            return ()
        if isinstance(item.value, str):
            return (item.value.strip(),)
        return tuple(self.text(entry, f"{field}[{index}]")
                     for index, entry in enumerate(self.items(item, field, "a list of text")))

    def mapping(self, item: _Value, field: str) -> dict[str, _Value]:
        """Return the entries of a YAML mapping, each with the line of its key."""
        if not isinstance(item.value, dict):
            raise self.fail(item, field, "a mapping of fields")
        nodes: dict[str, tuple[Node, Node]] = {}
        for key, value in item.node[1]:
            if str(key[1]) in nodes:
                first = _line(nodes[str(key[1])][0])
                where = "front matter" if field.startswith("(") else f"front matter field `{field}`"
                raise SourceError(self.path, f"{where}: the key `{key[1]}` appears twice (first on line "
                                  f"{first}); YAML would keep only the last", line=_line(key),
                                  hint="delete one of the two")
            nodes[str(key[1])] = (key, value)
        entries = {}
        for key, value in item.value.items():
            key_node, value_node = nodes.get(str(key), (item.node, item.node))
            entries[str(key)] = _Value(value_node, value, _line(key_node))
        return entries


def front_matter(path: Path, data: Any, node: Node | None) -> tuple[FrontMatter, tuple[Finding, ...]]:
    """Return the typed front matter and warnings about keys the page does not use."""
    if data is None or node is None:
        return FrontMatter(), ()
    fields = _Fields(path)
    top = fields.mapping(_Value(node, data, _line(node)), "(front matter)")
    values: dict[str, Any] = {key: fields.text(top[key], key) for key in _TEXT_FIELDS if key in top}
    values.update(_ecosystem(fields, top, values))
    if "rules" in top:
        values["rules"] = fields.texts(top["rules"], "rules")
    if "floors" in top:
        values["floors"] = _cards(fields, top["floors"])
    if "counter_frame" in top and top["counter_frame"].value is not None:
        values["counter_frame"] = _counter_frame(fields, top["counter_frame"])
    if "accept" in top and top["accept"].value is not None:
        values["accept"] = _acceptances(fields, top["accept"])
    warnings = tuple(Finding("front-matter-unused", f"front matter key `{key}` is not shown on the page",
                             line=top[key].line) for key in top if key not in _KNOWN)
    return FrontMatter(**values), warnings


def _ecosystem(fields: _Fields, top: dict[str, _Value], own: dict[str, Any]) -> dict[str, Any]:
    """Return the page fields the ecosystem's keys give when graphsite's own are absent: the lede from
    description / abstract / summary / subtitle, the kicker from tags, the meta description, and the byline."""
    text = {key: fields.text(top[key], key) for key in _ECOSYSTEM_TEXT if key in top}
    values: dict[str, Any] = {}
    summary = text.get("description") or text.get("abstract") or text.get("summary") or ""
    if not own.get("lede") and (summary or text.get("subtitle")):
        values["lede"] = summary or text.get("subtitle", "")
    if summary:
        values["description"] = summary
    if not own.get("kicker") and "tags" in top:
        values["kicker"] = " · ".join(fields.texts(top["tags"], "tags"))
    names: list[str] = []
    for key in ("author", "authors"):
        if key in top:
            names += _people(fields, top[key], key)
    values["authors"] = tuple(name for name in names if name)
    values["date"] = as_date(text.get("date", ""))
    return values


def as_date(text: str) -> str:
    """Return a date field as a date: `2020-04-07T12:00:00` (or `2020-04-07 12:00:00+02:00`) as `2020-04-07`;
    any other text as written."""
    match = _date_time().match(text)
    return match.group(1) if match else text


def _people(fields: _Fields, item: _Value, field: str) -> list[str]:
    """Return author names from text, a list of text, or Quarto's list of mappings with a `name`."""
    if item.value is None or isinstance(item.value, (str, int, float)):
        return [fields.text(item, field)]
    names = []
    for index, entry in enumerate(fields.items(item, field, "a name or a list of names")):
        if isinstance(entry.value, dict):
            name = fields.mapping(entry, f"{field}[{index}]").get("name")
            names.append(fields.text(name, f"{field}[{index}].name") if name is not None else "")
        else:
            names.append(fields.text(entry, f"{field}[{index}]"))
    return names


def _cards(fields: _Fields, floors: _Value) -> tuple[Card, ...]:
    cards = []
    for index, item in enumerate(fields.items(floors, "floors", "a list of cards")):
        name = f"floors[{index}]"
        card = fields.mapping(item, name)
        missing = _Value(item.node, None, item.line)
        text = {key: fields.text(card.get(key, missing), f"{name}.{key}")
                for key in ("label", "year", "title", "definition")}
        cards.append(Card(**text, critique=fields.texts(card.get("critique", missing), f"{name}.critique")))
    return tuple(cards)


def _acceptances(fields: _Fields, accept: _Value) -> tuple[Acceptance, ...]:
    """Return the findings the report accepts: a list of {code, reason, number, url}, as [[citations.accept]]."""
    from graphsite.config import Acceptance

    found = []
    for index, item in enumerate(fields.items(accept, "accept", "a list of acceptances")):
        name = f"accept[{index}]"
        entry = fields.mapping(item, name)
        for key in entry:
            if key not in _ACCEPTANCE_KEYS:
                raise SourceError(fields.path, f"front matter field `{name}`: unknown key `{key}` (known: "
                                  f"{', '.join(_ACCEPTANCE_KEYS)})", line=entry[key].line)
        missing = _Value(item.node, None, item.line)
        code, reason = (fields.text(entry.get(key, missing), f"{name}.{key}") for key in ("code", "reason"))
        if not code or not reason:
            raise SourceError(fields.path, f"front matter field `{name}`: an acceptance needs a code and a reason",
                              line=item.line, hint="say why the finding stays in `reason`")
        if code not in CITATION_CODES and CITATION_PREFIX + code not in CITATION_CODES:
            raise SourceError(fields.path, f"front matter field `{name}.code`: unknown code {code!r} (known: "
                              f"{', '.join(CITATION_CODES)})", line=entry["code"].line)
        number = entry.get("number", missing)
        if number.value is not None and (isinstance(number.value, bool) or not isinstance(number.value, int)):
            raise fields.fail(number, f"{name}.number", "a citation number")
        found.append(Acceptance(code=code, reason=reason, number=number.value or 0,
                                url=fields.text(entry.get("url", missing), f"{name}.url")))
    return tuple(found)


def _counter_frame(fields: _Fields, frame: _Value) -> CounterFrame:
    entries = fields.mapping(frame, "counter_frame")
    missing = _Value(frame.node, None, frame.line)
    values = {key: fields.text(entries.get(key, missing), f"counter_frame.{key}")
              for key in ("quote", "who", "where", "date")}
    return CounterFrame(**{**values, "date": as_date(values["date"])})
