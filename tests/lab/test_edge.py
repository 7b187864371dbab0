"""The lab's own proof, independent of the publisher's deploy: a Swarm service with graphsite's service spec
(page image, tmpfs /data and /config, Swarm configs, dnsrr on dokploy-network) and a route file in the dynamic
directory is served through the edge over TLS that verifies against .lab/ca.pem; http redirects permanently;
the certificate lives long enough; a host no route names gets Traefik's 404."""

from __future__ import annotations

import hashlib
import http.client
import secrets
import ssl
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from graphsite.atomic import write_atomic
from graphsite.publisher.route import RouteSettings, dump, route_document
from graphsite_lab.docker import docker
from graphsite_lab.probe import fetch
from graphsite_lab.traefik.translate import NOT_FOUND

pytestmark = pytest.mark.lab

PREFIX = "labtest-"
PAGE_CADDYFILE = """{
	admin off
	auto_https off
}
:20128 {
	root * /srv
	encode zstd gzip
	file_server
}
"""


def _cleanup() -> None:
    """Remove every service and config a lab test made (by the test label), before and after."""
    for kind in ("service", "config"):
        listed = docker(kind, "ls", "--filter", "label=graphsite.lab.test", "--format", "{{.ID}}").stdout.split()
        if listed:
            docker(kind, "rm", *listed, check=False)


def _until(check, seconds: float = 60):
    """Return check()'s first truthy answer, retrying up to a deadline (convergence, not speed)."""
    deadline, last = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        try:
            answer = check()
            if answer:
                return answer
        except (OSError, ssl.SSLError, http.client.HTTPException) as exc:  # an edge restarting behind docker-proxy
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"no answer within {seconds} s (last error: {last!r})")


@pytest.fixture(scope="module")
def page_service(lab, tmp_path_factory):
    """A Swarm service serving a page of its own, named like a graphsite deployment."""
    _cleanup()
    name = f"{PREFIX}{secrets.token_hex(3)}"
    html = f"<!doctype html><title>{name}</title><p>served by the lab</p>\n".encode()
    folder = tmp_path_factory.mktemp("page")
    (folder / "index.html").write_bytes(html)
    (folder / "Caddyfile").write_text(PAGE_CADDYFILE)
    label = ["--label", f"graphsite.lab.test={name}"]
    docker("config", "create", *label, f"{name}-html", str(folder / "index.html"))
    docker("config", "create", *label, f"{name}-caddyfile", str(folder / "Caddyfile"))
    docker("service", "create", "--detach", "--quiet", "--name", name, *label,
           "--network", lab.config.deploy.network, "--endpoint-mode", "dnsrr",
           "--config", f"source={name}-html,target=/srv/index.html,mode=0444",
           "--config", f"source={name}-caddyfile,target=/etc/caddy/Caddyfile,mode=0444",
           "--mount", "type=tmpfs,target=/data", "--mount", "type=tmpfs,target=/config",
           "--env", "HOME=/data", "--env", "XDG_DATA_HOME=/data", "--env", "XDG_CONFIG_HOME=/config",
           lab.config.deploy.image, "caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile")
    route = Path(lab.config.deploy.dynamic_dir) / f"{name}.yml"
    write_atomic(route, dump(route_document(RouteSettings.from_config(lab.config), name, f"{name}.{lab.domain}")))
    yield name, html
    route.unlink(missing_ok=True)
    _cleanup()


def test_the_edge_serves_a_swarm_service_over_verified_tls(lab, page_service):
    name, html = page_service
    fqdn = f"{name}.{lab.domain}"
    answer = _until(lambda: (got := fetch(fqdn, lab.https_port, ca=lab.ca_path)).status == 200 and got)
    assert hashlib.sha256(answer.body).hexdigest() == hashlib.sha256(html).hexdigest()
    names = [value for kind, value in answer.certificate["subjectAltName"] if kind == "DNS"]
    assert f"*.{lab.domain}" in names or fqdn in names


