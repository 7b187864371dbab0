"""Content mode `bind`: the page in a host directory owned by 1000:1000, bound read-only to /srv
(the report's recipe). A marker file, written first, records that graphsite made the directory, for which
deployment, when, and until when."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from graphsite.atomic import write_atomic
from graphsite.errors import DeployError
from graphsite.publisher.deployment import MARKER, Stamp

BIND_UID = 1000  # the uid Caddy images run as; the report's pitfall #1


def ensure_bind_dir(directory: Path, page: bytes, stamp: Stamp, sha256: str) -> bool:
    """Write index.html into `directory` (created and chowned to 1000:1000); return True when it was created."""
    created = not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(directory / MARKER, stamp.marker(sha256))  # first: a directory is never anonymous for long
        write_atomic(directory / "index.html", page)
        for path in (directory, directory / "index.html", directory / MARKER):
            os.chown(path, BIND_UID, BIND_UID)
        os.chmod(directory, 0o755)
    except OSError as exc:
        raise DeployError(f"deploy.bind_root: cannot prepare {directory}: {exc.strerror or exc}",
                          hint="deploy.bind_root must be a directory graphsite may write and chown to uid 1000 "
                               "(root), or use --content config") \
            from None
    return created


def bind_stamp(directory: Path) -> Stamp | None:
    """Return the stamp of a directory graphsite made (its marker), else None."""
    try:
        text = (directory / MARKER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return Stamp.from_marker(text, directory.name)


def made_by_graphsite(directory: Path) -> bool:
    return bind_stamp(directory) is not None


def bind_dirs(bind_root: Path) -> dict[str, Path]:
    """Return {subdomain: directory} of the directories under `bind_root` that graphsite made."""
    try:
        children = sorted(p for p in bind_root.iterdir() if p.is_dir()) if bind_root.is_dir() else []
    except OSError:
        return {}
    return {path.name: path for path in children if made_by_graphsite(path)}


def remove_bind_dir(directory: Path) -> bool:
    """Remove `directory` if graphsite made it; return False when it is absent."""
    if not directory.exists():
        return False
    if not made_by_graphsite(directory):
        raise DeployError(f"{directory} exists but graphsite did not make it; left in place",
                          hint="remove it by hand if it is yours to remove")
    try:
        shutil.rmtree(directory)
    except OSError as exc:
        raise DeployError(f"{directory}: cannot remove the page's directory: {exc.strerror or exc}",
                          hint="check deploy.bind_root's permissions, then run the command again") from None
    return True
