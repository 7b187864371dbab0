"""Where graphsite finds its own files: the theme, the embedded report, the deploy defaults, the schemas.

In a source checkout they are the top-level folders `theme/`, `content/`, `deploy/`; in an installed
wheel they are packaged under `graphsite/_data/`. Look in the wheel first, then the checkout.
"""

from __future__ import annotations

import os
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


def user_cache_dir(*parts: str) -> Path:
    """Return graphsite's cache directory `parts` under the user's: $XDG_CACHE_HOME/graphsite, else
    ~/.cache/graphsite. A relative (or empty) XDG_CACHE_HOME is ignored, as the XDG specification says: the
    cache would otherwise follow the working directory (and the compiled templates are code)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root.joinpath("graphsite", *parts)


def schema_path(name: str) -> Path:
    """Return a JSON schema shipped in graphsite/schemas/ (see its SOURCES.md)."""
    return PACKAGE_DIR / "schemas" / name


def private_cache_dir(*parts: str) -> Path | None:
    """Return graphsite's cache directory `parts` (made if missing) when it is a real directory of this user's,
    mode 0700, or None when it cannot be made so (or there is no home directory, or only a relative one). A
    directory of ours found open to others may hold files planted while it was open: it is closed first, so
    nothing new can be planted, then emptied, never adopted. Both are done on the directory opened without
    following a symlink, so a link swapped in after the check is never followed (what is emptied is the directory
    that was checked)."""
    import stat

    try:
        directory = user_cache_dir(*parts)
    except (RuntimeError, KeyError):  # no HOME and no passwd entry: no cache, the build goes on
        return None
    if not directory.is_absolute():  # a relative HOME: a cache that follows the working directory is none
        return None
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            return None
        if stat.S_IMODE(info.st_mode) != 0o700:
            import shutil  # only to empty a directory found open (shutil brings bz2 and lzma: 2 ms a start-up)

            os.fchmod(fd, 0o700)
            for entry in os.scandir(fd):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.name, dir_fd=fd)
                else:
                    os.unlink(entry.name, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    return directory


def read_private(path: Path) -> bytes | None:
    """Return the file at `path` (in a `private_cache_dir`) if it is a regular file of this user's that no one
    else can write, else None: what the cache holds is trusted only if no one else could have put it there."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO never blocks
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o022:
            return None
        try:
            return handle.read()
        except OSError:
            return None
