"""Drive the real `graphsite` CLI against a lab the way an operator, and the world, would: run it as a subprocess,
kill it right after a step, stall a daemon, and read what each system holds for a name *directly* (Docker's
API, the route and bind directories, the fake Cloudflare's store), never through graphsite's own inventory, so
that what `graphsite list` says can be checked against the systems.

Used by tests/reliability/ and benchmarks/chaos.py.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from graphsite_lab.client import Lab

GRAPHSITE = str(Path(sys.executable).with_name("graphsite"))
# The deploy steps a run is stopped after, in order, as `graphsite deploy` prints them ("  content … done
# (0.03 s)"); name (between build and survey) and render (between survey and plan) make nothing either.
STEPS = ("build", "survey", "plan", "content", "service", "converge", "route", "dns")
MAX_STALL = 8.0  # seconds a shared daemon may be stopped, at most


@dataclass(frozen=True)
class Run:
    """One finished CLI run."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    seconds: float = 0.0
    signalled: str = ""  # the step after which a signal was sent, if one was

    def json(self) -> dict:
        return json.loads(self.stdout)

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    def __str__(self) -> str:
        return f"graphsite {' '.join(self.args)} -> {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


class Driver:
    """The lab, as a fault injector sees it."""

    def __init__(self, lab: Lab, prefix: str) -> None:
        self.lab, self.prefix = lab, prefix
        deploy = lab.config.deploy
        self.dynamic_dir, self.bind_root = Path(deploy.dynamic_dir), Path(deploy.bind_root)
        self.lock_dir = Path(deploy.lock_dir)
        self.cloudflare = lab.cloudflare
        self.outputs: list[str] = []  # every stdout and stderr, for the check that no output holds the token
        self._docker = None

    # --- running the CLI ---------------------------------------------------------------------------------------

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHSITE_", "CLOUDFLARE_"))}
        env.update(GRAPHSITE_CONFIG=str(self.lab.config_path), GRAPHSITE_SITE_PREFIX=self.prefix, NO_COLOR="1")
        env.update(extra or {})
        return env

    def start(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen:
        return subprocess.Popen([GRAPHSITE, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env(env))

    def run(self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120) -> Run:
        start = time.monotonic()
        done = subprocess.run([GRAPHSITE, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              env=self.env(env), timeout=timeout, check=False)
        self.outputs += [done.stdout, done.stderr]
        return Run(tuple(args), done.returncode, done.stdout, done.stderr, time.monotonic() - start)

    def signal_after(self, step: str, sig: int, *args: str, env: Mapping[str, str] | None = None,
                     timeout: float = 120) -> Run:
        """Run `graphsite ARGS` and send `sig` the moment it prints that `step` is done; return the run (its
        `signalled` is empty when the step never finished)."""
        return self.act_after(step, lambda process: process.send_signal(sig), *args, env=env, timeout=timeout)

    def act_after(self, step: str, act: Callable[[subprocess.Popen], object], *args: str,
                  env: Mapping[str, str] | None = None, timeout: float = 120) -> Run:
        """Run `graphsite ARGS` and call `act(process)` the moment it prints `  STEP … done`."""
        return self.script([(f"  {step} … done", act)], *args, env=env, timeout=timeout)

    def script(self, triggers: list[tuple[str, Callable[[subprocess.Popen], object]]], *args: str,
               env: Mapping[str, str] | None = None, timeout: float = 120) -> Run:
        """Run `graphsite ARGS`; each time a line of its stderr starts with the next trigger's text, call that
        trigger's action with the process. `signalled` names the step of the first trigger once it fired."""
        started = time.monotonic()
        process = self.start(*args, env=env)
        guard = threading.Timer(timeout, process.kill)  # a run that hangs must not hang the caller
        guard.start()
        lines, pending, signalled = [], list(triggers), ""
        try:
            assert process.stderr is not None
            for line in process.stderr:
                lines.append(line)
                if pending and line.startswith(pending[0][0]):
                    text, action = pending.pop(0)
                    action(process)
                    signalled = signalled or text.strip().split(" ")[0]
            stdout = process.stdout.read() if process.stdout else ""
            process.wait()
        finally:
            guard.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
        self.outputs += [stdout, "".join(lines)]
        return Run(tuple(args), process.returncode, stdout, "".join(lines), time.monotonic() - started, signalled)

    # --- what graphsite says -------------------------------------------------------------------------------------

    def listing(self, env: Mapping[str, str] | None = None) -> tuple[dict[str, dict], Run]:
        """Return `graphsite list --json`'s deployments of this prefix, by name, and the run."""
        run = self.run("list", "--json", env=env)
        if run.code not in (0, 1) or not run.stdout.strip():
            raise AssertionError(f"list failed:\n{run}")
        found = {d["subdomain"]: d for d in run.json()["deployments"] if d["subdomain"].startswith(self.prefix)}
        return found, run

    @staticmethod
    def listed_resources(entry: dict | None) -> set[tuple[str, str]]:
        """Return the resources of one `list --json` entry as (kind, identity): a record by its id."""
        found = set()
        for resource in (entry or {}).get("resources", []):
            kind, name = resource["kind"], resource["name"]
            found.add(("record", name.rsplit("id=", 1)[-1]) if kind == "record" else (kind, name))
        return found

    def compare(self, name: str) -> tuple[dict | None, set, set, Run]:
        """Return `list --json`'s entry for `name`, the resources it lists, those the systems hold, and the run."""
        listed, held, run = self.compare_many([name])
        entry = listed.get(name)
        return entry, self.listed_resources(entry), held[name], run

    def compare_many(self, names: list[str], *, attempts: int = 5
                     ) -> tuple[dict[str, dict], dict[str, set[tuple[str, str]]], Run]:
        """Return `list --json`'s entries, what the systems hold of each of `names`, and the run. The systems are
        read before and after `list`, again (a bounded number of times) until both reads agree: an effect still
        landing after a kill or a stall (dockerd committing a create, the fake Cloudflare working through
        requests queued while it was stopped) must not pass for a disagreement of list's."""
        before = {name: self.held(name) for name in names}
        for attempt in range(1, attempts + 1):
            listed, run = self.listing()
            held = {name: self.held(name) for name in names}
            if held == before:
                return listed, held, run
            before = held  # the read after this list is the read before the next one
            time.sleep(0.2 * attempt)
        raise AssertionError(f"the systems never held still over {attempts} listings: last {held}\n{run}")

    def cloudflare_quiet(self, *, quiet: float = 0.6, within: float = 15.0) -> None:
        """Return once the fake Cloudflare has answered no new API call for `quiet` seconds (it works through
        what was queued while it was stopped); raise AssertionError after `within` seconds."""
        deadline, last, since = time.monotonic() + within, None, time.monotonic()
        while time.monotonic() < deadline:
            newest = self.cloudflare.answered()  # a count, not the whole request log; none is an error, not 0
            if newest != last:
                last, since = newest, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            time.sleep(0.1)
        raise AssertionError(f"the fake Cloudflare was still answering requests after {within:g} s")

    def leftovers(self, name: str, *, listing: bool = True) -> list[str]:
        """Return what is left of `name` anywhere (resources, its lock file, and with `listing` a `list` entry):
        empty when absent."""
        left = [f"{kind} {what}" for kind, what in sorted(self.held(name))]
        left += [f"lock file of {name}"] if self.lock_left(name) else []
        if listing:
            listed, _ = self.listing()
            left += [f"list shows {name}: {listed[name]['state']}"] if name in listed else []
        return left

    # --- what the systems hold, read directly ---------------------------------------------------------------

    @property
    def docker(self):
        if self._docker is None:
            import docker

            self._docker = docker.APIClient(timeout=20)
        return self._docker

    def fqdn(self, name: str) -> str:
        return f"{name}.{self.lab.domain}"

    def held(self, name: str) -> set[tuple[str, str]]:
        """Return every resource of `name` in every system, found by its name alone."""
        found: set[tuple[str, str]] = set()
        found |= {("service", s["Spec"]["Name"]) for s in self.docker.services(filters={"name": name})
                  if s["Spec"]["Name"] == name}
        found |= {("config", c["Spec"]["Name"]) for c in self.docker.configs(filters={"name": f"{name}-"})
                  if c["Spec"]["Name"].startswith(f"{name}-")}
        if self.dynamic_dir.is_dir():
            for path in self.dynamic_dir.iterdir():
                if path.name == f"{name}.yml":
                    found.add(("route", str(path)))
                elif path.name.startswith(f".{name}."):
                    found.add(("temporary route", str(path)))
        if (self.bind_root / name).exists():
            found.add(("directory", str(self.bind_root / name)))
        if self.bind_root.is_dir():
            found |= {("temporary directory", str(path)) for path in self.bind_root.glob(f".{name}.*")}
        found |= {("record", r["id"]) for r in self.records(name)}
        return found

    def cloudflare_api(self, method: str, path: str, **body: object) -> dict:
        """Call the fake Cloudflare's API under the lab's zone as another tool on the zone would (`path` after
        `/zones/<id>/`); return its answer."""
        import httpx

        config = self.lab.config
        answer = httpx.request(method, f"{config.dns.api_base_url}/zones/{config.dns.zone_id}/{path}",
                               json=body or None, headers={"Authorization": f"Bearer {self.lab.token()}"}, timeout=10)
        answer.raise_for_status()
        return answer.json()

    def records(self, name: str) -> list[dict]:
        """Return every record of any type named `name`'s fqdn, as the fake Cloudflare stores them."""
        return [r for r in self.cloudflare.records() if r["name"] == self.fqdn(name)]

    def names_held(self) -> set[str]:
        """Return every name of this prefix that some system holds something of."""
        names = {s["Spec"]["Name"] for s in self.docker.services(filters={"name": self.prefix})}
        names |= {c["Spec"]["Name"].split("-page-")[0].split("-caddyfile-")[0]
                  for c in self.docker.configs(filters={"name": self.prefix})}
        if self.dynamic_dir.is_dir():
            names |= {p.name.lstrip(".").split(".")[0] for p in self.dynamic_dir.iterdir()}
        if self.bind_root.is_dir():
            names |= {p.name.lstrip(".").split(".")[0] for p in self.bind_root.iterdir()}
        names |= {r["name"].split(".")[0] for r in self.cloudflare.records()}
        return {n for n in names if n.startswith(self.prefix)}

    def lock_left(self, name: str) -> bool:
        return (self.lock_dir / f"{name}.lock").exists()

    def page_served(self, name: str, *, within: float = 0.0) -> bool:
        """True when the edge answers 200 for the name (the page is online), asking again for up to `within`
        seconds: after a --no-verify deploy the edge loads the new route a moment later (the route watcher polls)."""
        from graphsite_lab.probe import fetch

        deadline = time.monotonic() + within
        while True:
            try:
                if fetch(self.fqdn(name), self.lab.https_port, ca=self.lab.ca_path, timeout=5).status == 200:
                    return True
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.25)

    def close(self) -> None:
        if self._docker is not None:
            self._docker.close()


# --- stalling a daemon ---------------------------------------------------------------------------------------------


def cloudflare_pid(lab: Lab) -> int:
    """Return the pid of the lab's own fake Cloudflare (from its state.json), checked against its command line."""
    from graphsite_lab import processes

    pid = int(json.loads(lab.instance.path("state.json").read_text())["cloudflare_pid"])
    if not processes.is_ours(pid, *processes.cloudflare_markers(lab.instance)):
        raise RuntimeError(f"pid {pid} is not this lab's fake Cloudflare")
    return pid


def dockerd_pid(socket_path: str = "/var/run/docker.sock") -> int:
    """Return the pid of the Docker daemon that listens on `socket_path` (the one the SDK talks to): several
    dockerd may run on a machine (other namespaces, other users' tests), and only this one may be stalled."""
    listening = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7] in (socket_path, socket_path.replace("/var/run/", "/run/")) \
                and fields[3] == "00010000":  # __SO_ACCEPTCON: a listening socket
            listening.add(f"socket:[{fields[6]}]")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if (entry / "comm").read_text().strip() != "dockerd":
                continue
            if any(_link(fd) in listening for fd in (entry / "fd").iterdir()):
                return int(entry.name)
    raise RuntimeError(f"no dockerd listens on {socket_path}")


def _link(fd: Path) -> str:
    """Return where a /proc fd leads; '' for one closed since its directory was listed (dockerd is busy)."""
    try:
        return os.readlink(fd)
    except OSError:
        return ""


@contextlib.contextmanager
def stopped(pid: int, *, at_most: float = MAX_STALL) -> Iterator[None]:
    """Stop `pid` (SIGSTOP) for the block; it is continued (SIGCONT) when the block ends, whatever happens, and
    at the latest after `at_most` seconds by a timer (a shared daemon must not stay stopped)."""
    timer = threading.Timer(at_most, os.kill, (pid, signal.SIGCONT))
    os.kill(pid, signal.SIGSTOP)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        os.kill(pid, signal.SIGCONT)
