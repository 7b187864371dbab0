"""Docker Swarm: the page's service and its configs. The only module that imports `docker`."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import docker
import docker.errors
import requests
from docker import types

from graphsite.errors import DeployError
from graphsite.publisher.caddy import SITE_ROOT
from graphsite.publisher.deployment import NAME, SHA256, Stamp
from graphsite.publisher.plan import ConfigFile, ServiceSpec

_SECOND = 1_000_000_000  # Swarm durations are nanoseconds
# Swarm writes a service again by itself (its updater marks a rollout started, then completed one monitor period
# after its last task): an update refused at a version only that moved is sent again at the new one, this often
_BOOKKEEPING_RETRIES = 2
_FAILED = {"failed", "rejected", "orphaned"}


@dataclass(frozen=True)
class Task:
    id: str
    state: str
    desired: str
    error: str
    message: str
    node: str
    spec_configs: tuple[str, ...] = ()
    image: str = ""
    addresses: tuple[tuple[str, str], ...] = ()  # (network name, IPv4 address) of each attachment

    def address(self, network: str) -> str:
        """Return the task's address on `network`, or '' when it has none (yet)."""
        return next((ip for name, ip in self.addresses if name == network), "")

    def of(self, service: Service) -> bool:
        """True when the task runs the service's current spec (image and configs)."""
        same_image = self.image.split("@")[0] == service.image.split("@")[0]
        return same_image and set(self.spec_configs) == set(service.configs)

    def failed(self) -> bool:
        """True when the task failed (or was rejected, orphaned, or shut down with an error)."""
        return self.state in _FAILED or bool(self.error and self.desired == "shutdown")

    def serves(self, service: Service) -> bool:
        """True when the task runs the service's current spec and is meant to."""
        return self.of(service) and self.state == "running" and self.desired == "running"

    def lingers(self, service: Service) -> bool:
        """True when a task of an older spec still runs or is still wanted running (start-first: it serves)."""
        return not self.of(service) and "running" in (self.state, self.desired)


@dataclass(frozen=True)
class Service:
    """A service as Swarm reports it: the labels are graphsite's record of the deployment."""

    id: str
    name: str
    labels: dict[str, str]
    replicas: int
    configs: tuple[str, ...]
    version: int
    image: str = ""
    # the sha256 of the Spec as inspected: what the service is, whatever Swarm's bookkeeping did to its version
    spec_digest: str = ""


# Everything the Docker SDK and its transport can raise: the SDK's own errors, and requests/urllib3's (a daemon
# that stalls past the client timeout raises requests' ReadTimeout, one that went away a ConnectionError).
_WORLD = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


class SwarmError(DeployError):
    """The Docker daemon refused or failed a request."""


def _translate(action: str, exc: BaseException) -> SwarmError:
    cause = exc.__cause__ or exc.__context__
    if (isinstance(exc, docker.errors.DockerException) and not isinstance(exc, docker.errors.APIError)
            and isinstance(cause, requests.exceptions.RequestException)):
        exc = cause  # docker.from_env wraps the transport's error ("Error while fetching server API version");
        # an APIError keeps its own: the daemon's explanation ("This node is not a swarm manager …")
    if isinstance(exc, requests.exceptions.Timeout):
        detail = "the Docker daemon did not answer in time (stalled or overloaded)"
    elif isinstance(exc, requests.exceptions.ConnectionError):
        detail = "cannot reach the Docker daemon"
    else:
        detail = str(getattr(exc, "explanation", None) or exc or type(exc).__name__).splitlines()[0]
    hint = "check that the Docker daemon runs and this node is a Swarm manager (docker info)"
    if "not a swarm manager" in detail.lower() or "node is not" in detail.lower():
        hint = "run graphsite on a Swarm manager node (docker node ls shows which)"
    return SwarmError(f"Docker: {action}: {detail}", hint=hint)


