"""Background processes the lab starts (the fake Cloudflare, dockerd) and stops again, by recorded pid only.

A pid is trusted only while `/proc/<pid>/cmdline` still names the program the lab started: a pid that the
kernel gave to another process since is never signalled."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from graphsite_lab import LabError, background
from graphsite_lab.instance import LabInstance


def command_line(pid: int) -> list[str]:
    """Return the argument vector of a live process, or [] when there is none."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


# The lab's servers ran as modules of graphsite.lab until the lab left the graphsite package: a lab started
# before that is still recognised, so that `up` restarts its servers (other code) and `down` stops them.
_FORMER = {"graphsite_lab.cfserver": "graphsite.lab.cfserver",
           "graphsite_lab.traefik.watcher": "graphsite.lab.traefik.watcher"}


def is_ours(pid: int | None, *markers: str) -> bool:
    """Return whether `pid` is alive and its command line holds every marker."""
    return bool(pid) and holds_markers(command_line(pid or 0), markers)


def holds_markers(argv: list[str], markers: tuple[str, ...]) -> bool:
    """Return whether a command line holds every marker (a server's module also under its former name)."""
    line = f" {' '.join(argv)} "
    return bool(argv) and all(any(f" {name} " in line for name in {marker, _FORMER.get(marker, marker)})
                              for marker in markers)


def stop(pid: int, *markers: str, wait: float = 20) -> str:
    """Terminate a process the lab started (SIGTERM, then SIGKILL); return 'stopped' or 'absent'."""
    if not is_ours(pid, *markers):
        return "absent"
    background.terminate(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not is_ours(pid, *markers) or _zombie(pid):
            _reap(pid)
            return "stopped"
        time.sleep(0.1)
    background.terminate(pid, signal.SIGKILL)  # its whole session, as background.start made it
    _reap(pid)
    return "stopped"


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def cloudflare_markers(lab: LabInstance) -> tuple[str, str]:
    return "graphsite_lab.cfserver", f"--lab-dir {lab.root}"


def routes_markers(lab: LabInstance) -> tuple[str, str]:
    return "graphsite_lab.traefik.watcher", f"--lab-dir {lab.root}"


def lab_code(checkout: Path | None = None) -> str:
    """Return a short hash of the code the lab's processes run, as the checkout holds it now: every Python
    file of the graphsite and graphsite_lab packages and every schema. Whole packages, not a list of modules, so
    that no module a server imports can change without `up` noticing (a stale server only costs a restart)."""
    checkout = checkout or Path(__file__).resolve().parents[1]
    files = sorted(path for package in (checkout / "graphsite", checkout / "graphsite_lab")
                   for path in [*package.rglob("*.py"), *(package / "schemas").glob("*")])
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(checkout)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def process_action(ours: bool, health: dict | None, code: str) -> str:
    """Return what `up` does about a lab process (the fake Cloudflare, the routes watcher): keep it running,
    start it, or restart a stale one (ours, answering, but started from other code: a checkout that changed
    since keeps the old server)."""
    if not ours or health is None:
        return "start"
    return "running" if health.get("code") == code else "restart"


def cloudflare_health(lab: LabInstance) -> dict | None:
    """Return the fake Cloudflare's /__lab/health answer, or None when nothing answers there."""
    try:
        answer = httpx.get(f"{lab.cf_base}/__lab/health", timeout=2)
        return answer.json() if answer.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def start_cloudflare(lab: LabInstance, wait: float = 15) -> int:
    """Start the fake Cloudflare in the background (log in cloudflare.log); return its pid once it answers."""
    if cloudflare_health(lab) is not None:
        raise LabError(f"port {lab.cf_port} already answers as a fake Cloudflare of another lab",
                       hint="run `scripts/lab down` there, or set LAB_CF_PORT")
    argv = [sys.executable, "-m", "graphsite_lab.cfserver", "--lab-dir", str(lab.root),
            "--port", str(lab.cf_port), "--zone", lab.domain, "--zone-id", lab.zone_id]
    return _spawn(lab, argv, "cloudflare.log", "the fake Cloudflare", lambda _: cloudflare_health(lab) is not None,
                  wait, f"the fake Cloudflare did not answer on port {lab.cf_port} within {wait:.0f} s")


def routes_health(lab: LabInstance, stale_after: float = 15) -> dict | None:
    """Return the routes watcher's status (edge-routes.json) while its process writes it, else None."""
    from graphsite_lab.traefik.watcher import STATUS_FILE

    try:
        status = json.loads(lab.path(STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    alive = is_ours(status.get("pid"), *routes_markers(lab))
    return status if alive and time.time() - float(status.get("heartbeat") or 0) < stale_after else None


def start_routes(lab: LabInstance, task_subnet: str = "", wait: float = 30) -> int:
    """Start the routes watcher in the background (log in traefik.log); return its pid once it has loaded
    the directory into the edge (or rejected it). With `task_subnet`, the routes carry the lab's per-task
    route for addresses of that subnet (translate.task_route)."""
    argv = [sys.executable, "-m", "graphsite_lab.traefik.watcher", "--lab-dir", str(lab.root),
            "--task-subnet", task_subnet]

    def loaded(process: subprocess.Popen[bytes]) -> bool:
        health = routes_health(lab)
        return bool(health and health.get("pid") == process.pid and (health.get("applied") or health.get("rejected")))

    return _spawn(lab, argv, "traefik.log", "the routes watcher", loaded, wait,
                  f"the routes watcher loaded nothing into the edge within {wait:.0f} s")


def _spawn(lab: LabInstance, argv: list[str], log_name: str, what: str,
           ready: Callable[[subprocess.Popen[bytes]], bool], wait: float, late: str) -> int:
    """Start `argv` in the background (its output appended to the lab's `log_name`); return its pid once
    `ready(process)`, or raise LabError when it exits first or `wait` seconds pass."""
    return background.start(argv, lab.path(log_name), what=what, ready=ready, wait=wait, late=late, cwd=lab.root)
