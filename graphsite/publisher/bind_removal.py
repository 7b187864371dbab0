"""Removing a page directory of content mode `bind` (or a killed deploy's temporary of one): only what graphsite
made in it, never the tree whole. A file an operator dropped there (`notes`, `v/notes`) was never proven
graphsite's, so it is never removed: the directory stays, marker and all, and the refusal names what to move out.

The order keeps a failure half-way a state `list` shows as the deployment's and a rerun finishes: what is in the
version folders, the folders, v/ and the page go first (each folder with rmdir, so what appeared in it since it
was read stops the removal, ENOTEMPTY); the marker only once nothing else is left, and it is written back when
the last rmdir finds something new. Everything is done through descriptors, never through a symbolic link."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path

from graphsite.atomic import write_atomic_at
from graphsite.errors import DeployError
from graphsite.publisher import bind, files
from graphsite.publisher.bind import Kind
from graphsite.publisher.deployment import MARKER, Stamp

_HINT = "check deploy.bind_root's permissions and the disk, then run the command again"


def remove_bind_dir(directory: Path, stamp: Stamp) -> bool:
    """Remove what graphsite made in `directory`, then the directory, when its marker is still the whole `stamp`
    its caller judged this configuration's (name, fqdn, deployment id, created, expires); return False when it is
    absent. Anything else there is refused, left in place: no marker, one that does not parse, another claim
    (another domain's, another deployment's, one rewritten since it was judged), a stray in it. A symbolic link
    is refused, its target untouched."""
    if files.looked_at(directory) is None:  # a look that failed (EACCES) is no "absent"
        return False
    refusal = files.link_refusal(directory, "page directory")
    if refusal is not None:
        raise refusal
    marker = files.read_ours(directory.parent, directory.name, MARKER, what="the page directory's marker")
    found = Stamp.from_marker(marker.decode("utf-8", errors="replace")) if marker is not None else None
    if found is None or found.name != directory.name:
        raise DeployError(f"{directory} exists but graphsite did not make it; left in place",
                          hint="remove it by hand if it is yours to remove")
    if found != stamp:
        raise DeployError(f"{directory}: its marker says {_said(found)}, not the deployment's {_said(stamp)}; "
                          "left in place",
                          hint="run `graphsite list` to see whose it is; remove it by hand if it is yours")
    return _remove_own(directory, marker, directory.name, "the page's directory")


def remove_temporary(directory: Path) -> bool:
    """Remove a temporary directory `bind.temporaries` found (what graphsite writes in it, then it); return False
    when it was absent. A stray in it is refused, as in a page directory."""
    try:
        marker = files.read_own(directory.parent, directory.name, MARKER)
    except OSError:
        marker = None  # none that can be graphsite's (a link, no file): nothing to put back
    return _remove_own(directory, marker, bind.temporary_name(directory.name), "a deploy's temporary directory")


def _said(stamp: Stamp) -> str:
    return (f"(fqdn={stamp.fqdn or '-'} id={stamp.id or '-'} created={stamp.created or '-'} "
            f"expires={stamp.expires or '-'})")


def _remove_own(directory: Path, marker: bytes | None, name: str, what: str) -> bool:
    """Remove what graphsite made in `directory` (the deployment `name`'s), the marker last, then `directory`;
    put `marker` back when the directory cannot go. Every OSError is a DeployError naming the path."""
    if files.looked_at(directory) is None:
        return False
    listing = _listing(directory)
    strays = bind.not_made(listing)
    if strays:
        raise bind.strays_refusal(directory, strays, name)
    # deepest first: the files in the version folders, the folders, v/; then the page and the temporaries
    for path in sorted(listing, key=lambda p: (-p.count("/"), p)):
        if path != MARKER:
            _remove_entry(directory, path, listing[path] == Kind.DIRECTORY, name)
    left = _names(directory, "")
    if set(left) - {MARKER}:  # appeared since the listing: the marker stays, and so does the directory
        raise bind.strays_refusal(directory, [n for n in left if n != MARKER], name)
    _at(directory / MARKER, lambda: _unlink_at(directory, MARKER))
    try:
        with files.opened(directory.parent) as root:
            os.rmdir(directory.name, dir_fd=root)
    except FileNotFoundError:
        return False  # another hand took it meanwhile
    except OSError as exc:
        if exc.errno != errno.ENOTEMPTY:
            raise _failed(directory, exc, what) from None
        if marker is not None:  # something came in after the last look: the directory stays the deployment's
            _at(directory / MARKER, lambda: _put_back(directory, marker))
        raise bind.strays_refusal(directory, [n for n in _names(directory, "") if n != MARKER], name) from None
    return True


def _listing(directory: Path) -> dict[str, Kind]:
    """Return {path below `directory`: its kind} of the directory, of its v/ and of the version folders in v/;
    what is below an entry graphsite did not make is not read. Raise DeployError when it or a folder in it cannot
    be read."""
    listing = _kinds(directory, "")
    if listing.get(bind.VERSIONS) == Kind.DIRECTORY:
        below = {f"{bind.VERSIONS}/{n}": k for n, k in _kinds(directory, bind.VERSIONS).items()}
        listing |= below
        for path, kind in below.items():
            if kind == Kind.DIRECTORY and bind.version_name(path.split("/")[1]):
                listing |= {f"{path}/{n}": k for n, k in _kinds(directory, path).items()}
    return listing


def _kinds(directory: Path, below: str) -> dict[str, Kind]:
    """Return {name: kind} of what is in `directory`/`below` (a link is OTHER, never followed); {} when it is
    gone since it was looked at."""
    try:
        with files.opened(directory.parent, directory.name, *_parts(below)) as fd, os.scandir(fd) as scan:
            return {e.name: Kind.DIRECTORY if e.is_dir(follow_symlinks=False)
                    else Kind.FILE if e.is_file(follow_symlinks=False) else Kind.OTHER for e in scan}
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _failed(directory.joinpath(*_parts(below)), exc, "what it holds", verb="list") from None


def _names(directory: Path, below: str) -> list[str]:
    return sorted(_kinds(directory, below))


def _remove_entry(directory: Path, path: str, is_directory: bool, name: str) -> None:
    """Remove graphsite's file or (empty) folder at `path` below `directory`; a folder something came into since
    it was read stops the removal, naming what is there."""
    *parents, entry = _parts(path)
    where = directory / path
    try:
        with files.opened(directory.parent, directory.name, *parents) as fd:
            (os.rmdir if is_directory else os.unlink)(entry, dir_fd=fd)
    except FileNotFoundError:
        return  # gone already: what was to be done is done
    except OSError as exc:
        if exc.errno != errno.ENOTEMPTY:
            raise _failed(where, exc, "it") from None
        raise bind.strays_refusal(directory, [f"{path}/{n}" for n in _names(directory, path)], name) from None


def _unlink_at(directory: Path, entry: str) -> None:
    with contextlib.suppress(FileNotFoundError), files.opened(directory.parent, directory.name) as fd:
        os.unlink(entry, dir_fd=fd)


def _put_back(directory: Path, marker: bytes) -> None:
    with files.opened(directory.parent, directory.name) as fd:
        write_atomic_at(fd, MARKER, marker, owner=(bind.BIND_UID, bind.BIND_UID))


def _at(path: Path, effect: Callable[[], None]) -> None:
    """Run `effect` on `path`; an OSError is a DeployError naming `path`."""
    try:
        effect()
    except OSError as exc:
        raise _failed(path, exc, "it") from None


def _parts(path: str) -> list[str]:
    return path.split("/") if path else []


def _failed(path: Path, exc: OSError, what: str, *, verb: str = "remove") -> DeployError:
    """Return the one-line error of an OSError on `path`; a link or a file that took the place of a directory
    since it was judged is said as such (a rerun cannot help)."""
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        why = files.kept_link(path) or "no directory any more: left as it is; look at it by hand"
        return DeployError(f"{path}: not removed: {why}")
    return DeployError(f"{path}: cannot {verb} {what}: {exc.strerror or exc}", hint=_HINT)