class _Api:
    """The SDK's low-level client with every call translated at this boundary: NotFound passes (callers ask
    "is it there?"), anything else the SDK or its transport raises becomes one SwarmError, named after the
    call ("inspect service") or, through `doing`, after what the caller does ("inspect service NAME")."""

    # The docker SDK ships no type information: its client and every answer it returns are Any here, and this
    # class is where they enter; the readers below give each answer its type.
    def __init__(self, api: Any, action: str = "") -> None:
        self._api, self._action = api, action

    def doing(self, action: str) -> _Api:
        """Return this client with its errors named `action`."""
        return _Api(self._api, action)

    def __getattr__(self, attribute: str) -> Any:
        call = getattr(self._api, attribute)
        if not callable(call):
            return call

        def translated(*args: Any, **kwargs: Any) -> Any:
            try:
                return call(*args, **kwargs)
            except docker.errors.NotFound:
                raise
            except _WORLD as exc:
                raise _translate(self._action or attribute.replace("_", " "), exc) from exc

        return translated


class Swarm:
    """Idempotent operations on the Swarm of the local Docker daemon."""

    def __init__(self, client: docker.DockerClient | None = None, *, timeout: float = 30.0) -> None:
        try:
            self.api = _Api((client or docker.from_env(timeout=int(max(1, timeout)))).api)
        except _WORLD as exc:
            raise _translate("cannot reach the daemon", exc) from None
        self.api.doing("cannot reach the daemon").ping()

    def close(self) -> None:
        with contextlib.suppress(DeployError):
            self.api.close()

    def daemon(self) -> DaemonFacts:
        """Return the daemon's version and this node's Swarm role (daemon_facts)."""
        return daemon_facts(self)

    def network(self, name: str) -> NetworkFacts:
        """Return the network called exactly `name` (network_facts)."""
        return network_facts(self, name)

    def node_id(self) -> str:
        info = self.api.info().get("Swarm") or {}
        if not info.get("ControlAvailable"):
            raise DeployError("Docker: this node is not a Swarm manager",
                              hint="run graphsite on a manager node (docker swarm init)")
        return str(info["NodeID"])

    # --- services -------------------------------------------------------------------------------------------

    def service(self, name: str) -> Service | None:
        """Return the service called exactly `name`, or None."""
        try:
            raw = self.api.doing(f"inspect service {name}").inspect_service(name)
        except docker.errors.NotFound:
            return None
        return _service(raw) if raw["Spec"]["Name"] == name else None

    def services(self) -> list[Service]:
        """Return every service graphsite made (those labelled graphsite.subdomain)."""
        return [_service(raw) for raw in self.api.services(filters={"label": NAME})]

    def ensure_service(self, spec: ServiceSpec, expected: Expected) -> ServiceOutcome:
        """Create the service or roll it to `spec`, only where the name holds what `expected` says the caller's
        plan read (service_verdict); return what was done, or why the name was left as it is. An update is sent
        at the version the plan read: when Docker refuses it ("update out of sequence"), the service is looked
        at again, and rolled at its new version only when its Spec is still the one the plan read (Swarm's own
        bookkeeping moved the version); another run's change is never overwritten (CHANGED)."""
        current = self.service(spec.name)
        verdict = service_verdict(current, spec, expected)
        if verdict not in (ServiceOutcome.CREATED, ServiceOutcome.UPDATED):
            return verdict
        template, config = self._task_template(spec), self._update_config()
        kwargs = {"task_template": template, "name": spec.name, "labels": dict(spec.labels),
                  "mode": types.ServiceMode("replicated", replicas=spec.replicas), "update_config": config,
                  "endpoint_spec": types.EndpointSpec(mode=spec.endpoint_mode)}
        if current is None:
            self.api.doing(f"create service {spec.name}").create_service(**kwargs)
            return verdict
        return self._update(spec, current.id, expected, kwargs)

    def _update(self, spec: ServiceSpec, service_id: str, expected: Expected,
                kwargs: dict[str, Any]) -> ServiceOutcome:
        """Roll the service the plan read to `spec` at the version it read; refused as out of sequence, look
        again: the same service with the same Spec (Swarm's own bookkeeping moved the version: an update's
        start or end) is rolled at its new version, a few times at most; anything else is left as it is."""
        version, retries = expected.version, 0
        while True:
            try:
                self.api.doing(f"update service {spec.name}").update_service(service_id, version, **kwargs)
                return ServiceOutcome.UPDATED
            except docker.errors.NotFound:  # removed between the look and this write: left as it is
                return ServiceOutcome.GONE
            except SwarmError as exc:
                if "update out of sequence" not in str(exc.__cause__):
                    raise
                now = self.service(spec.name)
                if now is not None and now.id == expected.id and now.spec_digest != expected.spec_digest:
                    return ServiceOutcome.CHANGED  # whatever it holds now (even this run's spec): not ours to undo
                verdict = service_verdict(now, spec, expected)
                if now is None or verdict is not ServiceOutcome.UPDATED:  # removed or replaced since
                    return verdict
                if retries == _BOOKKEEPING_RETRIES:
                    raise _kept_moving(spec.name, version) from exc
                version, retries = now.version, retries + 1

    def restore_previous(self, spec: ServiceSpec) -> bool:
        """Put the service back on the spec it had before `spec` was applied (the undo of a redeploy); return
        False when `spec` is no longer the current one (Swarm rolled it back already) or there is nothing."""
        name = spec.name
        try:
            raw = self.api.doing(f"inspect service {name}").inspect_service(name)
        except docker.errors.NotFound:
            return False
        previous = raw.get("PreviousSpec")
        if raw["Spec"]["Name"] != name or not previous or not runs(_service(raw), spec):
            return False
        self.api.doing(f"restore the previous version of service {name}").update_service(
            raw["ID"], raw["Version"]["Index"], name=previous["Name"], task_template=previous["TaskTemplate"],
            labels=previous.get("Labels") or {}, mode=previous.get("Mode"),
            update_config=previous.get("UpdateConfig"), endpoint_spec=previous.get("EndpointSpec"))
        return True

    def _task_template(self, spec: ServiceSpec) -> types.TaskTemplate:
        mounts = [types.Mount(target=path, source=None, type="tmpfs") for path in spec.tmpfs]
        if spec.bind_source:
            mounts.append(types.Mount(target=SITE_ROOT, source=spec.bind_source, type="bind", read_only=True))
        configs = [types.ConfigReference(self._config_id(c.name), c.name, filename=c.target, uid="0", gid="0",
                                         mode=0o444) for c in spec.configs]
        container = types.ContainerSpec(image=spec.image, command=list(spec.command),
                                        env=[f"{k}={v}" for k, v in spec.env], mounts=mounts, configs=configs)
        return types.TaskTemplate(
            container_spec=container,
            restart_policy=types.RestartPolicy(condition=spec.restart_condition, delay=_SECOND),
            placement=types.Placement(constraints=list(spec.constraints) or None,
                                      preferences=[types.PlacementPreference("spread", p) for p in spec.spread] or None)
            if spec.constraints or spec.spread else None,
            networks=[types.NetworkAttachmentConfig(target=spec.network)])

    @staticmethod
    def _update_config() -> types.UpdateConfig:
        return types.UpdateConfig(parallelism=1, order="start-first", failure_action="rollback",
                                  monitor=2 * _SECOND)

    def tasks(self, name: str) -> list[Task]:
        """Return the tasks of service `name`, newest first."""
        try:
            raw = self.api.doing(f"list the tasks of {name}").tasks(filters={"service": name})
        except docker.errors.NotFound:  # the service was removed meanwhile (another run's teardown): no tasks
            return []
        raw.sort(key=lambda t: t.get("UpdatedAt", ""), reverse=True)
        return [_task(t) for t in raw]

    def node_names(self) -> dict[str, str]:
        """Return {node id: hostname} of every node of the swarm."""
        nodes = self.api.doing("list the swarm's nodes").nodes()
        return {n["ID"]: (n.get("Description") or {}).get("Hostname", "") for n in nodes}

    def wait_converged(self, spec: ServiceSpec, timeout: float, *, failures: int = 3) -> list[Task]:
        """Wait until `spec.replicas` tasks of `spec` run and no older task is wanted running; raise DeployError
        with the task errors when they fail, when Swarm rolls the update back, or at the timeout."""
        name, deadline = spec.name, time.monotonic() + timeout
        configs = frozenset(c.name for c in spec.configs)
        while True:
            service = self.service(name)
            if service is None:
                raise DeployError(f"service {name} disappeared while waiting for it to converge")
            seen = convergence(service, self.tasks(name), image=spec.image, configs=configs,
                               replicas=spec.replicas, failures=failures)
            if seen.done:
                return list(seen.tasks)
            if seen.failure:
                raise _not_converged(name, seen.failure, list(seen.tasks))
            if time.monotonic() > deadline:
                raise _not_converged(name, f"not converged after {timeout:.0f} s", list(seen.tasks))
            time.sleep(0.25)

    def remove_service(self, name: str) -> bool:
        """Remove the service; return False when there was none."""
        if self.service(name) is None:  # by exact name: Docker would also take `name` as an id prefix
            return False
        return self._remove(self.api.doing(f"remove service {name}").remove_service, name)

    # --- configs --------------------------------------------------------------------------------------------

    def _config_id(self, name: str) -> str:
        found = [c for c in self.api.configs(filters={"name": name}) if c["Spec"]["Name"] == name]
        if not found:
            raise DeployError(f"Docker: config {name} is missing")
        return str(found[0]["ID"])

    def configs(self, subdomain: str | None = None) -> list[str]:
        """Return the names of the configs graphsite made (for one subdomain, or all)."""
        return sorted(self.config_stamps(subdomain))

    def config_stamps(self, subdomain: str | None = None) -> dict[str, Stamp]:
        """Return {config name: its stamp} of the configs graphsite made (for one subdomain, or all)."""
        return {name: stamp for name, labels in self.labelled_configs(subdomain).items()
                if (stamp := Stamp.from_labels(labels)) is not None}

    def labelled_configs(self, subdomain: str | None = None) -> dict[str, dict[str, str]]:
        """Return {config name: its labels} of the configs labelled with a graphsite name (that name, or any)."""
        label = NAME + (f"={subdomain}" if subdomain else "")
        return {raw["Spec"]["Name"]: raw["Spec"].get("Labels") or {}
                for raw in self.api.configs(filters={"label": label})}

    def configs_named(self, names: Collection[str]) -> frozenset[str]:
        """Return which of `names` are configs of the swarm now, whoever made them: one request (Docker's name
        filter takes several names and matches each as a prefix, so each is compared whole)."""
        wanted = set(names)
        if not wanted:
            return frozenset()
        found = self.api.doing("find configs by name").configs(filters={"name": sorted(wanted)})
        return frozenset(c["Spec"]["Name"] for c in found if c["Spec"]["Name"] in wanted)

    def ensure_config(self, stamp: Stamp, config: ConfigFile) -> bool:
        """Create the config, labelled with the deployment's stamp, unless it exists; return True when it was
        created."""
        if any(c["Spec"]["Name"] == config.name for c in self.api.configs(filters={"name": config.name})):
            return False
        try:
            self.api.create_config(config.name, config.data, labels=config_labels(stamp, config))
        except SwarmError as exc:
            cause = str(exc.__cause__ or "")
            if "exceeds maximum size" in cause or "must be valid as a" in cause:
                raise SwarmError(f"Docker refused config {config.name}: {exc.message.split(': ', 2)[-1]}",
                                 hint="deploy with --content bind") from None
            raise
        return True

    def read_config(self, name: str) -> bytes | None:
        """Return the data of config `name` (a kept version's page), or None when there is no such config."""
        found = [c for c in self.api.doing(f"find config {name}").configs(filters={"name": name})
                 if c["Spec"]["Name"] == name]
        if not found:
            return None
        try:
            raw = self.api.doing(f"read config {name}").inspect_config(found[0]["ID"])
        except docker.errors.NotFound:
            return None
        try:
            return base64.b64decode(raw["Spec"].get("Data") or "", validate=True)
        except (ValueError, TypeError) as exc:
            raise SwarmError(f"Docker: config {name}: its data is not base64 ({exc})",
                             hint="see `docker config inspect " + name + "`") from None

    def relabel_config(self, name: str, labels: dict[str, str]) -> bool:
        """Give config `name` these labels, the one thing Swarm lets a config change (its name and data stay);
        return False when there is no such config."""
        found = [c for c in self.api.configs(filters={"name": name}) if c["Spec"]["Name"] == name]
        if not found:
            return False
        api = self.api.doing(f"relabel config {name}")
        try:
            raw = api.inspect_config(found[0]["ID"])
            # The SDK has no call for it: the Engine's ConfigUpdate takes the spec as inspected, other labels
            # and all, at the version inspected (a config changed meanwhile is refused, not overwritten).
            api._raise_for_status(api._post_json(api._url("/configs/{0}/update", raw["ID"]),
                                                 data={**raw["Spec"], "Labels": labels},
                                                 params={"version": raw["Version"]["Index"]}))
        except docker.errors.NotFound:
            return False
        return True

    def remove_config(self, name: str) -> bool:
        """Remove the config; return False when there was none."""
        return self._remove(self.api.doing(f"remove config {name}").remove_config, name)

    @staticmethod
    def _remove(remove: Callable[[str], object], name: str) -> bool:
        try:
            remove(name)
        except docker.errors.NotFound:
            return False
        return True


