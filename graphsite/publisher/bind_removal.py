"""Removing a page directory of content mode `bind` (or a killed deploy's temporary of one, or one kept version's
folder): only what graphsite made in it, never the tree whole. A file an operator dropped there (`notes`,
`v/notes`) was never proven graphsite's, so it is never removed: the folder stays, marker and all, and the
refusal names what to move out. Nothing is removed while a stray is there.

The order keeps a failure half-way a state `list` shows as the deployment's and a rerun finishes: each version
folder goes as the directory does (its page, its marker last, rmdir), then v/, the page and the temporaries of
graphsite's writes; the directory's marker only once nothing else is left. Folders go with rmdir, so what came
in since the listing stops the removal (ENOTEMPTY), and a marker already removed is then written back. Everything
is done through descriptors, never through a symbolic link."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from graphsite.atomic import write_atomic_at
from graphsite.errors import DeployError
from graphsite.publisher import bind, files
from graphsite.publisher.bind import VERSIONS, Kind
from graphsite.publisher.deployment import MARKER, Stamp

_HINT = "check deploy.bind_root's permissions and the disk, then run the command again"
Refusal = Callable[[Sequence[str]], DeployError]  # the refusal naming the strays found (paths below the directory)


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
    return _remove_own(directory, "", marker, partial(bind.strays_refusal, directory, name=directory.name),
                       "the page's directory")


def remove_temporary(directory: Path) -> bool:
    """Remove a temporary directory `bind.temporaries` found (what graphsite writes in it, then it); return False
    when it was absent. A stray in it is refused, as in a page directory."""
    if files.looked_at(directory) is None:
        return False
    refusal = partial(bind.strays_refusal, directory, name=bind.temporary_name(directory.name))
    return _remove_own(directory, "", _marker(directory), refusal, "a deploy's temporary directory")


def remove_version(directory: Path, sha12: str) -> bool:
    """Remove what graphsite made in the version `sha12` kept in `directory` (v/<sha12>/: its page, its marker
    last), then the folder; return False when it is absent. A stray in it is refused, the folder left in place
    with its marker; a link or a file there is not graphsite's. No link is followed."""
    where = directory / VERSIONS / sha12
    try:
        with files.opened(directory.parent, directory.name, VERSIONS) as fd:
            mode = os.lstat(sha12, dir_fd=fd).st_mode
    except FileNotFoundError:  # no version, no v/ (or no directory): nothing kept
        return False
    except OSError as exc:
        raise _failed(where, exc, "the version") from None
    if not stat.S_ISDIR(mode):
        raise DeployError(f"{where} is no directory: graphsite did not make it; left in place")
    return _remove_own(directory, f"{VERSIONS}/{sha12}", _marker(directory, VERSIONS, sha12),
                       partial(bind.version_refusal, directory, sha12), "the version")


def _marker(directory: Path, *names: str) -> bytes | None:
    """Return the marker of `directory`/names… to put back should the folder not go; None when there is none
    that can be graphsite's (a link, no file) or it cannot be read (then it is not removed either: unlink fails
    alike, or the listing does)."""
    try:
        return files.read_own(directory.parent, directory.name, *names, MARKER)
    except OSError:
        return None


def _said(stamp: Stamp) -> str:
    return (f"(fqdn={stamp.fqdn or '-'} id={stamp.id or '-'} created={stamp.created or '-'} "
            f"expires={stamp.expires or '-'})")


