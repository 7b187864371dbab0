"""What `chaos.py` shares the lab with: a second configuration on the same Swarm and zone, the fake Cloudflare's
one fault slot (shared with every session on the lab), and foreign resources that look like graphsite's.

Kept apart from the scenarios so that chaos.py reads as the scenarios and the invariants.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from graphsite.publisher import route
from graphsite.publisher.deployment import MARKER, Stamp, iso, new_id
from graphsite_lab.client import Lab, LabCloudflare
from graphsite_lab.drive import Driver

OTHER_DOMAIN = "other"  # a third configuration's domain, under the lab's zone: other.<lab domain>


class Staging(Driver):
    """The lab as a second configuration sees it: another domain in the same zone (staging.<lab domain>) and a
    route directory of its own, on the same Swarm, bind root and lock directory (staging and production on one
    Dokploy host). Its route directory is this run's alone, so the shared edge never loads what it holds."""

    def __init__(self, lab: Lab, prefix: str, routes: Path) -> None:
        routes.mkdir(parents=True, exist_ok=True)
        (routes / "middlewares.yml").write_text(yaml.safe_dump({"http": {"middlewares": {"redirect-to-https": {
            "redirectScheme": {"scheme": "https", "permanent": True}}}}}))  # the operator's, as in production
        staged = replace(lab, domain=f"staging.{lab.domain}",
                         config=lab.config.replace("deploy", dynamic_dir=str(routes)))
        super().__init__(staged, prefix)
        self.variables = {"GRAPHSITE_SITE_DOMAIN": staged.domain, "GRAPHSITE_DEPLOY_DYNAMIC_DIR": str(routes)}

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return super().env({**self.variables, **(extra or {})})


class FaultSlot:
    """The fake Cloudflare holds one fault for every session on the lab, and setting one replaces the last. A
    fault is set only when no other session's is pending (waiting a little for it to be spent), one worker at a
    time, and cleared afterwards only while it is still the one this run set. A race of a few milliseconds
    (between the look and the set) remains: the control API has no compare-and-set."""

    def __init__(self, cloudflare: LabCloudflare, wait: float = 10.0) -> None:
        self.cloudflare, self.wait = cloudflare, wait
        self.lock = threading.Lock()
        self.busy = 0  # faults not set: another session's was pending
        self._match = ""

    def _foreign_pending(self) -> bool:
        fault = self.cloudflare.fault()
        return fault["fail_next"] > 0 and fault["match"] != self._match

    @contextlib.contextmanager
    def holding(self, count: int, match: str, **fault: Any) -> Iterator[list[int]]:
        """Set the fault (`lie_next` with a `kind`, else `fail_next`) for the block; yield a list that holds, once
        the block ends, how many calls the fault answered (empty when it could not be set)."""
        used: list[int] = []
        if not self.lock.acquire(timeout=self.wait):
            self.busy += 1
            yield used
            return
        try:
            deadline = time.monotonic() + self.wait
            while self._foreign_pending() and time.monotonic() < deadline:
                time.sleep(0.5)
            if self._foreign_pending():
                self.busy += 1
                yield used
                return
            self._match = match
            if "kind" in fault:
                self.cloudflare.lie_next(count, match=match, **fault)
            else:
                self.cloudflare.fail_next(count, match=match, **fault)
            try:
                yield used
            finally:
                left = self.cloudflare.fault()
                if left["match"] == match:
                    used.append(count - left["fail_next"])
                    if left["fail_next"] > 0:
                        self.cloudflare.fail_next(0)
                self._match = ""
        finally:
            self.lock.release()

    def clear_own(self) -> None:
        """Clear the fault slot if it holds a fault of this run (an interrupted scenario's)."""
        if self._match and self.cloudflare.fault()["match"] == self._match:
            self.cloudflare.fail_next(0)


