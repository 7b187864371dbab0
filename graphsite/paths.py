"""Where graphsite finds its own files: the theme, the embedded report, the deploy defaults, the schemas.

In a source checkout they are the top-level folders `theme/`, `content/`, `deploy/`; in an installed
wheel they are packaged under `graphsite/_data/`. Look in the wheel first, then the checkout.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_DATA = PACKAGE_DIR / "_data"
_CHECKOUT = PACKAGE_DIR.parent

DEFAULT_REPORT_NAME = "graph-engineering.md"


def data_dir(name: str) -> Path:
    """Return the directory `name` (theme, content, deploy) from the wheel or the source checkout."""
    for base in (_DATA, _CHECKOUT):
        candidate = base / name
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"graphsite's {name}/ folder is missing from the installation ({_DATA})")


def theme_dir() -> Path:
    return data_dir("theme")


def packaged_report() -> Path:
    return data_dir("content") / DEFAULT_REPORT_NAME


def default_source(cwd: Path | None = None) -> Path:
    """Return `content/graph-engineering.md` in the working directory, else the packaged copy."""
    local = (cwd or Path.cwd()) / "content" / DEFAULT_REPORT_NAME
    return local if local.is_file() else packaged_report()


def home_dir() -> Path | None:
    """Return the user's home directory: HOME when it is set, else the password database's entry (as
    `Path.home()` reads them); None when there is none, or when HOME is not an absolute path (empty: Python would
    take `/`; relative: what is under it would follow the working directory)."""
    if not os.environ.get("HOME", "/").startswith("/"):
        return None
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no HOME, and no entry in the password database
        return None
    return home if home.is_absolute() else None


def expand_user(text: str) -> Path | None:
    """Return the path `text` with a leading `~` (`home_dir()`) or `~name` (that user's home) expanded; None when
    it names a home there is none of."""
    if text == "~" or text.startswith("~/"):
        home = home_dir()
        return None if home is None else home / text[2:]
    try:
        return Path(text).expanduser()
    except RuntimeError:  # ~name of no user the password database knows
        return None


def user_cache_dir(*parts: str) -> Path | None:
    """Return graphsite's cache directory `parts` under the user's: $XDG_CACHE_HOME/graphsite, else
    ~/.cache/graphsite; None when there is neither (no home: `home_dir`). A relative (or empty) XDG_CACHE_HOME is
    ignored, as the XDG specification says: the cache would otherwise follow the working directory."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if base and Path(base).is_absolute():
        return Path(base).joinpath("graphsite", *parts)
    home = home_dir()
    return None if home is None else home.joinpath(".cache", "graphsite", *parts)


def schema_path(name: str) -> Path:
    """Return a JSON schema shipped in graphsite/schemas/ (see its SOURCES.md)."""
    return PACKAGE_DIR / "schemas" / name


def installed_record(module: str, distribution: str) -> tuple[Path, bytes] | None:
    """Return the folder of the installed package `module` and the dist-info RECORD of its distribution (the
    sha256 of each of its files, a compiled one included): what tells one installed build of it from another
    in a cache key, found and read without importing it. None when it is not installed, or not from exactly one
    dist-info of `distribution` beside it.

    Only sys.path is searched (importlib.machinery.PathFinder), not the finders on sys.meta_path: a module that
    one of those serves, as an editable install's finder does (setuptools'), is not found here, or is found with
    no dist-info beside it (an editable install's folder on sys.path). Either way None, and its caller keys no
    cache on it and does the work at every build: safe, only slower, as long as no other copy of the module is on
    sys.path. A finder ahead of PathFinder on sys.meta_path that serves one copy while another lies on sys.path
    with its dist-info makes this return that other copy's RECORD, not the imported one's. An installed wheel is
    found as its import finds it."""
    from importlib.machinery import PathFinder  # imported already; importlib.util costs 4% of a short build

    spec = PathFinder.find_spec(module)  # a top-level module, looked for on sys.path as its import would
    if spec is None or not spec.origin:
        return None
    package, wanted = Path(spec.origin).parent, _project_name(distribution)
    try:  # `{name}-{version}.dist-info`, the name as its installer wrote it (`PyYAML`, `typing_extensions`)
        found = [entry.path for entry in os.scandir(package.parent) if entry.name.endswith(".dist-info")
                 and _project_name(entry.name.removesuffix(".dist-info").rpartition("-")[0]) == wanted]
        return (package, Path(found[0], "RECORD").read_bytes()) if len(found) == 1 else None
    except OSError:
        return None


# a directory opened to be passed through (openat below it, fstat, mkdirat): O_PATH, where there is one, needs no read
# permission, so a directory this user may only traverse (/home at 0711) is walked as the kernel walks a path
_THROUGH = os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
_LISTED = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # a directory read (listed, emptied)


def open_directory(directory: Path) -> int:
    """Return the absolute `directory` open, to open what is below it (`open_below`): walked from `/` one directory
    at a time, none followed if it is a symbolic link, so it is the directory its path named when it was opened,
    whatever is renamed or linked above it later. Raise ValueError for a relative path, OSError as `open_below`."""
    if not directory.is_absolute():
        raise ValueError(f"not an absolute path: {directory}")
    root = os.open("/", _THROUGH)
    if directory == Path("/"):
        return root
    try:
        return open_below(root, directory.parts[1:], _THROUGH)
    finally:
        os.close(root)


def open_below(directory: int, names: Sequence[str], flags: int) -> int:
    """Return the file `names` lead to from the directory open as `directory`, opened with `flags`: each name opened
    below the one before (a directory, passed through), none followed if it is a symbolic link, so what is opened
    lies below that directory whatever was renamed or swapped for a link on the way since its path was checked.
    Raise ValueError for no names or a name that could step elsewhere (empty, `.`, `..`, holding a `/`); OSError as
    the open does, and always ELOOP for a symbolic link on the way or as the last name."""
    if not names or any(name in ("", ".", "..") or "/" in name or "\x00" in name for name in names):
        raise ValueError(f"not a path below a directory: {'/'.join(names)!r}")
    fd = directory
    try:
        for name in names[:-1]:
            parent, fd = fd, _open_at(fd, name, _THROUGH)
            if parent != directory:
                os.close(parent)
        return _open_at(fd, names[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC)
    finally:
        if fd != directory:
            os.close(fd)


def _open_at(directory: int, name: str, flags: int) -> int:
    """Return `name` in the directory open as `directory`, opened with `flags` (O_NOFOLLOW among them); raise
    OSError, ELOOP when `name` is a symbolic link (Linux says ENOTDIR for one opened with O_DIRECTORY)."""
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError as exc:
        # EMLINK: the BSDs' word for O_NOFOLLOW meeting a link
        if exc.errno in (errno.ENOTDIR, errno.EMLINK) and _is_link(directory, name):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from None
        raise


def _is_link(directory: int, name: str) -> bool:
    """Return whether `name` in the directory open as `directory` is a symbolic link; False when that cannot be
    told (the caller's own error then stands)."""
    import stat

    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _project_name(name: str) -> str:
    """Return a distribution's name as PEP 503 compares them: lowercase, each run of `-`, `_`, `.` one `-`."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


class PrivateDir:
    """A directory of graphsite's private cache, open as a descriptor: every read and write goes through it, so a
    link or a rename anywhere on its path after it was checked changes nothing (see `private_cache`). Two are equal
    when they are the same directory (device and inode): a memo keyed on one (`fonts.subset_woff2`) hits again
    when the next build opens the same cache."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        info = os.fstat(fd)
        self.identity = (info.st_dev, info.st_ino)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrivateDir) and other.identity == self.identity

    def __hash__(self) -> int:
        return hash(self.identity)

    def read(self, name: str, *, refresh: bool = False) -> bytes | None:
        """Return the file `name` if it is a regular file of this user's that no one else can write, else None:
        what the cache holds is trusted only if no one else could have put it there. `refresh`: set the time of
        the file read to now, so `prune` takes it for one just written (the least recently used go first)."""
        import stat

        try:  # O_NONBLOCK: a FIFO never blocks
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=self.fd)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o022:
                return None
            try:
                data = handle.read()
            except OSError:
                return None
            if refresh:
                with suppress(OSError):  # through the descriptor: the file checked and read, never another
                    os.utime(handle.fileno())
            return data

    def write(self, name: str, data: bytes) -> None:
        """Replace the file `name` with `data`, mode 0600, atomically (`atomic.write_atomic_at`); raise OSError."""
        from graphsite.atomic import write_atomic_at

        write_atomic_at(self.fd, name, data, mode=0o600)

    def prune(self, suffix: str, keep: int, spare: frozenset[str] = frozenset()) -> None:
        """Remove the oldest of the files graphsite names here, a digest's 64 lowercase hex digits then `suffix`
        (by their time: written, or read with `refresh`), beyond the newest `keep`, never one named in `spare` (a
        caller's own, still to be read); raise OSError. Any other file is left as it is: not graphsite's to remove."""
        found, spared = [], 0
        with os.scandir(self.fd) as entries:
            for entry in entries:
                if _digest_named(entry.name, suffix) and entry.is_file(follow_symlinks=False):
                    if entry.name in spare:
                        spared += 1
                    else:
                        found.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
        found.sort()
        for _, name in found[:max(0, len(found) + spared - keep)]:
            os.unlink(name, dir_fd=self.fd)


