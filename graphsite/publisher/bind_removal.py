"""Removing a page directory of content mode `bind` (or a killed deploy's temporary of one, or one kept version's
folder): only what graphsite made in it, never the tree whole. A file an operator dropped there (`notes`,
`v/notes`) was never proven graphsite's, so it is never removed: the folder stays, marker and all, and the
refusal names what to move out. Nothing is removed while a stray is there.

The order keeps a failure half-way a state `list` shows as the deployment's and a rerun finishes: each version
folder goes as the directory does (its page, its marker last, rmdir), then v/, the page and the temporaries of
graphsite's writes; the directory's marker only once nothing else is left. Folders go with rmdir, so what came
in since the listing stops the removal (ENOTEMPTY); when a folder's rmdir fails for any reason but its being gone
already (ENOTEMPTY, EPERM of an append-only parent, EBUSY), its marker is written back before the error. Everything
is done through descriptors, never through a symbolic link: the directory is opened once, its marker judged, its
contents listed and removed and a marker written back through that descriptor, and it is removed by name only
while the name is still that directory (a directory renamed into its place meanwhile is never touched)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from graphsite.atomic import write_atomic_at
from graphsite.errors import DeployError
from graphsite.paths import open_below
from graphsite.publisher import bind, files
from graphsite.publisher.bind import VERSIONS, Kind
from graphsite.publisher.deployment import MARKER, Stamp

_HINT = "check deploy.bind_root's permissions and the disk, then run the command again"
_LISTED = os.O_RDONLY | os.O_DIRECTORY  # open_below adds O_NOFOLLOW and O_CLOEXEC
Refusal = Callable[[Sequence[str]], DeployError]  # the refusal naming the strays found (paths below the directory)


@dataclass(frozen=True)
class _Folder:
    """A folder being emptied, open as `fd`, named `name` in the folder open as `parent`; `scope` is its path
    below the page directory `top` ('' for the page directory itself, `v/<sha12>` for a version's)."""

    fd: int
    parent: int
    name: str
    top: Path
    scope: str

    @property
    def path(self) -> Path:
        return self.top / self.scope if self.scope else self.top


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
    with _page_directory(directory) as folder:
        if folder is None:
            return False
        marker = _marker(folder)
        found = Stamp.from_marker(marker.decode("utf-8", errors="replace")) if marker is not None else None
        if found is None or found.name != directory.name:
            raise DeployError(f"{directory} exists but graphsite did not make it; left in place",
                              hint="remove it by hand if it is yours to remove")
        if found != stamp:
            raise DeployError(f"{directory}: its marker says {_said(found)}, not the deployment's {_said(stamp)}; "
                              "left in place",
                              hint="run `graphsite list` to see whose it is; remove it by hand if it is yours")
        return _remove_own(folder, marker, partial(bind.strays_refusal, directory, name=directory.name),
                           "the page's directory")


def remove_temporary(directory: Path, stamp: Stamp | None) -> bool:
    """Remove a temporary directory `bind.temporaries` found (what a deploy fills it with, then it) while its
    marker is still the `stamp` that survey read in it (None: it had none); return False when it was absent.
    Anything else in it is refused, as a stray in a page directory is."""
    if files.looked_at(directory) is None:
        return False
    refused = partial(bind.strays_refusal, directory, name=bind.temporary_name(directory.name))
    with _page_directory(directory) as folder:
        if folder is None:
            return False
        marker = _marker(folder)
        found = Stamp.from_marker(marker.decode("utf-8", errors="replace")) if marker is not None else None
        if (marker is not None, found) != (stamp is not None, stamp):  # no marker then: none now, not even a bad one
            raise DeployError(f"{directory}: a deploy's temporary directory whose marker changed since it was "
                              "judged; left in place",
                              hint="run the command again: what it holds now is judged afresh")
        return _remove_own(folder, marker, refused, "a deploy's temporary directory", judged=bind.not_filled)


def remove_version(directory: Path, sha12: str) -> bool:
    """Remove what graphsite made in the version `sha12` kept in `directory` (v/<sha12>/: its page, its marker
    last), then the folder; return False when it is absent. A stray in it is refused, the folder left in place
    with its marker; a link or a file there is not graphsite's. No link is followed."""
    with _page_directory(directory) as page:
        if page is None:
            return False
        try:
            versions = open_below(page.fd, [VERSIONS], _LISTED)
        except FileNotFoundError:  # no v/: nothing kept
            return False
        except OSError as exc:  # named as the version's: a link at v/ is then said as what it is
            raise _failed(directory, f"{VERSIONS}/{sha12}", exc, "the version") from None
        try:
            mode = os.lstat(sha12, dir_fd=versions).st_mode
            if not stat.S_ISDIR(mode):
                raise DeployError(f"{directory / VERSIONS / sha12} is no directory: graphsite did not make it; "
                                  "left in place")
            return _remove_version_folder(page, versions, sha12, partial(bind.version_refusal, directory, sha12),
                                          "the version")
        except FileNotFoundError:  # no such version
            return False
        except OSError as exc:
            raise _failed(directory, f"{VERSIONS}/{sha12}", exc, "the version") from None
        finally:
            os.close(versions)


@contextmanager
def _page_directory(directory: Path) -> Iterator[_Folder | None]:
    """Yield the page directory `directory` open (never through a link), with its bind_root (followed, as a
    configured root is); None when it is absent."""
    with contextlib.ExitStack() as stack:
        try:
            root = _opened(stack, None, str(directory.parent))
            fd = _opened(stack, root, directory.name)
        except FileNotFoundError:
            fd = None
        except OSError as exc:
            raise _failed(directory, "", exc, "it", verb="open") from None
        yield _Folder(fd, root, directory.name, directory, "") if fd is not None else None


def _opened(stack: contextlib.ExitStack, parent: int | None, name: str) -> int:
    """Return the directory `name` in the one open as `parent` (None: `name` is a root path, followed), open for
    listing, closed with `stack`; a link is never followed (ELOOP)."""
    fd = os.open(name, _LISTED | os.O_CLOEXEC) if parent is None else open_below(parent, [name], _LISTED)
    stack.callback(os.close, fd)
    return fd


def _marker(folder: _Folder) -> bytes | None:
    """Return the marker of `folder` (to judge it by, and to put back should the folder not go); None when there
    is none that can be graphsite's (no file, a link, no regular file). One that cannot be read raises
    DeployError: an unreadable marker is not "no marker", and unlinking it needs no right to read it."""
    path = folder.path / MARKER
    return files.ours(path, "its marker", partial(files.read_own_at, folder.fd, MARKER, path))


def _said(stamp: Stamp) -> str:
    return (f"(fqdn={stamp.fqdn or '-'} id={stamp.id or '-'} created={stamp.created or '-'} "
            f"expires={stamp.expires or '-'})")


def _remove_own(folder: _Folder, marker: bytes | None, refused: Refusal, what: str,
                judged: Callable[[Mapping[str, Kind]], Sequence[str]] = bind.not_made) -> bool:
    """Remove what graphsite made in `folder` (the page directory, or a version folder), the marker last, then
    the folder by name while that name is still `folder`; put `marker` back when the folder cannot go. What
    `judged` says graphsite did not make is refused. Every OSError is a DeployError naming the path."""
    listing = _listing(folder)
    strays = judged(listing)
    if strays:
        raise refused(strays)
    if not folder.scope:  # each version folder as this one: its marker last, put back should the folder stay
        versions = sorted(p.split("/")[1] for p in listing if p.count("/") == 1)
        if versions:
            with contextlib.ExitStack() as stack:
                try:
                    below = _opened(stack, folder.fd, VERSIONS)
                except OSError as exc:
                    raise _failed(folder.top, VERSIONS, exc, "it") from None
                for name in versions:
                    _remove_version_folder(folder, below, name, refused, "a kept version")
        if VERSIONS in listing:
            _remove_entry(folder, VERSIONS, True, refused)
    for path in sorted(p for p in listing if _parts(p)[:-1] == _parts(folder.scope)
                       and p not in (_join(folder.scope, MARKER), VERSIONS)):
        _remove_entry(folder, _parts(path)[-1], False, refused)  # the page, the temporaries of its writes
    left = _left(folder)
    if left:  # appeared since the listing: the marker stays, and so does the folder
        raise refused(left)
    _at(folder, MARKER, lambda: _unlink_marker(folder))
    try:
        _still_there(folder)
        os.rmdir(folder.name, dir_fd=folder.parent)
    except FileNotFoundError:
        return False  # another hand took it meanwhile
    except (OSError, DeployError) as exc:
        if marker is not None:  # the folder stays graphsite's: `list` finds it, and a rerun finishes
            _at(folder, MARKER, lambda: write_atomic_at(folder.fd, MARKER, marker, owner=(bind.BIND_UID,) * 2))
        if isinstance(exc, DeployError):
            raise
        if exc.errno == errno.ENOTEMPTY:  # something came in after the last look
            raise refused(_left(folder)) from None
        raise _failed(folder.top, folder.scope, exc, what) from None
    return True


def _remove_version_folder(folder: _Folder, versions: int, name: str, refused: Refusal, what: str) -> bool:
    """Remove the version folder `name` in v/ (open as `versions`) of the page directory `folder`, as
    `_remove_own` does; False when it is absent."""
    with contextlib.ExitStack() as stack:
        try:
            fd = _opened(stack, versions, name)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _failed(folder.top, f"{VERSIONS}/{name}", exc, "it") from None
        inner = _Folder(fd, versions, name, folder.top, f"{VERSIONS}/{name}")
        return _remove_own(inner, _marker(inner), refused, what)


def _still_there(folder: _Folder) -> None:
    """Raise DeployError when the name `folder` was opened by is no longer that directory (another was renamed
    into its place since): FileNotFoundError when it is gone and so is the directory emptied."""
    emptied = os.fstat(folder.fd)
    try:
        now = os.lstat(folder.name, dir_fd=folder.parent)
    except FileNotFoundError:
        if emptied.st_nlink == 0:
            raise
        now = None
    if now is None or (now.st_dev, now.st_ino) != (emptied.st_dev, emptied.st_ino):
        raise DeployError(f"{folder.path}: not removed: another directory took its name while it was emptied; the "
                          "one emptied keeps its marker, the other is left as it is: look at both by hand")


def _listing(folder: _Folder) -> dict[str, Kind]:
    """Return {path below the page directory: its kind} of what is in `folder`: of the page directory, its v/ and
    the version folders in v/, or of one version folder; what is below an entry graphsite did not make is not
    read. Raise DeployError when a folder cannot be read."""
    listing = {_join(folder.scope, n): k for n, k in _kinds(folder, []).items()}
    if not folder.scope and listing.get(VERSIONS) == Kind.DIRECTORY:
        below = {f"{VERSIONS}/{n}": k for n, k in _kinds(folder, [VERSIONS]).items()}
        listing |= below
        for path, kind in below.items():
            if kind == Kind.DIRECTORY and bind.version_name(path.split("/")[1]):
                listing |= {f"{path}/{n}": k for n, k in _kinds(folder, _parts(path)).items()}
    return listing


def _kinds(folder: _Folder, below: list[str]) -> dict[str, Kind]:
    """Return {name: kind} of what is in `folder`/`below` (a link is OTHER, never followed); {} when it is gone
    since it was looked at."""
    try:
        # "." anew: a listing of its own, never the position of an earlier one
        fd = open_below(folder.fd, below, _LISTED) if below else os.open(".", _LISTED | os.O_CLOEXEC, dir_fd=folder.fd)
        with os.scandir(fd) as scan:
            try:
                return {entry.name: bind.kind_of(entry) for entry in scan}
            finally:
                os.close(fd)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _failed(folder.top, _join(folder.scope, "/".join(below)) if below else folder.scope, exc,
                      "what it holds", verb="list") from None


def _left(folder: _Folder) -> list[str]:
    """Return what is in `folder` besides its marker, as paths below the page directory."""
    return [_join(folder.scope, n) for n in sorted(_kinds(folder, [])) if n != MARKER]


def _remove_entry(folder: _Folder, name: str, is_directory: bool, refused: Refusal) -> None:
    """Remove graphsite's file or (empty) folder `name` in `folder`; a folder something came into since it was
    read stops the removal, naming what is there."""
    try:
        (os.rmdir if is_directory else os.unlink)(name, dir_fd=folder.fd)
    except FileNotFoundError:
        return  # gone already: what was to be done is done
    except OSError as exc:
        path = _join(folder.scope, name)
        if exc.errno != errno.ENOTEMPTY:
            raise _failed(folder.top, path, exc, "it") from None
        raise refused([f"{path}/{n}" for n in sorted(_kinds(folder, [name]))]) from None


def _unlink_marker(folder: _Folder) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(MARKER, dir_fd=folder.fd)


def _at(folder: _Folder, name: str, effect: Callable[[], None]) -> None:
    """Run `effect` on `name` in `folder`; an OSError is a DeployError naming its path."""
    try:
        effect()
    except OSError as exc:
        raise _failed(folder.top, _join(folder.scope, name), exc, "it") from None


def _join(scope: str, name: str) -> str:
    return f"{scope}/{name}" if scope else name


def _parts(path: str) -> list[str]:
    return path.split("/") if path else []


def _failed(top: Path, below: str, exc: OSError, what: str, *, verb: str = "remove") -> DeployError:
    """Return the one-line error of an OSError on `below` in the page directory `top`; a link or a file that took
    the place of a directory since it was judged is said as such, the link named (a rerun cannot help)."""
    path = top / below if below else top
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        return DeployError(f"{path}: not removed: {_why_no_directory(top, below)}")
    return DeployError(f"{path}: cannot {verb} {what}: {exc.strerror or exc}", hint=_HINT)


def _why_no_directory(top: Path, below: str) -> str:
    """Return why the path `below` in `top` cannot be opened as a directory: the first of its parts that is a
    symbolic link, named, or that one is no directory."""
    parts = _parts(below)
    for depth in range(len(parts) + 1):
        at = top.joinpath(*parts[:depth])
        said = files.kept_link(at)
        if said is not None:
            return f"{at} is {said}" if depth < len(parts) else said
    return "no directory any more: left as it is; look at it by hand"
