"""The lab's edge obeys the route files (the Traefik stand-in), so the lab proves what production depends on:
a page is served only while its route is loaded, a wrong route fails verify, a broken file blocks every change,
private pages ask for the password, and the operator's middlewares reach the client."""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from graphsite.atomic import write_atomic
from graphsite_lab.probe import fetch
from graphsite_lab.traefik.translate import NOT_FOUND

pytestmark = pytest.mark.lab

FAST_VERIFY = {"GRAPHSITE_VERIFY_DEADLINE": "2"}  # a check that must fail need not retry for a minute


def _answer(publab, fqdn: str, *, auth=None, port=None):
    """Return what the edge answers for https://fqdn/ (status, body); TLS unverified when the edge has no
    certificate of the lab CA for the name (a host without route gets Traefik's default certificate)."""
    lab_dir = Path(publab.config.verify.ca_bundle).parent
    https = int(publab.config.verify.resolve_https.rsplit(":", 1)[1])
    try:
        got = fetch(fqdn, port or https, ca=lab_dir / "ca.pem", auth=auth)
    except ssl.SSLError:
        got = fetch(fqdn, port or https, ca=None, insecure=True, auth=auth)
    return got.status, got.body


def _until(check, seconds: float = 8.0):
    """Return check()'s first truthy answer within `seconds` (the watcher polls every 0.25 s), else fail."""
    deadline, last = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as exc:  # a connection the edge closes while it swaps configurations
            last = exc
        if last and not isinstance(last, OSError):
            return last
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s (last: {last!r})")


def _deploy(publab, name: str, *args: str, env: dict | None = None) -> dict:
    done = publab.run("deploy", "--subdomain", name, "--json", *args, env=env)
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def dynamic_dir(publab):
    return Path(publab.config.deploy.dynamic_dir)


@pytest.fixture
def deployed(publab):
    """A fresh deployment of the embedded report (torn down by the session's cleanup, and here)."""
    name = publab.name()
    result = _deploy(publab, name)
    yield name, result
    publab.run("teardown", name)


def test_the_route_file_alone_decides_whether_the_page_is_served(publab, deployed, dynamic_dir, tmp_path):
    name, result = deployed
    fqdn, route = result["fqdn"], Path(result["route"])
    assert _answer(publab, fqdn)[0] == 200
    shutil.move(route, tmp_path / route.name)
    assert _until(lambda: _answer(publab, fqdn) == (404, NOT_FOUND.encode()))
    clients = publab.clients()
    try:
        assert clients.swarm.service(name) is not None  # the service still runs: only the route went
    finally:
        clients.close()
    shutil.move(tmp_path / route.name, route)
    assert _until(lambda: _answer(publab, fqdn)[0] == 200)
    assert publab.run("teardown", name).exit_code == 0
    assert _until(lambda: _answer(publab, fqdn) == (404, NOT_FOUND.encode()), seconds=2)


def _break_service_url(document, name):
    document["http"]["services"][f"{name}-service"]["loadBalancer"]["servers"][0]["url"] = f"http://{name}:20129"


def _break_host(document, name):
    for router in document["http"]["routers"].values():
        router["rule"] = router["rule"].replace(name, f"{name}x")


def _drop_redirect(document, name):
    del document["http"]["routers"][f"{name}-web"]["middlewares"]


@pytest.fixture(scope="module")
def shared_deployment(publab):
    """One deployment for the wrong-route tests; each puts its route back."""
    name = publab.name()
    result = _deploy(publab, name)
    yield name, result
    publab.run("teardown", name)


@pytest.mark.parametrize("breaking, failed", [
    (_break_service_url, {"origin", "public"}),  # the edge answers 502
    (_break_host, {"origin", "public", "tls", "redirect"}),  # 404 with the default certificate
    (_drop_redirect, {"redirect"}),  # http serves the page instead of redirecting
])
def test_a_wrong_route_fails_verify_at_the_edge(publab, shared_deployment, breaking, failed):
    name, result = shared_deployment
    route = Path(result["route"])
    good = route.read_text()
    document = yaml.safe_load(good)
    breaking(document, name)
    before = _applied_config()
    write_atomic(route, yaml.safe_dump(document))
    try:
        _until(lambda: _applied_config() not in ("", before), 15.0)  # the edge serves the wrong route (was: sleep 1)
        done = publab.run("verify", name, "--json", env=FAST_VERIFY)
    finally:
        write_atomic(route, good)
    assert done.exit_code == 1, done.stdout
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert {n for n, c in checks.items() if c["status"] == "FAIL"} == failed | {"route"}, checks