_HEX_DIGITS = frozenset("0123456789abcdef")


def _digest_named(name: str, suffix: str) -> bool:
    """Return whether `name` has the shape graphsite gives a cache file: a digest of 32 bytes in lowercase hex (as
    `hexdigest()` writes it), then `suffix`."""
    return len(name) == 64 + len(suffix) and name.endswith(suffix) and _HEX_DIGITS.issuperset(name[:64])


@contextmanager
def private_cache(*parts: str) -> Iterator[PrivateDir | None]:
    """Give graphsite's cache directory `parts` (made if missing) open as a `PrivateDir`, or None (no cache: the
    build goes on) when it cannot be made private: no home directory, or only a relative one; a directory on its
    way that is a symbolic link (after the path is resolved once), or that another user owns or can write (a
    sticky one of ours or root's, such as /tmp, excepted); a cache directory that is not this user's.

    The path is walked one directory at a time from `/`, each opened without following a link inside the one
    before, so what is checked is what is used. A cache directory of ours found open to others may hold files
    planted while it was open: it is closed first, so nothing new can be planted, then emptied, never adopted."""
    directory = user_cache_dir(*parts)
    fd = _open_private(directory) if directory is not None else None
    try:
        yield PrivateDir(fd) if fd is not None else None
    finally:
        if fd is not None:
            os.close(fd)


