"""The stand-in's process: watch the dynamic directory, load each new configuration into the edge Caddy.

`python -m graphsite_lab.traefik.watcher --lab-dir .lab` polls `traefik/dynamic` (Traefik's `directory` +
`watch`: any change of a file it reads, added, removed, renamed or rewritten, reloads the whole directory),
and loads the translation with one atomic `POST /load` through the edge's admin socket. A directory with a
problem is rejected whole: the edge keeps the previous configuration, and `edge-routes.json` (what
`scripts/lab status` reads) and the log name the file and key. When the edge loses its configuration (a
restarted container), the last good one is loaded again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from graphsite.atomic import write_atomic
from graphsite.publisher.dynamic import UnlistedDirectory, provider_files
from graphsite_lab.traefik.files import Problem, load_directory
from graphsite_lab.traefik.translate import EdgeSettings, Translation, caddy_config

STATUS_FILE = "edge-routes.json"
POLL_SECONDS = 0.25
CHECK_EDGE_SECONDS = 2.0
HEARTBEAT_SECONDS = 5.0


def snapshot(directory: Path) -> tuple[tuple[str, int, int, int], ...]:
    """Return what identifies the directory's readable files now: a change in any means reload."""
    found = []
    try:
        listed = provider_files(directory)
    except UnlistedDirectory as unlisted:  # a change all the same: the reload names it, and rejects the directory
        return ((str(unlisted), 0, 0, 0),)
    for path in listed:
        try:  # a link to nothing is read (and rejected) all the same: its own identity, then
            stat = path.stat() if path.exists() else path.lstat()
        except OSError:
            continue
        found.append((str(path), stat.st_mtime_ns, stat.st_size, stat.st_ino))
    return tuple(found)


class Edge:
    """The edge Caddy's admin API, over its unix socket."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def _client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.HTTPTransport(uds=str(self.socket)), base_url="http://localhost",
                            timeout=30)

    def load(self, config: dict[str, Any]) -> str:
        """Load `config` whole; return '' or why the edge refused it (it then keeps its configuration)."""
        try:
            with self._client() as client:
                answer = client.post("/load", json=config)
        except httpx.HTTPError as exc:
            return f"the edge's admin API does not answer at {self.socket}: {exc}"
        if answer.status_code == 200:
            return ""
        return f"the edge refused it: HTTP {answer.status_code} {answer.text[:300]}"

    def holds(self, config_id: str) -> bool | None:
        """Return whether the edge runs the configuration `config_id`; None when it does not answer."""
        try:
            with self._client() as client:
                return client.get(f"/id/{config_id}").status_code == 200
        except httpx.HTTPError:
            return None


class Watcher:
    def __init__(self, lab_dir: Path, dynamic_dir: Path, edge: Edge, code: str, settings: EdgeSettings) -> None:
        self.lab_dir, self.dynamic_dir, self.edge, self.code, self.settings = lab_dir, dynamic_dir, edge, code, settings
        self.applied: Translation | None = None
        self.status: dict[str, Any] = {"pid": os.getpid(), "code": code, "dynamic_dir": str(dynamic_dir),
                                       "task_subnet": settings.task_subnet,
                                       "applied": None, "rejected": [], "edge": "not loaded yet"}

    def log(self, line: str) -> None:
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}", flush=True)

    def reload(self) -> bool:
        """Read, check, translate and load the directory; return False when the edge did not answer."""
        dynamic, problems = load_directory(self.dynamic_dir)
        if dynamic is None:
            self._reject(problems)
            return True
        try:
            translation = caddy_config(dynamic, self.settings)
        except Exception as exc:  # noqa: BLE001 -- a lab bug must show in status, not end the watcher
            self._reject([Problem("(lab bug)", "", f"translation failed: {exc.__class__.__name__}: {exc}")])
            return True
        refused = self.edge.load(translation.config)
        if refused.startswith("the edge's admin API does not answer"):
            self.status["edge"] = refused
            return False
        if refused:
            self._reject([Problem("(edge)", "", refused)])
            return True
        self.applied = translation
        self.status.update(edge="answers", rejected=[], applied={
            "at": time.time(), "config_id": translation.config_id, "files": list(dynamic.files),
            "served": list(translation.served), "router_errors": list(translation.router_errors),
            "warnings": list(dynamic.warnings)})
        self.log(f"loaded {len(translation.served)} router entries from {len(dynamic.files)} files "
                 f"({translation.config_id})")
        for line in (*translation.router_errors, *dynamic.warnings):
            self.log(f"  {line}")
        return True

    def _reject(self, problems: list[Problem]) -> None:
        self.status["rejected"] = [problem.as_json() for problem in problems]
        kept = "the previous configuration stays in force" if self.applied else "the edge serves no route yet"
        for problem in problems:
            self.log(f"rejected: {problem} ({kept})")

    def ensure_loaded(self) -> None:
        """Load the last good configuration again when the edge lost it (a restarted edge)."""
        if self.applied is None:
            return
        holds = self.edge.holds(self.applied.config_id)
        self.status["edge"] = "answers" if holds is not None else f"no answer at {self.edge.socket}"
        if holds is False:
            self.log("the edge lost its configuration: loading the last good one again")
            self.edge.load(self.applied.config)

    def write_status(self) -> None:
        self.status["heartbeat"] = time.time()
        write_atomic(self.lab_dir / STATUS_FILE, json.dumps(self.status, indent=1) + "\n")

    def run(self) -> None:
        seen, pending, last_check, last_beat = None, True, 0.0, 0.0
        while True:
            now_snapshot = snapshot(self.dynamic_dir)
            if now_snapshot != seen or pending:
                seen = now_snapshot
                before = json.dumps(self.status, sort_keys=True)
                pending = not self.reload()
                if json.dumps(self.status, sort_keys=True) != before:
                    self.write_status()
                    last_beat = time.monotonic()
            if time.monotonic() - last_check > CHECK_EDGE_SECONDS:
                self.ensure_loaded()
                last_check = time.monotonic()
            if time.monotonic() - last_beat > HEARTBEAT_SECONDS:
                self.write_status()
                last_beat = time.monotonic()
            time.sleep(POLL_SECONDS)


def main(argv: list[str] | None = None) -> None:
    from graphsite_lab.edge import ADMIN_SOCKET, edge_settings
    from graphsite_lab.processes import lab_code

    parser = argparse.ArgumentParser(prog="python -m graphsite_lab.traefik.watcher",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--lab-dir", type=Path, required=True)
    parser.add_argument("--task-subnet", default="",
                        help="the overlay's subnet: serve the lab's per-task route for its addresses (not Traefik's)")
    args = parser.parse_args(argv)
    lab_dir = args.lab_dir.resolve()
    watcher = Watcher(lab_dir, lab_dir / "traefik" / "dynamic", Edge(lab_dir / ADMIN_SOCKET), lab_code(),
                      edge_settings(args.task_subnet))
    watcher.log(f"watching {watcher.dynamic_dir} (pid {os.getpid()})")
    watcher.write_status()
    try:
        watcher.run()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