@pytest.fixture
def broken_file(dynamic_dir, publab):
    """An unparsable file of someone else's in the dynamic directory, removed again whatever happens."""
    path = dynamic_dir / f"{publab.prefix}-zz-broken.yml"
    yield path
    path.unlink(missing_ok=True)


def test_an_unparsable_file_keeps_the_previous_configuration_and_blocks_deploys(publab, deployed, broken_file):
    name, result = deployed
    fqdn, route = result["fqdn"], Path(result["route"])
    broken_file.write_text("http:\n  routers: [\n")
    checked = publab.run("verify", name, "--json", env=FAST_VERIFY)
    assert checked.exit_code == 1
    failed = {c["name"]: c["evidence"] for c in json.loads(checked.stdout)["checks"] if c["status"] == "FAIL"}
    assert list(failed) == ["route"] and str(broken_file) in failed["route"]
    route.unlink()  # Traefik applies no change now: the page stays served although its route is gone
    time.sleep(1.0)
    assert _answer(publab, fqdn)[0] == 200
    second = publab.name()
    blocked = publab.run("deploy", "--subdomain", second, "--no-verify")
    assert blocked.exit_code == 1
    assert f"{broken_file}: line 3, column 1" in blocked.stderr
    from graphsite_lab.health import status
    from graphsite_lab.instance import LabInstance

    routes = next(part for part in status(LabInstance.from_env()) if part.name.startswith("routes"))
    assert not routes.ok and f"REJECTED {broken_file.name}: cannot be parsed: line 3" in routes.detail
    broken_file.unlink()
    assert _until(lambda: _answer(publab, fqdn)[0] == 404)  # the directory applies again: its route is gone
    try:
        _deploy(publab, second)
    finally:
        publab.run("teardown", second)


def _applied_config() -> str:
    """Return the id of the configuration the routes watcher last loaded into the edge ("" before any): a change
    of the directory it has applied changes it (a reload that read the directory before a write does not)."""
    from graphsite_lab.instance import LabInstance
    from graphsite_lab.processes import routes_health

    status = routes_health(LabInstance.from_env()) or {}
    return str((status.get("applied") or {}).get("config_id") or "")


def _lab_bytes(root: Path):
    """Yield (path, bytes) of every file under `root`; one replaced or removed while the walk goes on (the
    watcher's status, the fake Cloudflare's state, the edge's storage) is passed over."""
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                yield path, path.read_bytes()
        except FileNotFoundError:
            continue


def test_a_private_page_asks_for_the_printed_credentials_which_are_nowhere_else(publab):
    name = publab.name()
    try:
        result = _deploy(publab, name, "--private")
        user, password = result["access"]["user"], result["access"]["password"]
        fqdn = result["fqdn"]
        assert result["private"] is True and {c["status"] for c in result["checks"]} == {"PASS"}
        assert _answer(publab, fqdn)[0] == 401
        assert _answer(publab, fqdn, auth=(user, password + "x"))[0] == 401
        assert _answer(publab, fqdn, auth=(user, password))[0] == 200
        route = Path(result["route"]).read_text()
        assert "basicAuth" in route and "$2b$" in route
        lab_dir = Path(publab.config.verify.ca_bundle).parent
        assert not [path for path, data in _lab_bytes(lab_dir) if password.encode() in data]
        spec = subprocess.run(["docker", "service", "inspect", name], capture_output=True, text=True, check=True)
        logs = subprocess.run(["docker", "service", "logs", "--raw", name], capture_output=True, text=True,
                              check=False)
        from graphsite_lab.instance import LabInstance

        edge = subprocess.run(["docker", "logs", LabInstance.from_env().edge_name], capture_output=True, text=True,
                              check=False)
        assert password not in spec.stdout + logs.stdout + logs.stderr + edge.stdout + edge.stderr
        listed = json.loads(publab.run("list", "--json").stdout)["deployments"]
        assert next(d for d in listed if d["subdomain"] == name)["private"] is True
        later = publab.run("verify", name, "--json")  # no password here: 401 is the proof, content unchecked
        assert later.exit_code == 0, later.stdout
        public = next(c for c in json.loads(later.stdout)["checks"] if c["name"] == "public")
        assert public["status"] == "SKIP" and "HTTP 401 without credentials, as a private" in public["evidence"]

        again = _deploy(publab, name)  # a redeploy keeps the credentials
        assert "access" not in again and again["private"] is True
        assert _answer(publab, fqdn, auth=(user, password))[0] == 200
        renewed = _deploy(publab, name, "--new-password")
        assert renewed["access"]["password"] != password
        assert _until(lambda: _answer(publab, fqdn, auth=(user, password))[0] == 401)
        assert _answer(publab, fqdn, auth=(user, renewed["access"]["password"]))[0] == 200
    finally:
        publab.run("teardown", name)


