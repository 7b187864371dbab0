"""Content mode `bind`: the page in a host directory owned by 1000:1000, bound read-only to /srv
(the report's recipe). A marker file records that graphsite made the directory, for which deployment, when,
and until when. A new directory is filled under a temporary name (`.NAME.<random>.tmp`) and renamed into
place, so that the directory never exists without its marker; a run killed while filling it leaves that
temporary directory, which list shows and teardown, gc and the next deploy of NAME remove.

The directory, its files and its temporaries are made, read, judged and removed through descriptors, never
through a symbolic link (publisher/files.py): a link named like a deployment is never graphsite's, even when its
target holds a marker."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
from collections.abc import Collection, Mapping, Sequence
from enum import StrEnum
from pathlib import Path

from graphsite import output
from graphsite.atomic import new_temporary, temporary_pattern, write_atomic_at
from graphsite.errors import ChangedSince, DeployError, UnknownVersions
from graphsite.publisher import files
from graphsite.publisher.deployment import MARKER, NEEDS_PROOF, Claim, Leftover, PageDirectory, Stamp, whose_now

BIND_UID = 1000  # the uid Caddy images run as; the report's pitfall #1
PAGE = "index.html"
VERSIONS = "v"  # the kept versions: v/<sha12>/index.html, each with its marker (publisher/versions.py)
_SHA12 = re.compile(r"[0-9a-f]{12}")
# a killed deploy's page directory (ensure_bind_dir's), of the deployment it names
_TEMPORARY = temporary_pattern(r"(?P<name>[a-z0-9-]+)")
# a killed write's temporaries: of the page or the marker in the page directory, of a version folder under v/;
# only a random part graphsite writes (atomic.TEMPORARY_RANDOM), so a file anyone else named like one is a stray
_OWN_TEMPORARY = temporary_pattern("|".join(re.escape(name) for name in (PAGE, MARKER)))
_VERSION_TEMPORARY = temporary_pattern(_SHA12.pattern)


def ensure_bind_dir(directory: Path, page: bytes, stamp: Stamp, sha256: str, seen: PageDirectory) -> bool:
    """Write index.html into `directory` (created and chowned to 1000:1000); return True when it was created.
    A symbolic link at `directory` is refused, never followed. `seen`: the directory as the caller judged it;
    what is there when it is opened for the write (its marker read through that descriptor) must be that, else
    the write is refused (`changed_since`) and nothing is written."""
    domain = stamp.fqdn.partition(".")[2]
    try:
        directory.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        with files.opened(directory.parent) as root:
            existing = _open_own(root, directory)
            if existing is not None:
                try:
                    now = PageDirectory(directory, there=True, stamp=_stamp_at(existing, directory))
                    refusal = changed_since(seen, now, domain)
                    if refusal is not None:
                        raise refusal
                    _fill(existing, page, stamp, sha256)
                finally:
                    os.close(existing)
                return False
            refusal = changed_since(seen, PageDirectory(directory), domain)
            if refusal is not None:
                raise refusal
            building, _ = new_temporary(directory.name, lambda name: os.mkdir(name, 0o700, dir_fd=root))
            try:
                with files.opened(directory.parent, building) as fd:
                    _fill(fd, page, stamp, sha256)
                # onto a directory made meanwhile: an empty one is replaced, any other refuses (ENOTEMPTY, ENOTDIR)
                os.rename(building, directory.name, src_dir_fd=root, dst_dir_fd=root)
            except BaseException:
                shutil.rmtree(building, dir_fd=root, ignore_errors=True)
                raise
    except OSError as exc:
        raise DeployError(f"deploy.bind_root: cannot prepare {directory}: {exc.strerror or exc}",
                          hint="deploy.bind_root must be a directory graphsite may write and chown to uid 1000 "
                               "(root), or use --content config") \
            from None
    return True


def _open_own(root: int, directory: Path) -> int | None:
    """Return a descriptor of `directory` (a name in the directory open as `root`), None when it is absent;
    raise DeployError when it is a symbolic link or no directory."""
    try:
        return os.open(directory.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
    raise files.link_refusal(directory, "page directory") or DeployError(
        f"{directory} is not a directory: graphsite did not make it", hint="choose another subdomain or another "
        "deploy.bind_root") from None


def _fill(directory: int, page: bytes, stamp: Stamp, sha256: str) -> None:
    """Write the marker and the page into the directory open as `directory`, all owned by 1000:1000."""
    owner = (BIND_UID, BIND_UID)
    write_atomic_at(directory, MARKER, stamp.marker(sha256), owner=owner)
    write_atomic_at(directory, PAGE, page, owner=owner)
    os.fchown(directory, *owner)
    os.fchmod(directory, 0o755)


def read_page(directory: Path) -> bytes | None:
    """Return the page in `directory`, None when there is none (or `directory` is a link: never followed); a
    read that failed raises DeployError: the undo of a redeploy must not take it for "no page to put back"."""
    return files.read_ours(directory.parent, directory.name, PAGE, what="the page")


def put_back_page(directory: Path, page: bytes, ours: Collection[Stamp]) -> bool:
    """Write `page` back into `directory` (the undo of a redeploy) while the marker there, read through the
    descriptor the write goes through, is one of `ours` (the deployment's: the run's stamp, the one its survey
    found); raise DeployError, nothing written, for any other (a directory swapped since: another
    configuration's), OSError when `directory` is a link."""
    with files.opened(directory.parent, directory.name) as fd:
        if _stamp_at(fd, directory) not in ours:
            raise DeployError(f"{directory}: its marker is no longer this deployment's; the previous page was not "
                              "put back there", hint=f"look at {directory}: something else changed it since")
        write_atomic_at(fd, PAGE, page, owner=(BIND_UID, BIND_UID))
    return True


def temporaries(bind_root: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
    """Return {subdomain: {directory: leftover}} of the temporary directories a killed deploy left in `bind_root`:
    named after the deployment, holding nothing but the marker and the page (or their temporary files), with a
    marker of this configuration's (OURS) or none yet, or an older graphsite's (one of NEEDS_PROOF: ours only
    beside a proven resource of the name, as `adopted` says), and the stamp that marker holds (read once, for
    both). Another configuration's, on a shared bind root, is not one."""
    found: dict[str, dict[Path, Leftover]] = {}
    # a root that cannot be listed raises (glob would say "nothing"), and the caller names it
    for path in files.directories(bind_root) if bind_root.is_dir() else []:
        name = temporary_name(path.name)
        owner = _temporary_claim(path, name, domain) if name else None
        if owner is not None:
            found.setdefault(name, {})[path] = owner
    return found


def temporary_name(dirname: str) -> str:
    """Return the deployment a temporary page directory's name (`.NAME.<random>.tmp`) carries, else ''."""
    match = _TEMPORARY.fullmatch(dirname)
    return match["name"] if match else ""


def temporary_claim(entries: dict[str, bool], stamp: Stamp | None, name: str, domain: str) -> Claim | None:
    """Return whose a temporary directory for `name` holding `entries` ({file name: is a regular file}) with the
    marker's `stamp` is under `domain`: OURS or one of NEEDS_PROOF (UNFINISHED: no marker yet, it names no
    domain), else None (something _fill does not write, a marker that does not parse, another's)."""
    ours = {MARKER, PAGE}
    for entry, regular in entries.items():
        written = entry in ours or bool(_OWN_TEMPORARY.fullmatch(entry))  # as removal judges it (not_filled)
        if not written or not regular:
            return None
    if MARKER not in entries:  # killed before the marker was written
        return Claim.UNFINISHED
    owner = stamp.claim(name, domain) if stamp is not None else None  # written whole (atomically), or not ours
    return owner if owner == Claim.OURS or owner in NEEDS_PROOF else None


def _temporary_claim(directory: Path, name: str, domain: str) -> Leftover | None:
    """Return `temporary_claim` of the temporary directory at `directory` with its marker's stamp, None when it
    is not one or it is gone since listed."""
    try:
        with files.opened(directory.parent, directory.name) as fd, os.scandir(fd) as scan:
            entries = {entry.name: entry.is_file(follow_symlinks=False) for entry in scan}
    except FileNotFoundError:  # removed since it was listed (its deploy finished, or a teardown)
        return None
    except OSError as exc:  # one that cannot be looked into is not taken for "not ours": nothing is decided on it
        raise DeployError(f"{directory}: cannot list a deploy's temporary directory: {exc.strerror or exc}",
                          hint="check deploy.bind_root's permissions and the disk, then run the command again") \
            from None
    stamp = bind_stamp(directory) if MARKER in entries else None
    owner = temporary_claim(entries, stamp, name, domain)
    return Leftover(owner, stamp) if owner is not None else None


_MARKER_READ = "the page directory's marker"


def bind_stamp(directory: Path) -> Stamp | None:
    """Return the stamp of a directory graphsite made (its marker), else None."""
    data = files.read_ours(directory.parent, directory.name, MARKER, what=_MARKER_READ)
    if data is None:
        return None
    return Stamp.from_marker(data.decode("utf-8", errors="replace"))


def _stamp_at(fd: int, directory: Path) -> Stamp | None:
    """Return the stamp the marker in the directory open as `fd` holds (`directory` names it), as bind_stamp."""
    data = files.ours(directory / MARKER, _MARKER_READ, lambda: files.read_own_at(fd, MARKER, directory / MARKER))
    return Stamp.from_marker(data.decode("utf-8", errors="replace")) if data is not None else None


def changed_since(surveyed: PageDirectory, now: PageDirectory, domain: str) -> ChangedSince | None:
    """Return the refusal to write into the page directory `now` (what is there right before the write) when it
    is not as the plan's survey found it (`surveyed`): there or not, a link or not, with the same marker. Whose it
    is was judged on that look; one made, swapped or changed since (by another configuration sharing
    deploy.bind_root) would be written into unjudged. None when it is as surveyed."""
    if (now.there, now.link, now.stamp) == (surveyed.there, surveyed.link, surveyed.stamp):
        return None
    path = now.path
    if not now.there:
        said = None
    elif now.link is not None:
        said = f"a symbolic link to {output.shown(now.link)}, which graphsite never follows"
    else:
        said = whose_now(now.stamp, path.name, domain)
    return files.changed_since(path, "directory", "deploy.bind_root", was_there=surveyed.there, now=said)


def own_stamp(directory: Path) -> Stamp | None:
    """Return the stamp of `directory` when its marker says graphsite made it for the name it has, else None
    (one whose marker names another deployment, or a killed deploy's `.NAME.<random>.tmp`, is not that name's)."""
    stamp = bind_stamp(directory)
    return stamp if stamp is not None and stamp.name == directory.name else None


def page_directory(directory: Path) -> PageDirectory:
    """Return what is at the page directory `directory`, from one look: whether anything is there, where a link
    there leads, and the stamp its marker holds (whatever name it gives: whose it is is the caller's judgement).
    A look or a marker that cannot be read raises DeployError naming it: unknown, never "absent"."""
    target = files.link_target(directory)
    if target is not None:  # never followed: what is behind it is no marker of graphsite's
        return PageDirectory(directory, there=True, link=target)
    if files.looked_at(directory) is None:
        return PageDirectory(directory)
    return PageDirectory(directory, there=True, stamp=bind_stamp(directory))


def made_by_graphsite(directory: Path) -> bool:
    return own_stamp(directory) is not None


def bind_dirs(bind_root: Path) -> dict[str, tuple[Path, Stamp]]:
    """Return {subdomain: (directory, its stamp)} of the directories under `bind_root` that graphsite made for
    the name they have (a killed deploy's `.NAME.<random>.tmp`, which holds a marker too, is one of
    `temporaries`)."""
    # a root that cannot be listed raises OSError: the caller names the system it could not read
    children = files.directories(bind_root) if bind_root.is_dir() else []
    return {path.name: (path, stamp) for path in children if (stamp := own_stamp(path)) is not None}


# --- kept versions: <directory>/v/<sha12>/ ------------------------------------------------------------------------


def version_markers(directory: Path) -> dict[str, str | None]:
    """Return {sha12: its marker's text} of the versions kept in `directory`/v/ (None: no marker that can be
    graphsite's, e.g. a link); {} when there is no `directory` or no v/. A link or a file where either should be
    raises DeployError naming it (what is behind it was not read: the versions are unknown, not none), and so does
    a read that failed: nothing is decided on it."""
    found: dict[str, str | None] = {}
    for name, kind in sorted(_entries(directory, VERSIONS).items()):
        if not _SHA12.fullmatch(name):  # a killed write's .<sha12>.<random>.tmp: teardown takes it with the rest
            continue
        marker = files.read_ours(directory.parent, directory.name, VERSIONS, name, MARKER,
                                 what="a kept version's marker") if kind == Kind.DIRECTORY else None
        found[name] = marker.decode("utf-8", errors="replace") if marker is not None else None
    return found


def strays(directory: Path) -> tuple[str, ...]:
    """Return what is in `directory`, in its v/ and in the version folders there that graphsite did not put there
    ('notes', 'v/notes', 'v/<sha12>/notes'); () when there is no `directory`. A link or a file where the directory
    or v/ should be raises UnknownVersions, a read that failed DeployError: removing the directory would take
    with it what was not read."""
    top = list(_entries(directory))
    below = _entries(directory, VERSIONS) if VERSIONS in top else {}
    inside = {f"{VERSIONS}/{name}/{entry}": kind for name, folder in below.items()
              if folder == Kind.DIRECTORY and version_name(name)
              for entry, kind in _entries(directory, VERSIONS, name).items()}
    return stray_entries(top, list(below)) + not_made(inside)


def stray_entries(top: list[str], below: list[str]) -> tuple[str, ...]:
    """Return which of the entries of a page directory (`top`) and of its v/ (`below`, as `v/NAME`) graphsite
    did not make, judged by name alone (`not_made` with the kinds graphsite gives them)."""
    listing = {name: Kind.DIRECTORY if name == VERSIONS else Kind.FILE for name in top}
    return not_made(listing | {f"{VERSIONS}/{name}": Kind.DIRECTORY for name in below})


class Kind(StrEnum):
    """What an entry of a page directory is, as listed (a symbolic link is OTHER: never followed)."""

    FILE = "file"
    DIRECTORY = "directory"
    OTHER = "other"


def kind_of(entry: os.DirEntry[str]) -> Kind:
    """Return what a listed entry is, never following a link (a stat that fails raises OSError)."""
    if entry.is_dir(follow_symlinks=False):
        return Kind.DIRECTORY
    return Kind.FILE if entry.is_file(follow_symlinks=False) else Kind.OTHER


def not_made(listing: Mapping[str, Kind]) -> tuple[str, ...]:
    """Return which entries of a page directory graphsite did not make, as paths below it ('notes', 'v/notes',
    'v/<sha12>/notes'), the directory's own first: all but the page and the marker (files), v/ (a directory),
    the version folders in it (directories named as graphsite names them), a page and a marker in those, and the
    temporaries of its writes. What is below a stray is not in `listing`: it is never read."""
    return tuple(sorted((path for path, kind in listing.items() if not _made(path.split("/"), kind)),
                        key=lambda path: (path.count("/"), path)))


def not_filled(listing: Mapping[str, Kind]) -> tuple[str, ...]:
    """Return which entries of a deploy's temporary directory (its own entries only) are not what a deploy fills
    it with: its page, its marker and their temporaries (files); a v/ is one, and what is below it is not named."""
    return tuple(sorted(name for name, kind in listing.items()
                        if "/" not in name and (kind != Kind.FILE or not _made([name], kind))))


def _made(parts: list[str], kind: Kind) -> bool:
    if parts == [VERSIONS]:
        return kind == Kind.DIRECTORY
    if len(parts) == 2 and parts[0] == VERSIONS:
        return kind == Kind.DIRECTORY and version_name(parts[1])
    own = len(parts) == 1 or len(parts) == 3 and parts[0] == VERSIONS
    return own and kind == Kind.FILE and (parts[-1] in (PAGE, MARKER) or bool(_OWN_TEMPORARY.fullmatch(parts[-1])))


def version_name(name: str) -> bool:
    """True when `name` is one graphsite gives a folder under v/: a version's short sha, or a killed write's
    temporary of one."""
    return bool(_SHA12.fullmatch(name) or _VERSION_TEMPORARY.fullmatch(name))


SHOWN = 3  # the strays a refusal names before "and N more"


def strays_refusal(directory: Path, strays: Sequence[str], *, name: str) -> DeployError:
    """Return the refusal to remove `directory` (of deployment `name`), which holds `strays` (paths below it):
    it is left in place, marker and all, until they are moved out."""
    return DeployError(f"{directory}: not removed: graphsite did not put {_shown(strays)} there; left in place with "
                       f"its marker: move them out of it, then run `graphsite teardown {name}` again")


def version_refusal(directory: Path, sha12: str, strays: Sequence[str]) -> DeployError:
    """Return the refusal to remove the version `sha12` kept in `directory`, whose folder holds `strays`."""
    return DeployError(f"{directory}: version {sha12} not removed: graphsite did not put {_shown(strays)} there; "
                       f"left in place with its marker: move them out of it, and the next deploy of "
                       f"{directory.name} drops it")


def _shown(strays: Sequence[str]) -> str:
    """Return a few of `strays` (names anyone who can write in the directory chose: escaped as output.shown
    does), then how many more."""
    more = f" and {len(strays) - SHOWN} more" if len(strays) > SHOWN else ""
    shown = ", ".join(output.shown(stray) for stray in strays[:SHOWN]) + more
    return shown or "what appeared in it meanwhile"  # gone again by the time it was looked at


def _entries(directory: Path, *names: str) -> dict[str, Kind]:
    """Return {name: its kind (a link is OTHER)} of what is in `directory` (or in `names` under it), {} when it is
    absent; raise as version_markers does."""
    try:
        with files.opened(directory.parent, directory.name, *names) as fd, os.scandir(fd) as scan:
            return {entry.name: kind_of(entry) for entry in scan}
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if exc.errno in files.NOT_OURS:
            raise _unknown_versions(directory) from None
        raise DeployError(f"{directory.joinpath(*names)}: cannot list what it holds: {exc.strerror or exc}",
                          hint="check deploy.bind_root's permissions and the disk, then run the command again") \
            from None


def _unknown_versions(directory: Path) -> DeployError:
    """Return the refusal of a deploy.bind_root that is no directory, or of a `directory` or a v/ in it that is a
    link or no directory (`opened` refused one): UnknownVersions; or, when one of them cannot even be looked at
    (a permission changed since), the failed read it is."""
    try:
        if files.mode(directory.parent, follow=True) is None:  # followed, as `opened` follows it: a file, a link loop
            return UnknownVersions(f"the kept versions of {directory} are unknown: deploy.bind_root "
                                   f"{directory.parent} is no directory (a file, or a link that leads to none)",
                                   hint="deploy.bind_root must name the directory graphsite keeps the pages in")
        why = f"{directory} or {directory / VERSIONS} is no directory"  # changed since it was opened: still unknown
        for path, what in ((directory, "page directory"), (directory / VERSIONS, "kept versions")):
            mode = files.mode(path)
            if mode is not None and stat.S_ISLNK(mode):
                target = files.link_target(path)
                why = files.link_said(path, target, what) if target is not None else f"{path} is a symbolic link"
                break
            if mode is not None and not stat.S_ISDIR(mode):
                why = f"{path} is not a directory: graphsite did not make it; remove it by hand if it is yours"
                break
    except OSError as exc:
        return DeployError(f"{exc.filename}: cannot look at it: {exc.strerror or exc}",
                           hint="check deploy.bind_root's permissions and the disk, then run the command again")
    return UnknownVersions(f"the kept versions of {directory} are unknown: {why}",
                           hint="nothing is decided on versions that were not read")


def version_page(directory: Path, sha12: str) -> bytes | None:
    """Return the page of the version `sha12` kept in `directory`, None when there is none."""
    return files.read_ours(directory.parent, directory.name, VERSIONS, sha12, PAGE, what="a kept version's page")


def keep_version(directory: Path, sha12: str, page: bytes, marker: str) -> bool:
    """Keep `page` as version `sha12` of `directory` (v/<sha12>/, filled under a temporary name and renamed into
    place, all owned by 1000:1000); return False when a directory of that name is there already (content-addressed:
    the caller proves it is this deployment's version first); raise DeployError when anything else is there."""
    owner = (BIND_UID, BIND_UID)
    try:
        with files.opened(directory.parent, directory.name) as top, contextlib.suppress(FileExistsError):
            os.mkdir(VERSIONS, 0o755, dir_fd=top)
        with files.opened(directory.parent, directory.name, VERSIONS) as fd:
            os.fchown(fd, *owner)
            try:
                if stat.S_ISDIR(os.lstat(sha12, dir_fd=fd).st_mode):
                    return False  # its caller proved it this deployment's version (deploy's _ensure_directory)
                raise DeployError(f"{directory / VERSIONS / sha12} is no directory: graphsite did not make it; "
                                  "left in place", hint="remove it by hand if it is yours, then deploy again")
            except FileNotFoundError:
                pass
            building, _ = new_temporary(sha12, lambda name: os.mkdir(name, 0o700, dir_fd=fd))
            try:
                with files.opened(directory.parent, directory.name, VERSIONS, building) as inner:
                    write_atomic_at(inner, MARKER, marker, owner=owner)
                    write_atomic_at(inner, PAGE, page, owner=owner)
                    os.fchown(inner, *owner)
                    os.fchmod(inner, 0o755)
                os.rename(building, sha12, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                shutil.rmtree(building, dir_fd=fd, ignore_errors=True)
                raise
    except OSError as exc:
        raise DeployError(f"{directory}: cannot keep version {sha12}: {exc.strerror or exc}",
                          hint="deploy.bind_root must be a directory graphsite may write and chown to uid 1000") \
            from None
    return True


def restamp_version(directory: Path, sha12: str, marker: str) -> bool:
    """Write `marker` as the marker of the version `sha12` kept in `directory` (atomically, owned by 1000:1000,
    through no link); return False when no such version is there. The caller proved the folder ours first."""
    try:
        with files.opened(directory.parent, directory.name, VERSIONS, sha12) as fd:
            write_atomic_at(fd, MARKER, marker, owner=(BIND_UID, BIND_UID))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise DeployError(f"{directory / VERSIONS / sha12}: cannot restamp the version: {exc.strerror or exc}",
                          hint="deploy.bind_root must be a directory graphsite may write and chown to uid 1000") \
            from None
    return True