_EMPTYING = 0o1700  # a cache directory closed to others but not yet emptied: any mode but 0700 is emptied first


def _open_private(directory: Path) -> int | None:
    """Return `directory` open (made if missing) when it and every directory above it are private, else None."""
    import stat

    names = Path(os.path.realpath(directory)).parts[1:]
    me = os.geteuid()
    try:  # the directories above it only need passing through (`_THROUGH`: an ancestor at 0711 keeps the cache)
        fd = os.open("/", _THROUGH if names else _LISTED)
    except OSError:
        return None
    private = False
    try:
        for number, name in enumerate(names, 1):
            info = os.fstat(fd)
            shared = stat.S_IMODE(info.st_mode) & 0o022 and not info.st_mode & stat.S_ISVTX
            if info.st_uid not in (me, 0) or shared:  # another user could swap what lies below
                return None
            with suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=fd)
            parent, fd = fd, os.open(name, _LISTED if number == len(names) else _THROUGH, dir_fd=fd)
            os.close(parent)
        info = os.fstat(fd)
        if info.st_uid != me:
            return None
        if stat.S_IMODE(info.st_mode) != 0o700:
            os.fchmod(fd, _EMPTYING)  # closed to others first, so nothing new is planted while it is emptied
            _empty(fd)
            os.fchmod(fd, 0o700)  # only now: one that could not be emptied is emptied again at the next build
        private = True
    except OSError:
        return None
    finally:
        if not private:  # every way out but the one that returns it closes the descriptor
            os.close(fd)
    return fd


def _empty(fd: int) -> None:
    """Remove everything in the directory open as `fd`."""
    import shutil  # only to empty a directory found open (shutil brings bz2 and lzma: 2 ms a start-up)

    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.name, dir_fd=fd)
            else:
                os.unlink(entry.name, dir_fd=fd)