def config_labels(stamp: Stamp, config: ConfigFile) -> dict[str, str]:
    """Return the labels of one of a deployment's configs: the deployment's stamp and the sha256 of its data."""
    return {**stamp.labels(), SHA256: config.sha256, **dict(config.labels)}


def _service(raw: Mapping[str, Any]) -> Service:
    spec = raw["Spec"]
    container = spec["TaskTemplate"]["ContainerSpec"]
    return Service(id=raw["ID"], name=spec["Name"], labels=spec.get("Labels") or {},
                   replicas=((spec.get("Mode") or {}).get("Replicated") or {}).get("Replicas", 0),
                   configs=tuple(sorted(c["ConfigName"] for c in container.get("Configs") or [])),
                   version=raw["Version"]["Index"], image=container.get("Image", ""),
                   spec_digest=spec_digest(spec))


def spec_digest(spec: Mapping[str, Any]) -> str:
    """Return the sha256 of a service's Spec as Docker reports it (its keys sorted): equal while nobody changed
    the service, whatever Swarm's own bookkeeping (UpdateStatus, the version index) did meanwhile."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _task(raw: Mapping[str, Any]) -> Task:
    status = raw.get("Status") or {}
    container = (raw.get("Spec") or {}).get("ContainerSpec") or {}
    addresses = tuple(((a.get("Network") or {}).get("Spec", {}).get("Name", ""), address.split("/")[0])
                      for a in raw.get("NetworksAttachments") or [] for address in a.get("Addresses") or [])
    return Task(id=raw["ID"][:12], state=status.get("State", ""), desired=raw.get("DesiredState", ""),
                error=status.get("Err", ""), message=status.get("Message", ""), node=raw.get("NodeID", ""),
                spec_configs=tuple(sorted(c["ConfigName"] for c in container.get("Configs") or [])),
                image=container.get("Image", ""), addresses=addresses)


@dataclass(frozen=True)
class Convergence:
    """One look at a service being rolled out: `done` (tasks: its running tasks), `failure` (why it will not
    converge; tasks: the ones to show), or still under way (tasks: the ones to show if time runs out)."""

    tasks: tuple[Task, ...]
    done: bool = False
    failure: str = ""


def convergence(service: Service, tasks: list[Task], *, image: str, configs: frozenset[str], replicas: int,
                failures: int) -> Convergence:
    """Judge one poll of a rollout (pure): done when `replicas` tasks of the current spec run and no older task
    is wanted or still running (start-first: the old ones serve until they have stopped); failed when Swarm
    rolled the update back (the service no longer has the wanted image or configs) or when `failures` tasks
    of the current spec failed and none runs."""
    failed = [t for t in tasks if t.failed()]
    if not same_image(service.image, image) or set(service.configs) != configs:
        return Convergence(tuple(failed), failure="Swarm rolled the update back; the previous version still runs")
    running = [t for t in tasks if t.serves(service)]
    if len(running) >= replicas and not any(t.lingers(service) for t in tasks):
        return Convergence(tuple(running), done=True)
    mine = [t for t in failed if t.of(service)]
    if len(mine) >= failures and not running:
        return Convergence(tuple(mine), failure=f"{len(mine)} tasks failed")
    return Convergence(tuple(mine or tasks))


def same_image(running: str, wanted: str) -> bool:
    """True when Swarm's image reference is the configured one: Swarm adds the digest it resolved to a tag
    (`caddy:2-alpine@sha256:…`), and keeps a digest the configuration pinned itself."""
    return running == wanted if "@" in wanted else running.split("@")[0] == wanted


def runs(current: Service | None, spec: ServiceSpec) -> bool:
    """True when the service `current` (as inspected) already runs exactly `spec`."""
    return current is not None and (current.labels == dict(spec.labels) and current.replicas == spec.replicas
            and same_image(current.image, spec.image)
            and current.configs == tuple(sorted(c.name for c in spec.configs)))


class ServiceOutcome(StrEnum):
    """What ensure_service did under a service's name (service_verdict decides it before the write)."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    EXISTS = "exists"  # one is there where the plan read none: left as it is, never rolled to this run's spec
    GONE = "gone"  # none is there where the plan read one (another host's teardown): not made again
    ANOTHER = "another"  # another service holds the name (another host's teardown, then a deploy): left as it is
    # the service the plan read, its Spec changed since (another host's deploy or rollback, `docker service
    # update`): Docker refused the update at the version the plan read; left as the other change made it
    CHANGED = "changed"


