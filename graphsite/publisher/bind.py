"""Content mode `bind`: the page in a host directory owned by 1000:1000, bound read-only to /srv
(the report's recipe). A marker file records that graphsite made the directory, for which deployment, when,
and until when. A new directory is filled under a temporary name (`.NAME.<random>.tmp`) and renamed into
place, so that the directory never exists without its marker; a run killed while filling it leaves that
temporary directory, which list shows and teardown, gc and the next deploy of NAME remove."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from graphsite.atomic import TEMPORARY_SUFFIX, temporary_prefix, write_atomic
from graphsite.errors import DeployError
from graphsite.publisher.deployment import MARKER, Stamp

BIND_UID = 1000  # the uid Caddy images run as; the report's pitfall #1
PAGE = "index.html"
_TEMPORARY = re.compile(r"^\.(?P<name>[a-z0-9-]+)\.[^/.]+" + re.escape(TEMPORARY_SUFFIX) + "$")


def ensure_bind_dir(directory: Path, page: bytes, stamp: Stamp, sha256: str) -> bool:
    """Write index.html into `directory` (created and chowned to 1000:1000); return True when it was created."""
    try:
        if directory.exists():
            _fill(directory, page, stamp, sha256)
            return False
        directory.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=temporary_prefix(directory), suffix=TEMPORARY_SUFFIX,
                                         dir=directory.parent))
        try:
            _fill(building, page, stamp, sha256)
            os.rename(building, directory)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
    except OSError as exc:
        raise DeployError(f"deploy.bind_root: cannot prepare {directory}: {exc.strerror or exc}",
                          hint="deploy.bind_root must be a directory graphsite may write and chown to uid 1000 "
                               "(root), or use --content config") \
            from None
    return True


def _fill(directory: Path, page: bytes, stamp: Stamp, sha256: str) -> None:
    write_atomic(directory / MARKER, stamp.marker(sha256))
    write_atomic(directory / PAGE, page)
    for path in (directory, directory / PAGE, directory / MARKER):
        os.chown(path, BIND_UID, BIND_UID)
    os.chmod(directory, 0o755)


def temporaries(bind_root: Path) -> dict[str, list[Path]]:
    """Return {subdomain: [directories]} of the temporary directories a killed deploy left in `bind_root`:
    named after the deployment, and holding nothing but the marker and the page (or their temporary files)."""
    found: dict[str, list[Path]] = {}
    # iterdir, not glob: a root that cannot be listed raises (glob says "nothing"), and the caller names it
    candidates = sorted(p for p in bind_root.iterdir() if p.name.startswith(".")
                        and p.name.endswith(TEMPORARY_SUFFIX)) if bind_root.is_dir() else []
    for path in candidates:
        match = _TEMPORARY.match(path.name)
        if match and not path.is_symlink() and path.is_dir() and _only_ours(path, match["name"]):
            found.setdefault(match["name"], []).append(path)
    return found


def _only_ours(directory: Path, name: str) -> bool:
    """Return whether `directory` holds only what _fill writes, and a marker (if there is one yet) for `name`."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return False
    ours = {MARKER, PAGE}
    for entry in entries:
        written = entry.name in ours or any(entry.name.startswith(temporary_prefix(Path(known)))
                                            and entry.name.endswith(TEMPORARY_SUFFIX) for known in ours)
        if not written or entry.is_symlink() or not entry.is_file():
            return False
    if not (directory / MARKER).exists():  # killed before the marker was written
        return True
    stamp = bind_stamp(directory)
    return stamp is not None and stamp.name == name


def remove_temporary(directory: Path) -> bool:
    """Remove a temporary directory `temporaries` found; return False when it was absent."""
    return _remove(directory, "a deploy's temporary directory")


def bind_stamp(directory: Path) -> Stamp | None:
    """Return the stamp of a directory graphsite made (its marker), else None."""
    try:
        text = (directory / MARKER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return Stamp.from_marker(text)


def own_stamp(directory: Path) -> Stamp | None:
    """Return the stamp of `directory` when its marker says graphsite made it for the name it has, else None
    (one whose marker names another deployment, or a killed deploy's `.NAME.<random>.tmp`, is not that name's)."""
    stamp = bind_stamp(directory)
    return stamp if stamp is not None and stamp.name == directory.name else None


def made_by_graphsite(directory: Path) -> bool:
    return own_stamp(directory) is not None


def bind_dirs(bind_root: Path) -> dict[str, tuple[Path, Stamp]]:
    """Return {subdomain: (directory, its stamp)} of the directories under `bind_root` that graphsite made for
    the name they have (a killed deploy's `.NAME.<random>.tmp`, which holds a marker too, is one of
    `temporaries`)."""
    # a root that cannot be listed raises OSError: the caller names the system it could not read
    children = sorted(p for p in bind_root.iterdir() if p.is_dir()) if bind_root.is_dir() else []
    return {path.name: (path, stamp) for path in children if (stamp := own_stamp(path)) is not None}


def remove_bind_dir(directory: Path) -> bool:
    """Remove `directory` if graphsite made it; return False when it is absent."""
    if not directory.exists():
        return False
    if not made_by_graphsite(directory):
        raise DeployError(f"{directory} exists but graphsite did not make it; left in place",
                          hint="remove it by hand if it is yours to remove")
    return _remove(directory, "the page's directory")


def _remove(directory: Path, what: str) -> bool:
    if not directory.exists():
        return False
    try:
        shutil.rmtree(directory)
    except OSError as exc:
        raise DeployError(f"{directory}: cannot remove {what}: {exc.strerror or exc}",
                          hint="check deploy.bind_root's permissions, then run the command again") from None
    return True
