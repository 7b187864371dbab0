"""Every error the world can cause reaches the person at the keyboard as one line with a next step, never as a
traceback: each adapter's untranslated paths driven for real (a server that never answers, a daemon that is no
Swarm manager, a daemon that is not there, a route file the filesystem will not let go, a malformed token)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from graphsite.errors import ConfigError, GraphsiteError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def silent_server():
    """A TCP server on 127.0.0.1 that accepts connections and never answers (a stalled API). Yields its port and
    the number of connections it accepted."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1], accepted
    stop.set()
    thread.join(2)
    for connection in accepted:
        connection.close()
    listener.close()


def _dns_config(production, port: int, **dns):
    return production.replace("site", domain="lab.graphsite.test").replace(
        "dns", api_base_url=f"http://127.0.0.1:{port}/client/v4", zone_id="0" * 32, **dns)


def test_a_stalled_cloudflare_is_a_one_line_error_within_its_time(production, silent_server, monkeypatch):
    from graphsite.publisher.cloudflare import Dns, DnsError

    port, accepted = silent_server
    token = "t" * 40
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", token)
    dns = Dns(_dns_config(production, port, timeout=0.5, retries=1))
    try:
        with pytest.raises(DnsError) as info:
            dns.records("gs-x.lab.graphsite.test")
    finally:
        dns.close()
    message = info.value.message
    assert "no answer from" in message and "within 0.5 s" in message and token not in message
    assert len(accepted) == 2  # the request and its one retry


def test_a_teardown_deadline_bounds_every_retry(production, silent_server, monkeypatch):
    import time

    from graphsite.publisher.cloudflare import Dns, DnsError

    port, _ = silent_server
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", "t" * 40)
    dns = Dns(_dns_config(production, port, timeout=5.0, retries=10))
    dns.limit(1.0)
    start = time.monotonic()
    try:
        with pytest.raises(DnsError):
            dns.records("gs-x.lab.graphsite.test")
    finally:
        dns.close()
    assert time.monotonic() - start < 3.0  # not 10 retries of 5 s


@pytest.mark.parametrize("token", ["abc\ndef" + "x" * 30, " " * 3 + "y" * 30 + "\tz", "z" * 30 + "\x07" + "z",
                                   "é" * 30])
def test_a_token_that_cannot_be_a_token_is_refused_before_any_request(production, silent_server, monkeypatch, token):
    from graphsite.publisher.cloudflare import Dns

    port, accepted = silent_server
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", token)
    with pytest.raises(ConfigError) as info:
        Dns(_dns_config(production, port))
    assert "cannot be a token" in info.value.message
    assert token.strip() not in info.value.message and token.strip()[:8] not in info.value.message
    assert accepted == []


def test_the_undo_runs_every_step_whatever_one_raises():
    from graphsite.publisher.undo import Undo

    done: list[str] = []
    undo = Undo()
    undo.push("config a", "removed config a", lambda: done.append("a") or True)
    undo.push("directory b", "removed directory b", lambda: (_ for _ in ()).throw(OSError(13, "Permission denied")))
    undo.push("service c", "removed service c", lambda: (_ for _ in ()).throw(KeyError("a bug")))
    undo.push("route d", "removed route d", lambda: False)
    undo.push("record e", "deleted record e", lambda: (_ for _ in ()).throw(GraphsiteError("Cloudflare: 500")))
    lines = undo.run()
    # every step runs; those that failed are tried once more at the end (a stalled daemon may answer by then)
    assert lines == ["nothing to undo: route d (already as it was)", "undone: removed config a",
                     "NOT undone: record e: Cloudflare: 500", "NOT undone: service c: 'a bug'",
                     "NOT undone: directory b: [Errno 13] Permission denied"]
    assert done == ["a"] and undo.pending() == []


def test_a_step_found_done_on_its_second_try_says_so():
    """A daemon that answered after the client's timeout had applied the step: the second try finds nothing to
    undo, and the line says the resource is as it was, not that there was nothing to undo."""
    from graphsite.publisher.undo import Undo

    tries: list[int] = []

    def restore() -> bool:
        tries.append(1)
        if len(tries) == 1:
            raise TimeoutError("the daemon did not answer in time")
        return False

    undo = Undo()
    undo.push("service s", "restored the previous version of service s", restore)
    assert undo.run() == ["undone: service s is as it was (found so on a second try, after the first failed)"]


# --- against the lab ---------------------------------------------------------------------------------------


@pytest.mark.lab
def test_docker_not_there_still_lists_the_other_systems(publab):
    """With no Docker daemon to ask, list shows the routes, directories and records it can read, names Docker
    as unreadable and exits 1; deploy is one line."""
    name = publab.name()
    assert publab.run("deploy", "--subdomain", name, "--no-verify").exit_code == 0
    gone = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    listed = publab.run("list", "--json", env=gone)
    assert listed.exit_code == 1 and "Traceback" not in listed.stderr
    data = json.loads(listed.stdout)
    assert "Docker Swarm" in data["unreadable"]
    mine = {d["subdomain"]: d for d in data["deployments"]}[name]
    assert mine["route"] and mine["record"] and mine["service"] is False  # seen from the route and Cloudflare
    deploy = publab.run("deploy", "--subdomain", name, "--no-verify", env=gone)
    assert deploy.exit_code == 1 and "Traceback" not in deploy.stderr
    assert "Docker: cannot reach the daemon" in deploy.stderr