@dataclass
class Foreign:
    """Resources that carry graphsite-like stamps but are no deployment of the configuration that meets them:
    records whose comment merely starts like graphsite's, a whole stamp copied onto another name, complete stamps
    of another domain; Swarm objects, route files and bind directories of another configuration. Each is kept
    as it was made, to be compared byte for byte."""

    driver: Driver  # production's view: the zone, the Swarm, the bind root
    records: dict[str, dict] = field(default_factory=dict)  # id -> the record as stored
    services: dict[str, dict] = field(default_factory=dict)  # name -> Version and Spec
    configs: dict[str, dict] = field(default_factory=dict)
    files: dict[Path, bytes] = field(default_factory=dict)
    trees: dict[Path, dict[str, bytes]] = field(default_factory=dict)  # directory -> its files
    lock: threading.Lock = field(default_factory=threading.Lock)
    checking: threading.Lock = field(default_factory=threading.Lock)  # the driver's Docker client is not threadsafe

    # --- making them ---------------------------------------------------------------------------------------

    def record(self, name: str, domain: str, comment: str, content: str = "192.0.2.7") -> str:
        """Make an A record `name.domain` with `comment` as another tool on the zone would; return its id."""
        made = self.driver.cloudflare_api("POST", "dns_records", type="A", name=f"{name}.{domain}",
                                          content=content, ttl=60, comment=comment)["result"]
        stored = next(r for r in self.driver.cloudflare.records() if r["id"] == made["id"])
        with self.lock:
            self.records[made["id"]] = stored
        return made["id"]

    def plant(self, group: str, domain: str, routes: Path | None = None, temporaries: bool = False) -> list[str]:
        """Make one of each kind for names of `group` (subdomains of `domain`, the configuration that will meet
        them); with `routes`, route files too (only a directory no edge loads); with `temporaries`, what a killed
        deploy of another configuration leaves (a page directory, a route file) under a temporary name. Return
        the names used."""
        names = [f"{group}f{i:03x}" for i in range(9)]
        lab_domain, other = self.driver.lab.domain, f"{OTHER_DOMAIN}.{self.driver.lab.domain}"
        copied = stamp(f"{group}f999", domain)  # a deployment's whole stamp, copied onto another record name
        self.record(names[0], domain, f"graphsite: {names[0]} (by hand)")
        self.record(names[1], domain, f"graphsite:2 {names[1]}.{domain} id={new_id()}")  # no creation time
        self.record(names[2], domain, copied.record_comment())
        self.record(names[3], domain, stamp(names[3], other).record_comment())  # another domain's, on ours
        self.record(names[4], other, stamp(names[4], other).record_comment())  # complete, of another domain
        self.record(names[5], domain, f"graphsite: {names[5]} (created yesterday)")
        self._service(names[6], stamp(names[6], other))
        self._tree(Path(self.driver.bind_root) / names[7], stamp(names[7], other))
        if temporaries:
            self._tree(Path(self.driver.bind_root) / f".{names[8]}.{new_id()}.tmp", stamp(names[8], other))
        if routes is not None:
            proven = stamp(names[6], lab_domain)  # production's route, found in staging's directory
            routing = route.RouteSettings.from_config(self.driver.lab.config)
            document = route.route_document(routing, names[6], proven.fqdn)
            self._file(routes / f"{names[6]}.yml", route.dump(document, proven))
            self._file(routes / f"{names[7]}.yml", f"# graphsite: name={names[7]} (by hand)\n"
                       + route.dump(route.route_document(routing, names[7], f"{names[7]}.{domain}")))
            if temporaries:
                self._file(routes / f".{names[5]}.yml.{new_id()}.tmp",
                           route.dump(document, stamp(names[5], lab_domain)))
        return names

    def _service(self, name: str, owner: Stamp) -> None:
        import docker

        docker_api = self.driver.docker
        task = docker.types.TaskTemplate(container_spec=docker.types.ContainerSpec(
            image=self.driver.lab.config.deploy.image, command=["caddy", "version"]))
        docker_api.create_service(task, name=name, labels=owner.labels(),
                                  mode=docker.types.ServiceMode("replicated", replicas=0))
        config = f"{name}-page-{new_id()}{new_id()[:4]}"
        docker_api.create_config(config, b"<p>another configuration's page</p>", labels=owner.labels())
        with self.lock:
            self.services[name] = _swarm_view(docker_api.inspect_service(name))
            self.configs[config] = _swarm_view(docker_api.inspect_config(config))

    def _tree(self, directory: Path, owner: Stamp) -> None:
        directory.mkdir()
        (directory / MARKER).write_text(owner.marker())
        (directory / "index.html").write_text("<p>another configuration's page</p>")
        with self.lock:
            self.trees[directory] = _tree_of(directory)

    def _file(self, path: Path, text: str) -> None:
        path.write_text(text)
        with self.lock:
            self.files[path] = path.read_bytes()

    # --- checking and removing them ------------------------------------------------------------------------

    def identities(self) -> set[tuple[str, str]]:
        """Return the (kind, identity) of each, as `Driver.held` names what it finds."""
        with self.lock:
            found = {("record", i) for i in self.records} | {("service", n) for n in self.services}
            found |= {("config", n) for n in self.configs} | {("route", str(p)) for p in self.files}
            found |= {("temporary route", str(p)) for p in self.files}
            found |= {("directory", str(p)) for p in self.trees} | {("temporary directory", str(p))
                                                                   for p in self.trees}
        return found

    def touched(self) -> list[str]:
        """Return each one that is gone or not byte-identical to what was made."""
        with self.checking:
            return self._touched()

    def _touched(self) -> list[str]:
        with self.lock:
            records, services, configs = dict(self.records), dict(self.services), dict(self.configs)
            files, trees = dict(self.files), dict(self.trees)
        stored = {r["id"]: r for r in self.driver.cloudflare.records()}
        changed = [f"record {r['name']} ({i}): {'changed' if i in stored else 'gone'}"
                   for i, r in records.items() if stored.get(i) != r]
        import docker

        docker_api = self.driver.docker
        for kind, made, inspect in (("service", services, docker_api.inspect_service),
                                    ("config", configs, docker_api.inspect_config)):
            for name, view in made.items():
                try:
                    now = _swarm_view(inspect(name))
                except docker.errors.NotFound:
                    now = None
                if now != view:
                    changed.append(f"{kind} {name}: {'changed' if now else 'gone'}")
        for path, data in files.items():
            if not path.is_file() or path.read_bytes() != data:
                changed.append(f"file {path}: {'changed' if path.exists() else 'gone'}")
        for directory, tree in trees.items():
            if _tree_of(directory) != tree:
                changed.append(f"directory {directory}: {'changed' if directory.exists() else 'gone'}")
        return changed

    def remove(self) -> None:
        """Remove every one of them that is still there (the run is over)."""
        stored = {r["id"] for r in self.driver.cloudflare.records()}
        for record_id in self.records:
            if record_id in stored:
                self.driver.cloudflare_api("DELETE", f"dns_records/{record_id}")
        import docker

        for remove, names in ((self.driver.docker.remove_service, self.services),
                              (self.driver.docker.remove_config, self.configs)):
            for name in names:
                with contextlib.suppress(docker.errors.NotFound):
                    remove(name)
        for path in self.files:
            path.unlink(missing_ok=True)
        for directory in self.trees:
            shutil.rmtree(directory, ignore_errors=True)


def stamp(name: str, domain: str) -> Stamp:
    """Return a complete stamp of deployment `name` under `domain`, made now, expiring in a day."""
    now = datetime.now(UTC)
    return Stamp(name, f"{name}.{domain}", new_id(), iso(now), iso(now + timedelta(days=1)))


def _swarm_view(raw: dict) -> dict:
    return {"Version": raw.get("Version"), "Spec": raw.get("Spec")}


def _tree_of(directory: Path) -> dict[str, bytes]:
    if not directory.is_dir():
        return {}
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def scratch() -> Path:
    """Return a fresh directory for the staging configuration's routes (removed by the caller)."""
    return Path(tempfile.mkdtemp(prefix="graphsite-chaos-staging-"))
