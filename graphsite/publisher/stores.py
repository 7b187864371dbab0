"""The route store and the bind store (publisher/ports.py) on this host's filesystem: thin adapters over
route.py, bind.py and files.py, which read, write and remove without following a symbolic link."""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from pathlib import Path
from typing import Any

from graphsite.atomic import write_atomic
from graphsite.errors import DeployError
from graphsite.publisher import bind, bind_removal, files, route_files
from graphsite.publisher.deployment import Leftover, PageDirectory, Stamp
from graphsite.publisher.deployment import route_path as route_path_of


class _OnDisk:
    """What both stores answer the same way: whether anything is at a path, and where a symbolic link there
    leads (graphsite makes none, so it never follows nor removes one)."""

    def exists(self, path: Path) -> bool:
        return files.looked_at(path) is not None  # a look that failed (EACCES) is no "absent"

    def link(self, path: Path) -> str | None:
        return files.link_target(path)


class RouteFiles(_OnDisk):
    """Route files in Traefik's dynamic directory."""

    def routes(self, dynamic_dir: Path, name: str | None = None) -> dict[Path, Stamp | None]:
        # Traefik's dynamic directory is there wherever a deploy could run; a look that failed (EACCES) raises
        if files.looked_at(dynamic_dir, follow=True) is None:
            what = "is not a directory" if os.path.lexists(dynamic_dir) else "does not exist"  # as doctor says
            raise DeployError(f"deploy.dynamic_dir: {dynamic_dir} {what}",
                              hint="run the command on the host whose Traefik reads that directory, or point the "
                                   "setting at the directory Traefik's file provider watches (Dokploy: "
                                   "/etc/dokploy/traefik/dynamic)")
        paths = [route_path_of(dynamic_dir, name)] if name is not None else \
            sorted(p for p in dynamic_dir.iterdir() if p.suffix == ".yml")  # iterdir raises what glob would hide
        # each looked at once: a look that failed (EACCES) raises, never "no route file" (what deploy's refusal of
        # a foreign route and teardown's and gc's proof of absence decide on); a link or no regular file has no stamp
        modes = {path: files.looked_at(path) for path in paths}
        return {path: route_files.route_stamp(path) if stat.S_ISREG(found) else None
                for path, found in modes.items() if found is not None}

    def temporaries(self, dynamic_dir: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
        return route_files.temporaries(dynamic_dir, domain)

    def text(self, path: Path) -> str | None:
        return route_files.route_text(path)

    def document(self, path: Path) -> dict[str, Any] | None:
        return route_files.read_route(path)

    def stamp(self, path: Path) -> Stamp | None:
        return route_files.route_stamp(path)

    def write(self, path: Path, document: dict[str, Any], stamp: Stamp | None = None) -> bool:
        return route_files.write_route(path, document, stamp)

    def put_back(self, path: Path, text: str) -> None:
        write_atomic(path, text)

    def remove(self, path: Path) -> bool:
        return route_files.remove_file(path)


class BindDirectories(_OnDisk):
    """Page directories under deploy.bind_root."""

    def has_root(self, bind_root: Path) -> bool:
        return files.looked_at(bind_root, follow=True) is not None  # a root is followed; EACCES raises

    def directories(self, bind_root: Path) -> dict[str, tuple[Path, Stamp]]:
        return bind.bind_dirs(bind_root)

    def temporaries(self, bind_root: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
        return bind.temporaries(bind_root, domain)

    def page_directory(self, directory: Path) -> PageDirectory:
        return bind.page_directory(directory)

    def stamp(self, directory: Path) -> Stamp | None:
        return bind.bind_stamp(directory)

    def page(self, directory: Path) -> bytes | None:
        return bind.read_page(directory)

    def ensure(self, directory: Path, page: bytes, stamp: Stamp, sha256: str, seen: PageDirectory) -> bool:
        return bind.ensure_bind_dir(directory, page, stamp, sha256, seen)

    def put_back_page(self, directory: Path, page: bytes, ours: Collection[Stamp]) -> bool:
        return bind.put_back_page(directory, page, ours)

    def remove(self, directory: Path, stamp: Stamp) -> bool:
        return bind_removal.remove_bind_dir(directory, stamp)

    def remove_temporary(self, directory: Path, stamp: Stamp | None) -> bool:
        return bind_removal.remove_temporary(directory, stamp)

    def versions(self, directory: Path) -> dict[str, str | None]:
        return bind.version_markers(directory)

    def strays(self, directory: Path) -> tuple[str, ...]:
        return bind.strays(directory)

    def version_page(self, directory: Path, sha12: str) -> bytes | None:
        return bind.version_page(directory, sha12)

    def keep_version(self, directory: Path, sha12: str, page: bytes, marker: str) -> bool:
        return bind.keep_version(directory, sha12, page, marker)

    def restamp_version(self, directory: Path, sha12: str, marker: str) -> bool:
        return bind.restamp_version(directory, sha12, marker)

    def remove_version(self, directory: Path, sha12: str) -> bool:
        return bind_removal.remove_version(directory, sha12)