@dataclass(frozen=True)
class Expected:
    """What a caller's plan read under a service's name, the only thing ensure_service may change there: no
    service (NOTHING_READ), or the service `id` as it was at Swarm's `version` index, its Spec then hashed to
    `spec_digest`. Made by `Expected.read` from the plan's read; nothing else is a read."""

    id: str | None
    version: int
    spec_digest: str

    def __post_init__(self) -> None:
        found = self.id is not None
        if (self.version > 0, bool(self.spec_digest)) != (found, found):
            raise ValueError(f"{self!r} is not what a plan can read: make it with Expected.read(service)")

    @classmethod
    def read(cls, service: Service | None) -> Expected:
        """Return what a plan that read `service` (None: no service) expects."""
        return NOTHING_READ if service is None else cls(service.id, service.version, service.spec_digest)


NOTHING_READ: Final = Expected(None, 0, "")  # what a plan that found no service under the name expects


def service_verdict(current: Service | None, spec: ServiceSpec, expected: Expected) -> ServiceOutcome:
    """Return what ensure_service does with `current`, the service under `spec`'s name now, given what the plan
    read (pure): create it, roll it to `spec`, leave it unchanged, or leave it as it is because it is not what the
    plan read. The version is not compared here: the write carries it, and Docker's answer decides."""
    if expected.id is None:
        return ServiceOutcome.CREATED if current is None else ServiceOutcome.EXISTS
    if current is None:
        return ServiceOutcome.GONE
    if current.id != expected.id:
        return ServiceOutcome.ANOTHER
    return ServiceOutcome.UNCHANGED if runs(current, spec) else ServiceOutcome.UPDATED


