"""The dynamic directory as Traefik's file provider reads it: which files count, how each parses, and which
ones block the whole directory.

Traefik (`pkg/provider/file`, `loadFileConfigFromDirectory`) walks the directory in name order, descends into
subdirectories (never through a link to one: `os.ReadDir` gives a link's own type), reads every other entry
whose name ends `.yml`, `.yaml` or `.toml` (any case: Go's `filepath.Ext`, so a file named just `.yml` too),
regular file or not, and ignores the rest. One file it cannot read or decode (a dangling link) means the new
configuration is not applied at all: every later change, graphsite's new route included, waits until that file
is fixed. A FIFO is worse: Traefik's read (`os.ReadFile`) waits in open() for a writer, and its one watcher waits
with it, removing the FIFO does not wake it: Traefik must be restarted (or the FIFO opened for writing before it
is removed). So deploy and verify look at every file, not only their own, never waiting on one. A character
device (a link to /dev/null, a way to disable a file) is read as Traefik reads it: /dev/null is an empty
configuration.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shlex
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from graphsite.paths import schema_path

EXTENSIONS = (".yml", ".yaml", ".toml")
SCHEMA = "traefik-v3-file-provider.json"  # graphsite/schemas/SOURCES.md says where it comes from


@dataclass(frozen=True)
class DynamicFile:
    """One file of the dynamic directory: its parsed data, or why it cannot be parsed."""

    path: Path
    data: dict[str, Any] | None
    error: str = ""  # "line 3, column 5: …" for a parse error; empty when it parsed
    gone: bool = False  # removed since it was listed
    # what Traefik reads there is unknown here, not broken: this user may not read it (Traefik, as its own user,
    # may), or a character device gives no end within DEVICE_LIMIT
    unknown: bool = False

    def middlewares(self) -> tuple[str, ...]:
        """Return the names of the http middlewares the file defines (none when it did not parse)."""
        http = (self.data or {}).get("http")
        defined = http.get("middlewares") if isinstance(http, dict) else None
        return tuple(sorted(defined)) if isinstance(defined, dict) else ()


class Unread(Exception):
    """A path of the dynamic directory this user may not read: what Traefik reads there is unknown, since
    Traefik reads it as its own user (on Dokploy, root)."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