@contextlib.contextmanager
def _overlay_client(publab, upstream: str):
    """Yield the port on 127.0.0.1 of a container on the overlay network that passes every request, headers
    and all, to `upstream` (host:port on the overlay): what any container on deploy.network can ask a service
    directly, past the edge. The lab's image holds nothing but Caddy, so the client is `caddy reverse-proxy`."""
    config = publab.config.deploy
    name = f"{publab.prefix}-overlay-{secrets.token_hex(2)}"
    subprocess.run(["docker", "run", "--detach", "--rm", "--name", name, "--network", config.network,
                    "--publish", "127.0.0.1::8000", config.image,
                    "caddy", "reverse-proxy", "--from", ":8000", "--to", upstream],
                   capture_output=True, text=True, check=True)
    try:
        published = subprocess.run(["docker", "port", name, "8000/tcp"], capture_output=True, text=True,
                                   check=True).stdout
        yield int(published.split()[0].rsplit(":", 1)[1])
    finally:
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, check=False)


def test_a_private_page_asks_for_the_password_at_its_own_service_too(publab):
    """No container on the overlay network reads a private page without the password: the service's Caddy asks
    for the route's users itself (the edge keeps its own check)."""
    name = publab.name()
    try:
        result = _deploy(publab, name, "--private")
        credentials, fqdn = (result["access"]["user"], result["access"]["password"]), result["fqdn"]
        port = publab.config.deploy.port
        with _overlay_client(publab, f"{name}:{port}") as local:
            def direct(auth=None) -> int:
                return fetch(fqdn, local, ca=None, auth=auth).status

            assert _until(lambda: (status := direct()) != 502 and status) == 401  # 502: the proxy is not ready
            assert direct((credentials[0], credentials[1] + "x")) == 401
            answer = fetch(fqdn, local, ca=None, auth=credentials)
            assert answer.status == 200 and hashlib.sha256(answer.body).hexdigest() == result["sha256"]
            assert answer.headers["x-content-type-options"] == "nosniff"
        public = _deploy(publab, name, "--public")  # and a public page is served to the overlay as before
        with _overlay_client(publab, f"{name}:{port}") as local:
            assert _until(lambda: fetch(fqdn, local, ca=None).status == 200)
        assert public["private"] is False
    finally:
        publab.run("teardown", name)


def _statuses(done) -> dict[str, str]:
    return {c["name"]: c["status"] for c in json.loads(done.stdout)["checks"]}


def test_verify_reads_a_private_page_only_with_its_password_and_never_passes_what_it_did_not_read(publab, tmp_path):
    name = publab.name()
    try:
        result = _deploy(publab, name, "--private", "--content", "bind")
        password = result["access"]["password"]
        secret = tmp_path / "password"
        secret.write_text(password + "\n")
        content = {"origin", "public"}

        blind = publab.run("verify", name, "--json")
        assert blind.exit_code == 0, blind.stdout
        assert {n for n, s in _statuses(blind).items() if s != "PASS"} == content
        assert set(_statuses(blind).values()) == {"PASS", "SKIP"} and not json.loads(blind.stdout)["content_checked"]
        assert f"Verified {name}: 5 passed, 2 skipped; content not checked: the page is private" in blind.stderr

        for how in (["--password-file", str(secret)], ["--password-file", "-"]):
            read = publab.run("verify", name, "--json", *how, env={"GRAPHSITE_PASSWORD": "not this one"},
                              **({"input": password} if how[1] == "-" else {}))
            assert read.exit_code == 0, read.stdout
            assert set(_statuses(read).values()) == {"PASS"} and json.loads(read.stdout)["content_checked"]
        from_env = publab.run("verify", name, "--json", env={"GRAPHSITE_PASSWORD": password})
        assert set(_statuses(from_env).values()) == {"PASS"}, from_env.stdout
        assert f"Verified {name}: 7 passed" in from_env.stderr

        wrong = publab.run("verify", name, "--json", env={"GRAPHSITE_PASSWORD": password + "x"})
        assert wrong.exit_code == 1 and {n for n, s in _statuses(wrong).items() if s == "FAIL"} == content

        page = Path(publab.config.deploy.bind_root) / name / "index.html"
        write_atomic(page, page.read_bytes().replace(b"</body>", b"<p>swapped</p></body>"))
        swapped = publab.run("verify", name, "--json", "--password-file", str(secret))
        assert swapped.exit_code == 1
        checks = {c["name"]: c for c in json.loads(swapped.stdout)["checks"]}
        assert {n for n, c in checks.items() if c["status"] == "FAIL"} == content
        assert "is not the deployed" in checks["public"]["evidence"] and checks["public"]["seconds"] < 10
        unread = publab.run("verify", name, "--json")  # without the password the swap is not seen: SKIP, not PASS
        assert unread.exit_code == 0 and {n for n, s in _statuses(unread).items() if s == "SKIP"} == content
    finally:
        publab.run("teardown", name)