def _kept_moving(name: str, version: int) -> SwarmError:
    return SwarmError(f"Docker: update service {name}: refused as out of sequence {_BOOKKEEPING_RETRIES + 1} times "
                      f"(last at version {version}), though its spec stayed the one this run read: Swarm kept "
                      "writing its rollout's state meanwhile; the service was left as it is",
                      hint=f"wait until `docker service ps {name}` shows its tasks settled, then run the command "
                           "again")


def _not_converged(name: str, why: str, tasks: list[Task]) -> DeployError:
    seen: dict[str, list[str]] = {}  # identical errors once, with the tasks that had them
    for task in tasks[:10]:
        seen.setdefault(f"{task.state}: {task.error or task.message}", []).append(task.id)
    lines = [f"task {', '.join(ids)}: {why_task}" for why_task, ids in seen.items()]
    return DeployError(f"service {name} did not converge ({why})" + "".join(f"\n  {s}" for s in lines),
                       hint="check the image and `docker service ps --no-trunc " + name + "`")


# --- read-only facts for `graphsite doctor` (nothing below changes the daemon) ------------------------------


@dataclass(frozen=True)
class DaemonFacts:
    """The daemon and this node as Docker reports them."""

    version: str
    api_version: str
    swarm_state: str  # inactive, pending, active, error, locked
    manager: bool
    node_id: str