@pytest.mark.lab
def test_a_route_the_filesystem_will_not_let_go_is_reported_and_a_second_teardown_finishes(publab):
    """An immutable route file (chattr +i: not even root may remove it) fails the route step: teardown still
    removes the rest, exits 1 saying what is left and to run it again; once the file may go, it finishes."""
    if shutil.which("chattr") is None:
        pytest.fail("chattr (e2fsprogs) is needed to make a file root cannot remove")
    name = publab.name()
    assert publab.run("deploy", "--subdomain", name, "--no-verify").exit_code == 0
    path = Path(publab.config.deploy.dynamic_dir) / f"{name}.yml"
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        first = publab.run("teardown", name)
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    assert first.exit_code == 1 and "Traceback" not in first.stderr
    assert f"failed    route {path}" in first.stdout and "Operation not permitted" in first.stdout
    assert f"removed   service {name}" in first.stdout and "removed   record" in first.stdout
    assert f"run `graphsite teardown {name}` again" in first.stderr
    second = publab.run("teardown", name)
    assert second.exit_code == 0, second.stderr
    assert f"removed   route {path}" in second.stdout


NOT_A_MANAGER = r"""
set -u
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/lib/docker
if [ -d /var/lib/containerd ]; then mount -t tmpfs tmpfs /var/lib/containerd; fi
dockerd --bridge=none --iptables=false --ip6tables=false -H unix:///run/worker.sock \
  --pidfile /run/worker.pid >/run/worker.log 2>&1 &
for _ in $(seq 100); do
  docker -H unix:///run/worker.sock version >/dev/null 2>&1 && break; sleep 0.1
done
export DOCKER_HOST=unix:///run/worker.sock
"$GRAPHSITE" list --json >/run/list.out 2>/run/list.err; echo "@@list $?"
"$GRAPHSITE" deploy --subdomain "$NAME" --no-verify >/run/deploy.out 2>/run/deploy.err; echo "@@deploy $?"
"$GRAPHSITE" doctor --json >/run/doctor.out 2>/run/doctor.err; echo "@@doctor $?"
echo "@@doctor-stdout $(tr -d '\n' </run/doctor.out)"
echo "@@list-stdout $(tr -d '\n' </run/list.out)"
echo "@@list-stderr $(tr '\n' ' ' </run/list.err)"
echo "@@deploy-stderr $(tr '\n' ' ' </run/deploy.err)"
kill "$(cat /run/worker.pid)"; wait
"""


@pytest.mark.lab
def test_a_daemon_that_is_no_swarm_manager(publab, tmp_path):
    """A real second dockerd, not in any swarm, in a private mount namespace: list names Docker Swarm as
    unreadable (exit 1), deploy says to run on a manager; neither prints a traceback."""
    script = tmp_path / "not_a_manager.sh"
    script.write_text(NOT_A_MANAGER)
    env = {**os.environ, "GRAPHSITE": str(REPO / ".venv" / "bin" / "graphsite"), "NAME": publab.name(),
           "GRAPHSITE_CONFIG": str(publab.config_path), "GRAPHSITE_SITE_PREFIX": publab.prefix, "NO_COLOR": "1"}
    run = subprocess.run(["unshare", "--mount", "--fork", "bash", str(script)], capture_output=True, text=True,
                         env=env, timeout=120, check=False)
    markers = dict(line[2:].split(" ", 1) for line in run.stdout.splitlines() if line.startswith("@@"))
    assert markers.get("list") == "1", run.stdout + run.stderr
    listed = json.loads(markers["list-stdout"])
    assert "Docker Swarm" in listed["unreadable"] and "manager" in listed["unreadable"]["Docker Swarm"]
    assert markers["deploy"] == "1" and "Traceback" not in markers["deploy-stderr"]
    assert "not a Swarm manager" in markers["deploy-stderr"] or "swarm manager" in markers["deploy-stderr"].lower()
    assert "Traceback" not in markers["list-stderr"]
    assert markers["doctor"] == "1"  # doctor names the same cause, with its fix
    doctor = {c["name"]: c for c in json.loads(markers["doctor-stdout"])["checks"]}
    role = [c for name, c in doctor.items() if name.startswith("docker.") and c["status"] == "FAIL"
            and "swarm" in c["evidence"].lower()]
    assert role and "swarm init" in role[0]["fix"], doctor


@pytest.mark.parametrize("address", ["127.0.0.1:abc", "[::1"])
def test_a_mistyped_probe_address_is_a_failed_probe_not_a_traceback(address):
    from graphsite.publisher import probe

    result = probe.fetch("https", "page.example", address, timeout=1)
    assert result.status == 0 and result.error.startswith("InvalidURL: Invalid port")