def test_auth_file_users_and_a_human_deploy_prints_the_password_once_on_stderr(publab, tmp_path):
    from graphsite.publisher.access import hash_line

    htpasswd = tmp_path / "htpasswd"
    htpasswd.write_text(hash_line("alice", "correct horse", rounds=4) + "\n")
    name = publab.name()
    try:
        result = _deploy(publab, name, "--auth-file", str(htpasswd))
        assert "access" not in result and result["private"] is True
        assert _answer(publab, result["fqdn"])[0] == 401
        assert _answer(publab, result["fqdn"], auth=("alice", "correct horse"))[0] == 200
        human = publab.run("deploy", "--subdomain", name, "--new-password", "--no-verify")
        assert human.exit_code == 0, human.stderr
        printed = [line for line in human.stderr.splitlines() if line.startswith("Private: user reader, password")]
        assert len(printed) == 1 and "password" not in human.stdout
    finally:
        publab.run("teardown", name)


@pytest.fixture
def operator_middleware(publab, dynamic_dir):
    """A security-headers middleware of the operator's, in a file of its own, as on a Dokploy host."""
    name = f"{publab.prefix}-security"
    path = dynamic_dir / f"{name}.yml"
    write_atomic(path, yaml.safe_dump({"http": {"middlewares": {name: {"headers": {
        "frameDeny": True, "stsSeconds": 31536000, "customResponseHeaders": {"X-Operator": "graphsite-lab"}}}}}}))
    yield f"{name}@file"
    path.unlink(missing_ok=True)


def test_the_operators_middlewares_are_on_the_router_and_their_headers_reach_the_client(publab, operator_middleware):
    name = publab.name()
    env = {"GRAPHSITE_DEPLOY_MIDDLEWARES": operator_middleware}
    try:
        result = _deploy(publab, name, env=env)
        router = yaml.safe_load(Path(result["route"]).read_text())["http"]["routers"][f"{name}-websecure"]
        assert router["middlewares"] == [operator_middleware]
        lab_dir = Path(publab.config.verify.ca_bundle).parent
        https = int(publab.config.verify.resolve_https.rsplit(":", 1)[1])
        answer = fetch(result["fqdn"], https, ca=lab_dir / "ca.pem")
        assert answer.headers["x-operator"] == "graphsite-lab" and answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["strict-transport-security"] == "max-age=31536000"
        assert answer.headers["x-content-type-options"] == "nosniff"  # the page's own server, too
        missing = publab.run("deploy", "--subdomain", name, "--no-verify",
                             env={"GRAPHSITE_DEPLOY_MIDDLEWARES": f"{operator_middleware},nope@file"})
        assert missing.exit_code == 1 and "deploy.middlewares: nope@file defined in no file" in missing.stderr
    finally:
        publab.run("teardown", name)


def test_a_failed_redeploy_with_new_credentials_puts_the_old_route_back(publab):
    name = publab.name()
    try:
        first = _deploy(publab, name, "--private", "--no-verify")
        route = Path(first["route"])
        before = route.read_text()
        credentials = (first["access"]["user"], first["access"]["password"])
        failing = {**FAST_VERIFY, "GRAPHSITE_VERIFY_ORIGIN_ADDRESS": "127.0.0.1:1"}  # the origin check fails
        failed = publab.run("deploy", "--subdomain", name, "--new-password", "--json", env=failing)
        assert failed.exit_code == 1
        assert f"undone: put back the previous route {route}" in failed.stderr
        assert route.read_text() == before
        assert _until(lambda: _answer(publab, first["fqdn"], auth=credentials)[0] == 200)
    finally:
        publab.run("teardown", name)