def test_the_certificate_has_at_least_14_days_left(lab, page_service):
    name, _ = page_service
    certificate = _until(lambda: fetch(f"{name}.{lab.domain}", lab.https_port, ca=lab.ca_path).certificate)
    not_after = datetime.fromtimestamp(ssl.cert_time_to_seconds(certificate["notAfter"]), UTC)
    assert (not_after - datetime.now(UTC)).days >= 14


def test_http_redirects_permanently_to_https(lab, page_service):
    name, _ = page_service
    fqdn = f"{name}.{lab.domain}"
    answer = fetch(fqdn, lab.http_port, ca=None, path="/index.html?x=1")
    assert answer.status in (301, 308)
    assert answer.headers["location"] == f"https://{fqdn}/index.html?x=1"


def test_a_host_without_a_route_gets_traefiks_404_and_no_trusted_certificate(lab):
    fqdn = f"{PREFIX}absent.{lab.domain}"
    for answer in (fetch(fqdn, lab.https_port, ca=None, insecure=True), fetch(fqdn, lab.http_port, ca=None)):
        assert (answer.status, answer.body.decode()) == (404, NOT_FOUND)
    with pytest.raises(ssl.SSLError):  # Traefik's default certificate: no client trusts it
        fetch(fqdn, lab.https_port, ca=lab.ca_path)


def test_a_host_outside_the_lab_domain_gets_no_certificate(lab):
    with pytest.raises(ssl.SSLError):
        fetch("example.com", lab.https_port, ca=lab.ca_path)


def test_an_ip_allow_list_in_a_route_file_keeps_other_clients_out(lab, page_service):
    """A route of the operator's own (another host for the same service, behind ipAllowList): 403 from an
    address outside the list, the page once the list admits the client, as Traefik's ipAllowList does."""
    name, html = page_service
    fqdn, route = f"{name}-guarded.{lab.domain}", Path(lab.config.deploy.dynamic_dir) / f"{name}-guarded.yml"

    def write(source_range: str) -> None:
        write_atomic(route, yaml.safe_dump({"http": {
            "routers": {f"{name}-guarded": {"rule": f"Host(`{fqdn}`)", "entryPoints": ["websecure"],
                                            "service": f"{name}-guarded", "middlewares": [f"{name}-allow@file"],
                                            "tls": {"certResolver": "letsencrypt"}}},
            "middlewares": {f"{name}-allow": {"ipAllowList": {"sourceRange": [source_range]}}},
            "services": {f"{name}-guarded": {"loadBalancer": {"servers": [{"url": f"http://{name}:20128"}]}}}}}))

    try:
        write("192.0.2.0/24")  # TEST-NET-1: never the client here
        refused = _until(lambda: (got := fetch(fqdn, lab.https_port, ca=lab.ca_path)).status == 403 and got)
        assert refused.body == b"Forbidden"
        write("0.0.0.0/0")
        served = _until(lambda: (got := fetch(fqdn, lab.https_port, ca=lab.ca_path)).status == 200 and got)
        assert served.body == html
    finally:
        route.unlink(missing_ok=True)


def test_a_restarted_edge_gets_the_route_files_configuration_back(lab, page_service):
    """The edge starts from its first configuration (no route); the watcher sees it lost the loaded one and
    loads the last good configuration again."""
    name, html = page_service
    fqdn = f"{name}.{lab.domain}"
    assert _until(lambda: fetch(fqdn, lab.https_port, ca=lab.ca_path).status == 200)
    log = lab.instance.path("traefik.log")
    before = len(log.read_text())
    docker("restart", lab.instance.edge_name)
    served = _until(lambda: (got := fetch(fqdn, lab.https_port, ca=lab.ca_path)).status == 200 and got, seconds=30)
    assert served.body == html
    # the watcher loaded the configuration again: because it saw the edge lost it, or (other tests share the
    # lab) because a file changed while the edge restarted
    after = log.read_text()[before:]
    assert "the edge lost its configuration" in after or "loaded " in after, after