class UnlistedDirectory(Unread):
    """A directory of the dynamic directory (it, or one under it) this user cannot list."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, f"cannot list {path}: {reason}")


class UnreadFile(Unread):
    """A file Traefik reads whose content is unknown here: one this user may not read (root's, 0600), or a
    character device that gives no end: whether it loads is unknown."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, f"cannot read {path}: {reason}")


def provider_files(directory: Path) -> list[Path]:
    """Return the files Traefik's file provider reads in `directory`, in the order it reads them; raise
    UnlistedDirectory for a directory it descends into that this user cannot list, and only for one: a link to a
    directory is not followed, and a directory that may be read but not searched is listed. One removed since it
    was seen (another deploy's teardown) holds nothing, as for Traefik's next reload."""
    found: list[Path] = []
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return found
    except OSError as exc:
        raise UnlistedDirectory(directory, exc.strerror or str(exc)) from exc
    for entry in entries:
        path = directory / entry.name
        try:  # the listing's own type, as Traefik's os.ReadDir: a link is no directory, and a directory that may
            is_dir = entry.is_dir(follow_symlinks=False)  # be read but not searched needs no look at each entry
        except OSError as exc:  # a file system whose listing has no types: what the entry is is unknown
            raise UnlistedDirectory(directory, exc.strerror or str(exc)) from exc
        if is_dir:
            found.extend(provider_files(path))
        elif entry.name.lower().endswith(EXTENSIONS):  # the name's ending, as Go's filepath.Ext: `.yml` alone
            found.append(path)  # too (Python's suffix of it is ''); a link, a FIFO: Traefik reads it all the same
    return found


def read_directory(directory: Path) -> list[DynamicFile]:
    """Return every file Traefik's file provider reads in `directory`, parsed, in its order. A file removed
    between the listing and its reading (another deploy's teardown, an editor's save) is not there any more:
    it is left out rather than reported as unreadable, as Traefik's next reload would leave it out. Raise
    UnlistedDirectory for a directory this user cannot list (an unread directory is never an empty one), and
    UnreadFile for a file this user may not read or a device that gives no end (a file unread is neither broken
    nor sound)."""
    found = []
    for parsed in map(parse_file, provider_files(directory)):
        if parsed.unknown:
            raise UnreadFile(parsed.path, parsed.error.removeprefix("cannot read: "))
        if not parsed.gone:
            found.append(parsed)
    return found


def parse_file(path: Path) -> DynamicFile:
    """Return the file parsed as YAML or TOML (by its extension); an empty file is an empty configuration. It is
    gone only when the name itself is: a link to nothing is there, and Traefik's read of it fails."""
    try:
        text = _read(path)
    except FileNotFoundError as exc:
        try:
            target = os.readlink(path)
        except OSError:  # the name is gone too (or no link any more: removed, then made again after the listing)
            return DynamicFile(path, None, "cannot read: it was removed", gone=True)
        return DynamicFile(path, None, f"cannot read: {exc.strerror}: a link to {target}, which does not exist")
    except PermissionError as exc:
        return DynamicFile(path, None, f"cannot read: {exc.strerror or exc}", unknown=True)
    except _Endless as exc:
        return DynamicFile(path, None, f"cannot read: {exc}", unknown=True)
    except (OSError, UnicodeDecodeError) as exc:
        return DynamicFile(path, None, f"cannot read: {getattr(exc, 'strerror', None) or exc}")
    return parse_text(path, text)


_NOT_REGULAR = {stat.S_IFBLK: "a block device, not a regular file",
                stat.S_IFSOCK: "a socket, not a regular file"}
DEVICE_LIMIT = 1 << 20  # what a character device may give before graphsite stops reading it: unknown past it


class _Endless(Exception):
    """A character device that gave no end (more than DEVICE_LIMIT, or nothing to read yet without waiting):
    what Traefik reads there is unknown."""


def _fifo(path: Path) -> str:
    """Return why a FIFO blocks Traefik, and a command that unblocks it: quoted as a whole (shlex.join), so a
    name holding a quote, a `$` or a backtick is never read by the shell that runs the hint as anything else."""
    opening = shlex.join(["timeout", "5", "sh", "-c", f": > {shlex.quote(str(path))}"])
    return (f"a FIFO, not a regular file: Traefik's file provider hangs on it (its read waits for a writer, and "
            f"removing the FIFO does not wake it): open it for writing before removing it "
            f"(`{opening}`: it returns once Traefik has it open), or remove it and restart Traefik")


def _read(path: Path) -> str:
    """Return the file's text; raise OSError for what is not a regular file, never waiting: opened without
    blocking, a FIFO is named, not read (Traefik's read waits for a writer that may never come). A character
    device is read as Traefik reads it, without waiting and to DEVICE_LIMIT (a link to /dev/null: empty);
    _Endless when it gives no end."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        kind = stat.S_IFMT(os.fstat(descriptor).st_mode)
        if kind == stat.S_IFDIR:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if kind == stat.S_IFCHR:
            return _device(descriptor).decode("utf-8")
        if kind != stat.S_IFREG:
            raise OSError(errno.EINVAL, _fifo(path) if kind == stat.S_IFIFO else
                          _NOT_REGULAR.get(kind, "not a regular file"))
        with open(descriptor, "rb", closefd=False) as stream:
            return stream.read().decode("utf-8")
    finally:
        os.close(descriptor)


def _device(descriptor: int) -> bytes:
    """Return what the character device open (without blocking) as `descriptor` gives up to its end; raise
    _Endless when it gives more than DEVICE_LIMIT or would make the reader wait."""
    chunks: list[bytes] = []
    size = 0
    while size <= DEVICE_LIMIT:
        try:
            chunk = os.read(descriptor, 1 << 16)
        except BlockingIOError:
            raise _Endless("a character device with nothing to read yet: what Traefik reads there (it waits) "
                           "is unknown") from None
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    raise _Endless(f"a character device that gave more than {DEVICE_LIMIT} bytes without an end: what Traefik "
                   "reads there is unknown")


def parse_text(path: Path, text: str) -> DynamicFile:
    """Return `text`, the content of `path`, parsed as YAML or TOML (by the path's extension)."""
    try:
        data = tomllib.loads(text) if path.name.lower().endswith(".toml") else yaml.safe_load(text)  # `.toml` too
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        return DynamicFile(path, None, f"{where}{exc.problem or exc}")
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        return DynamicFile(path, None, str(exc).splitlines()[0])
    except ValueError as exc:  # a value the parser hands Python that it refuses: a number of over 4,300 digits
        # (its advice to call sys.set_int_max_str_digits() is not the reader's to take), a date of month 13
        return DynamicFile(path, None, f"a value cannot be read: {str(exc).partition('; use sys.')[0]}")
    except RecursionError:  # both parsers recurse once a nested list or mapping
        return DynamicFile(path, None, "lists or mappings nested too deeply to read")
    if data is None:
        return DynamicFile(path, {})
    if not isinstance(data, dict):
        return DynamicFile(path, None, f"the top level is a {type(data).__name__}, not a mapping")
    return DynamicFile(path, data)


@functools.cache
def _validator() -> Any:  # jsonschema ships no type information: its validator is Any here
    import jsonschema

    schema = json.loads(schema_path(SCHEMA).read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def schema_errors(document: object) -> list[str]:
    """Return every way `document` breaks Traefik's v3 file-provider schema (empty: valid)."""
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'.'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]


def schema_problems(parsed: DynamicFile) -> list[str]:
    """Return how a parsed file breaks Traefik's v3 schema ('key.path: message'), or its parse error."""
    if parsed.data is None:
        return [parsed.error]
    return schema_errors(parsed.data)


def blocking_files(directory: Path) -> list[str]:
    """Return one line per file that stops Traefik applying the directory: 'PATH: first problem'; raise Unread
    for a directory this user cannot list or a file it may not read."""
    lines = []
    for parsed in read_directory(directory):
        problems = schema_problems(parsed)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            lines.append(f"{parsed.path}: {problems[0]}{more}")
    return lines