@dataclass(frozen=True)
class NetworkFacts:
    """A network by exact name: found, and its driver, scope and attachable flag when it is."""

    name: str
    found: bool
    driver: str = ""
    scope: str = ""
    attachable: bool = False


@dataclass(frozen=True)
class ImageFacts:
    """Whether the image is on this node, else whether its registry answers for it (a manifest lookup)."""

    image: str
    present: bool
    pullable: bool = False
    detail: str = ""


def daemon_facts(swarm: Swarm) -> DaemonFacts:
    """Return the daemon's version, API version and this node's Swarm role."""
    api = swarm.api.doing("read the daemon's version and info")
    version, info = api.version(), api.info()
    state = info.get("Swarm") or {}
    return DaemonFacts(version=version.get("Version", ""), api_version=version.get("ApiVersion", ""),
                       swarm_state=state.get("LocalNodeState", ""), manager=bool(state.get("ControlAvailable")),
                       node_id=state.get("NodeID", ""))


def network_facts(swarm: Swarm, name: str) -> NetworkFacts:
    """Return the network called exactly `name` (Docker's name filter also matches prefixes)."""
    found = [n for n in swarm.api.doing(f"list networks named {name}").networks(names=[name]) if n["Name"] == name]
    if not found:
        return NetworkFacts(name=name, found=False)
    raw = found[0]
    return NetworkFacts(name=name, found=True, driver=raw.get("Driver", ""), scope=raw.get("Scope", ""),
                        attachable=bool(raw.get("Attachable")))


def image_facts(swarm: Swarm, image: str) -> ImageFacts:
    """Return whether `image` is on this node, else whether its registry describes it (nothing is pulled)."""
    try:
        swarm.api.inspect_image(image)
        return ImageFacts(image=image, present=True)
    except docker.errors.NotFound:  # ImageNotFound is one: the image is not on this node
        pass
    try:
        swarm.api.inspect_distribution(image)
    except (docker.errors.NotFound, SwarmError) as exc:
        cause = exc.__cause__ or exc
        detail = getattr(cause, "explanation", None) or str(cause)
        return ImageFacts(image=image, present=False, pullable=False, detail=str(detail)[:300])
    return ImageFacts(image=image, present=False, pullable=True)