def _remove_own(directory: Path, scope: str, marker: bytes | None, refused: Refusal, what: str) -> bool:
    """Remove what graphsite made in `directory`/`scope` ('': the page directory itself, `v/<sha12>`: a version
    folder), the marker last, then the folder; put `marker` back when the folder cannot go. Every OSError is a
    DeployError naming the path."""
    listing = _listing(directory, scope)
    strays = bind.not_made(listing)
    if strays:
        raise refused(strays)
    if not scope:  # each version folder as this one: its marker last, put back should the folder stay
        for folder in sorted(p for p in listing if p.count("/") == 1):
            _remove_own(directory, folder, _marker(directory, *_parts(folder)), refused, "a kept version")
        if VERSIONS in listing:
            _remove_entry(directory, VERSIONS, True, refused)
    own = _join(scope, MARKER)
    for path in sorted(p for p in listing if _parts(p)[:-1] == _parts(scope) and p not in (own, VERSIONS)):
        _remove_entry(directory, path, False, refused)  # the page, the temporaries of its writes
    left = _left(directory, scope)
    if left:  # appeared since the listing: the marker stays, and so does the folder
        raise refused(left)
    _at(directory / own, lambda: _unlink_at(directory, own))
    *parents, last = [directory.name, *_parts(scope)]
    try:
        with files.opened(directory.parent, *parents) as fd:
            os.rmdir(last, dir_fd=fd)
    except FileNotFoundError:
        return False  # another hand took it meanwhile
    except OSError as exc:
        if exc.errno != errno.ENOTEMPTY:
            raise _failed(directory / scope, exc, what) from None
        if marker is not None:  # something came in after the last look: the folder stays graphsite's
            _at(directory / own, lambda: _put_back(directory, scope, marker))
        raise refused(_left(directory, scope)) from None
    return True


def _listing(directory: Path, scope: str) -> dict[str, Kind]:
    """Return {path below `directory`: its kind} of what is in `directory`/`scope`: of the page directory, its v/
    and the version folders in v/ (scope ''), or of one version folder; what is below an entry graphsite did not
    make is not read. Raise DeployError when a folder cannot be read."""
    listing = {_join(scope, n): k for n, k in _kinds(directory, scope).items()}
    if not scope and listing.get(VERSIONS) == Kind.DIRECTORY:
        below = {f"{VERSIONS}/{n}": k for n, k in _kinds(directory, VERSIONS).items()}
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
            return {entry.name: bind.kind_of(entry) for entry in scan}
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _failed(directory / below, exc, "what it holds", verb="list") from None


def _left(directory: Path, scope: str) -> list[str]:
    """Return what is in `directory`/`scope` besides its marker, as paths below `directory`."""
    return [_join(scope, n) for n in sorted(_kinds(directory, scope)) if n != MARKER]


def _remove_entry(directory: Path, path: str, is_directory: bool, refused: Refusal) -> None:
    """Remove graphsite's file or (empty) folder at `path` below `directory`; a folder something came into since
    it was read stops the removal, naming what is there."""
    *parents, entry = _parts(path)
    try:
        with files.opened(directory.parent, directory.name, *parents) as fd:
            (os.rmdir if is_directory else os.unlink)(entry, dir_fd=fd)
    except FileNotFoundError:
        return  # gone already: what was to be done is done
    except OSError as exc:
        if exc.errno != errno.ENOTEMPTY:
            raise _failed(directory / path, exc, "it") from None
        raise refused([f"{path}/{n}" for n in sorted(_kinds(directory, path))]) from None


def _unlink_at(directory: Path, path: str) -> None:
    *parents, entry = _parts(path)
    with contextlib.suppress(FileNotFoundError), files.opened(directory.parent, directory.name, *parents) as fd:
        os.unlink(entry, dir_fd=fd)


def _put_back(directory: Path, scope: str, marker: bytes) -> None:
    with files.opened(directory.parent, directory.name, *_parts(scope)) as fd:
        write_atomic_at(fd, MARKER, marker, owner=(bind.BIND_UID, bind.BIND_UID))


def _at(path: Path, effect: Callable[[], None]) -> None:
    """Run `effect` on `path`; an OSError is a DeployError naming `path`."""
    try:
        effect()
    except OSError as exc:
        raise _failed(path, exc, "it") from None


def _join(scope: str, name: str) -> str:
    return f"{scope}/{name}" if scope else name


def _parts(path: str) -> list[str]:
    return path.split("/") if path else []


def _failed(path: Path, exc: OSError, what: str, *, verb: str = "remove") -> DeployError:
    """Return the one-line error of an OSError on `path`; a link or a file that took the place of a directory
    since it was judged is said as such (a rerun cannot help)."""
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        why = files.kept_link(path) or "no directory any more: left as it is; look at it by hand"
        return DeployError(f"{path}: not removed: {why}")
    return DeployError(f"{path}: cannot {verb} {what}: {exc.strerror or exc}", hint=_HINT)
