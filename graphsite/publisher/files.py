"""graphsite's own files on this host (the route file, the page's directory, what is in it, their temporaries):
opened, read, judged and removed without following a symbolic link.

A root is the operator's setting (deploy.dynamic_dir, deploy.bind_root) and is followed like any path one
configures; a name below it is graphsite's and never is: a link there would lead a root deploy to write, chown or
remove outside the root. graphsite makes no symbolic link, so a link where it keeps its own file or directory is
never its own, whatever the target holds; it is refused, or left alone, with the target untouched.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from graphsite import output
from graphsite.errors import ChangedSince, DeployError

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted where a file is expected must not hang the run; a file ignores it.
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
assert shutil.rmtree.avoids_symlink_attacks, "shutil.rmtree needs dir_fd support (Linux has it)"


def mode(path: Path, *, follow: bool = False) -> int | None:
    """Return the mode of `path` (of what a link at it leads to with `follow`), None when nothing is there (a link
    loop, a file on the way: nothing that is a directory, with `follow`); raise OSError when it cannot be looked
    at (EACCES, EIO): never taken for absent."""
    try:
        found = (os.stat if follow else os.lstat)(path).st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return None
        raise
    return None if follow and not stat.S_ISDIR(found) else found


def looked_at(path: Path, *, follow: bool = False) -> int | None:
    """Return mode(`path`, follow=`follow`); a look that failed (EACCES, EIO) raises DeployError naming it."""
    try:
        return mode(path, follow=follow)
    except OSError as exc:
        raise DeployError(f"{path}: cannot look at it: {exc.strerror or exc}",
                          hint="check the permissions of it and of the directories above it, then run the "
                               "command again") from None


def link_target(path: Path) -> str | None:
    """Return where the symbolic link at `path` points, or None when `path` is not a link (or is absent)."""
    try:
        return os.readlink(path)
    except OSError:
        return None


def link_refusal(path: Path, what: str) -> DeployError | None:
    """Return the one-line refusal of a symbolic link at `path` where graphsite keeps its own `what`, or None
    when `path` is no link."""
    return refused_link(path, link_target(path), what)


def refused_link(path: Path, target: str | None, what: str) -> DeployError | None:
    """Return the refusal of a symbolic link to `target` at `path` (None: no link there), as link_refusal."""
    if target is None:
        return None
    return DeployError(f"{link_said(path, target, what)}; remove the link (its target is not touched) or choose "
                       "another subdomain")


def link_said(path: Path, target: str, what: str) -> str:
    """Return what a symbolic link to `target` at `path` is, where graphsite keeps its own `what` (no advice:
    a line of `list` says it as well as a refusal). The target is anyone's who could make the link: shown escaped."""
    return (f"{path} is a symbolic link to {output.shown(target)}, where graphsite keeps its own {what}: "
            "graphsite never follows one")


def changed_since(path: Path, what: str, setting: str, *, was_there: bool, now: str | None) -> ChangedSince:
    """Return the refusal to write graphsite's own `what` at `path` (under `setting`) when it is not as the plan's
    survey found it: removed since (`now` None), or made or changed since, `now` saying whose it is now."""
    if now is None:
        return ChangedSince(f"{path} was removed since this deploy's plan read it; nothing written",
                           hint=f"something else changes {setting}: look at what, then deploy again")
    return ChangedSince(f"{path} {'changed' if was_there else 'appeared'} since this deploy's plan read it: {now}; "
                       "left as it is",
                       hint=f"another graphsite configuration may deploy this name: look at the {what}, then choose "
                            "another subdomain or deploy again")


def kept_link(path: Path) -> str | None:
    """Return why teardown leaves the symbolic link at `path` alone, or None when `path` is no link."""
    return kept(link_target(path))


def kept(target: str | None) -> str | None:
    """Return why teardown leaves a symbolic link to `target` alone (None: no link there), its target escaped as
    link_said's."""
    if target is None:
        return None
    return (f"a symbolic link to {output.shown(target)}, not something graphsite made: left as it is, the target "
            "untouched (graphsite never follows a link); remove the link by hand if it is not needed")


@contextmanager
def opened(root: Path, *names: str) -> Iterator[int]:
    """Yield a descriptor of the directory root/names…: `root` is followed, each of `names` is not (ENOTDIR or
    ELOOP when one is a link or no directory, FileNotFoundError when one is absent)."""
    fd = os.open(root, _DIRECTORY)
    try:
        for name in names:
            inner = os.open(name, _DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def read_own(root: Path, *names: str, limit: int = -1) -> bytes | None:
    """Return the content (at most `limit` bytes) of the regular file root/names…, or None when there is none;
    raise OSError when a name below `root` is a link, or the file is no regular file or cannot be read."""
    try:
        with opened(root, *names[:-1]) as directory:
            return read_own_at(directory, names[-1], root.joinpath(*names), limit=limit)
    except FileNotFoundError:
        return None


def read_own_at(directory: int, name: str, path: Path, *, limit: int = -1) -> bytes | None:
    """Return the content of the regular file `name` in the directory open as `directory` (`path` names it in an
    error), as read_own."""
    try:
        fd = os.open(name, _FILE, dir_fd=directory)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return handle.read(limit)


# What a name of graphsite's own holds when it is not graphsite's kind of file: a link (never followed), something
# that is no regular file or no directory. Such a thing is not graphsite's; any other error is a read that failed.
NOT_OURS = (errno.ELOOP, errno.EINVAL, errno.ENOTDIR, errno.EISDIR)


def read_ours(root: Path, *names: str, what: str, limit: int = -1) -> bytes | None:
    """Return the content of root/names… when it can be graphsite's file; None when there is none, or when it is
    a link or no regular file (never graphsite's); raise DeployError naming `what` for any other failure: a read
    that failed is not "absent", and nothing is decided on it."""
    return ours(root.joinpath(*names), what, lambda: read_own(root, *names, limit=limit))


def ours(path: Path, what: str, read: Callable[[], bytes | None]) -> bytes | None:
    """Return what `read` gives of graphsite's file at `path` (`what`), None when it is a link or no regular file,
    as read_ours."""
    try:
        return read()
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) or exc.errno in NOT_OURS:
            return None
        raise DeployError(f"{path}: cannot read {what}: {exc.strerror or exc}",
                          hint="nothing is decided on a file that could not be read: check its permissions and the "
                               "disk, then run the command again") from None


def directories(root: Path) -> list[Path]:
    """Return the directories in `root` (links to one excluded), sorted; raise OSError when `root` cannot be
    listed. The entries' own types are read, so an entry is never skipped because a stat of it failed."""
    with os.scandir(root) as scan:
        return sorted(root / entry.name for entry in scan if entry.is_dir(follow_symlinks=False))
