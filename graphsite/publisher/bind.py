"""Content mode `bind`: the page in a host directory owned by 1000:1000, bound read-only to /srv
(the report's recipe). A marker file records that graphsite made the directory."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from graphsite.errors import DeployError
from graphsite.publisher.plan import BIND_UID

MARKER = ".graphsite"


def ensure_bind_dir(directory: Path, page: bytes, sha256: str) -> bool:
    """Write index.html into `directory` (created and chowned to 1000:1000); return True when it was created."""
    created = not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MARKER).write_text(f"made by graphsite deploy; page sha256 {sha256}\n", encoding="utf-8")
        fd, tmp = tempfile.mkstemp(prefix=".index.", dir=directory)
        with os.fdopen(fd, "wb") as handle:
            handle.write(page)
        os.chmod(tmp, 0o644)
        os.replace(tmp, directory / "index.html")
        for path in (directory, directory / "index.html", directory / MARKER):
            os.chown(path, BIND_UID, BIND_UID)
        os.chmod(directory, 0o755)
    except OSError as exc:
        raise DeployError(f"deploy.bind_root: cannot prepare {directory}: {exc.strerror or exc}",
                          hint="deploy.bind_root must be a directory graphsite may write and chown to uid 1000 "
                               "(root), or use --content config") \
            from None
    return created


def made_by_graphsite(directory: Path) -> bool:
    return (directory / MARKER).is_file()


def remove_bind_dir(directory: Path) -> bool:
    """Remove `directory` if graphsite made it; return False when it is absent."""
    if not directory.exists():
        return False
    if not made_by_graphsite(directory):
        raise DeployError(f"{directory} exists but graphsite did not make it; left in place",
                          hint="remove it by hand if it is yours to remove")
    shutil.rmtree(directory)
    return True
