"""The Traefik stand-in's reading and translation, as pure functions, against the examples of Traefik v3's
documentation (doc.traefik.io/traefik/v3.x: routers, services, middlewares/http/*): every supported key, and
a refusal that names each key outside the subset."""

from __future__ import annotations

import ipaddress
import re
import textwrap

import bcrypt
import pytest

from graphsite_lab.traefik.files import Dynamic, load_directory, merge
from graphsite_lab.traefik.subset import refusals, rule_hosts
from graphsite_lab.traefik.translate import (
    DEFAULT_CERT_NAME,
    NOT_FOUND,
    TASK_HEADER,
    EdgeSettings,
    basic_auth,
    caddy_config,
    headers,
    ip_allow_list,
    redirect_scheme,
    service_handler,
    subnet_pattern,
)

HASH = bcrypt.hashpw(b"secret", bcrypt.gensalt(rounds=4)).decode()


def _write(directory, name, text):
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _site(**router):
    """A router `site` on websecure with its service, as graphsite writes one."""
    return Dynamic(routers={"site": {"rule": "Host(`a.example.com`)", "entryPoints": ["websecure"],
                                     "service": "site", "tls": {"certResolver": "letsencrypt"}, **router}},
                   services={"site": {"loadBalancer": {"servers": [{"url": "http://site:20128"}]}}})


def _server(translation, name):
    return translation.config["apps"]["http"]["servers"][name]


# --- routers -----------------------------------------------------------------------------------------------

def test_rule_host_alternatives_from_the_docs():
    assert rule_hosts("Host(`example.com`) || Host(`example.org`)") == ["example.com", "example.org"]
    assert rule_hosts("Host(`Example.COM`)") == ["example.com"]  # Host matches case-insensitively
    with pytest.raises(ValueError, match="cannot parse"):
        rule_hosts("Host(example.com)")


def test_a_matcher_outside_the_subset_is_refused_by_name():
    found = refusals({"http": {"routers": {"r": {"rule": "Host(`a.com`) && PathPrefix(`/api`)", "service": "s"}}}})
    assert found == [("http.routers.r.rule", "matcher PathPrefix is outside the lab's subset "
                                             "(only Host(`…`) joined by ||)")]


def test_a_router_routes_its_hosts_to_its_service_and_unmatched_hosts_get_traefiks_404():
    translation = caddy_config(_site())
    routes = _server(translation, "websecure")["routes"]
    assert routes[0]["match"] == [{"host": ["a.example.com"]}]
    proxy = routes[0]["handle"][0]["routes"][-1]["handle"][0]
    assert proxy["handler"] == "reverse_proxy" and proxy["upstreams"] == [{"dial": "site:20128"}]
    assert routes[-1]["handle"][0]["status_code"] == 404 and routes[-1]["handle"][0]["body"] == NOT_FOUND
    assert _server(translation, "web")["routes"] == [routes[-1]]  # websecure only: nothing on web
    assert translation.served == ("site: websecure a.example.com",) and not translation.router_errors


def test_routers_are_tried_longest_rule_first():
    dynamic = _site()
    dynamic.routers["long"] = {**dynamic.routers["site"], "rule": "Host(`a.example.com`) || Host(`b.example.com`)"}
    hosts = [r["match"][0]["host"] for r in _server(caddy_config(dynamic), "websecure")["routes"][:-1]]
    assert hosts == [["a.example.com", "b.example.com"], ["a.example.com"]]


def test_a_router_without_entry_points_serves_every_entry_point_it_can():
    dynamic = Dynamic(routers={"r": {"rule": "Host(`a.com`)", "service": "s"}},
                      services={"s": {"loadBalancer": {"servers": [{"url": "http://s"}]}}})
    translation = caddy_config(dynamic)
    assert len(_server(translation, "web")["routes"]) == 2  # no tls: the plain entry point only
    assert len(_server(translation, "websecure")["routes"]) == 1
    assert _server(translation, "web")["routes"][0]["handle"][0]["routes"][-1]["handle"][0]["upstreams"] == [
        {"dial": "s:80"}]


@pytest.mark.parametrize("change, error", [
    ({"service": "nope"}, "router site: service nope does not exist"),
    ({"service": "site@docker"}, "router site: service site@docker: provider docker does not exist in the lab"),
    ({"middlewares": ["redirect-to-https@file"]}, "router site: middleware redirect-to-https@file does not exist"),
    ({"entryPoints": ["websecur"]}, "router site: entryPoint websecur does not exist"),
    ({"rule": "Host(a.example.com)"}, "router site: rule: cannot parse"),
])
def test_a_router_traefik_would_not_build_is_left_out_and_reported(change, error):
    translation = caddy_config(_site(**change))
    assert translation.router_errors[0].startswith(error)
    assert len(_server(translation, "websecure")["routes"]) == 1  # only the 404


def test_a_router_on_websecure_without_tls_is_not_served_over_tls():
    dynamic = _site()
    del dynamic.routers["site"]["tls"]
    translation = caddy_config(dynamic)
    assert "not served on websecure" in translation.router_errors[0]
    assert len(_server(translation, "websecure")["routes"]) == 1


def test_cert_resolver_gets_a_lab_ca_certificate_for_the_rules_hosts():
    tls = caddy_config(_site()).config["apps"]["tls"]
    assert tls["automation"]["policies"][0] == {"subjects": ["a.example.com"], "issuers": [
        {"module": "internal", "ca": "local", "lifetime": "2160h"}]}
    assert tls["certificates"]["automate"] == ["a.example.com", DEFAULT_CERT_NAME]


def test_tls_domains_main_and_sans_from_the_docs_replace_the_hosts():
    translation = caddy_config(_site(tls={"certResolver": "letsencrypt",
                                          "domains": [{"main": "snitest.com", "sans": ["*.snitest.com"]}]}))
    assert translation.config["apps"]["tls"]["automation"]["policies"][0]["subjects"] == ["snitest.com",
                                                                                          "*.snitest.com"]


def test_an_unknown_cert_resolver_leaves_the_default_certificate():
    translation = caddy_config(_site(tls={"certResolver": "bar"}))
    assert translation.config["apps"]["tls"]["certificates"]["automate"] == [DEFAULT_CERT_NAME]
    assert "certResolver bar does not exist" in translation.router_errors[0]
    websecure = _server(translation, "websecure")
    assert websecure["tls_connection_policies"] == [{"fallback_sni": DEFAULT_CERT_NAME}]


# --- middlewares -------------------------------------------------------------------------------------------

def test_redirect_scheme_from_the_docs():
    routes = redirect_scheme({"scheme": "https", "permanent": True}, "http")
    assert routes[0]["match"] == [{"method": ["GET"]}]
    assert routes[0]["handle"][0]["status_code"] == 301 and routes[1]["handle"][0]["status_code"] == 308
    assert routes[0]["handle"][0]["headers"]["Location"] == ["https://{http.request.host}{http.request.uri}"]
    assert redirect_scheme({"scheme": "https", "port": "443"}, "http")[0]["handle"][0]["status_code"] == 302
    assert redirect_scheme({"scheme": "https", "port": "8443"}, "http")[0]["handle"][0]["headers"]["Location"] == [
        "https://{http.request.host}:8443{http.request.uri}"]
    assert redirect_scheme({"scheme": "https"}, "https") == []  # already there: passes through


def test_basic_auth_users_from_the_docs_in_bcrypt():
    route = basic_auth({"users": [f"test:{HASH}"], "removeHeader": True})[0]
    provider = route["handle"][0]["providers"]["http_basic"]
    assert provider["accounts"] == [{"username": "test", "password": HASH}] and provider["realm"] == "traefik"
    assert route["handle"][1] == {"handler": "headers", "request": {"delete": ["Authorization"]}}


def test_basic_auth_refuses_the_docs_apr1_hashes_naming_the_line():
    data = {"http": {"middlewares": {"test-auth": {"basicAuth": {"users": [
        "test:$apr1$H6uskkkW$IgXLP6ewTrSuBkTrqE8wj/", f"ok:{HASH}"]}}}}}
    assert refusals(data) == [("http.middlewares.test-auth.basicAuth.users[0]",
                               "only bcrypt hashes ($2y$, $2a$, $2b$) are in the lab's subset")]


def test_headers_from_the_docs_set_and_remove():
    spec = {"customRequestHeaders": {"X-Script-Name": "test", "X-Custom-Request-Header": ""},
            "customResponseHeaders": {"X-Custom-Response-Header": "value", "X-Powered-By": ""},
            "frameDeny": True, "contentTypeNosniff": True, "stsSeconds": 31536000, "stsIncludeSubdomains": True}
    handler = headers(spec, "https")[0]["handle"][0]
    assert handler["request"] == {"set": {"X-Script-Name": ["test"]}, "delete": ["X-Custom-Request-Header"]}
    assert handler["response"]["set"] == {
        "X-Content-Type-Options": ["nosniff"], "X-Frame-Options": ["DENY"],
        "Strict-Transport-Security": ["max-age=31536000; includeSubDomains"],
        "X-Custom-Response-Header": ["value"]}
    assert handler["response"]["delete"] == ["X-Powered-By"] and handler["response"]["deferred"] is True
    assert "Strict-Transport-Security" not in headers(spec, "http")[0]["handle"][0]["response"]["set"]


def test_ip_allow_list_from_the_docs():
    route = ip_allow_list({"sourceRange": ["127.0.0.1/32", "192.168.1.7"]})[0]
    assert route["match"] == [{"not": [{"remote_ip": {"ranges": ["127.0.0.1/32", "192.168.1.7"]}}]}]
    assert route["handle"][0]["status_code"] == 403 and route["handle"][0]["body"] == "Forbidden"


def test_middlewares_run_in_the_routers_order_before_the_service():
    dynamic = _site(middlewares=["auth@file", "security"])
    dynamic.middlewares.update(auth={"basicAuth": {"users": [f"u:{HASH}"]}},
                               security={"headers": {"customResponseHeaders": {"X-A": "1"}}})
    chain = _server(caddy_config(dynamic), "websecure")["routes"][0]["handle"][0]["routes"]
    assert [route["handle"][0]["handler"] for route in chain] == ["authentication", "headers", "reverse_proxy"]


# --- the lab-only per-task route (NOT Traefik behaviour: verify's way to every task) -------------------------

@pytest.mark.parametrize("subnet", ["10.0.1.0/24", "10.11.0.0/16", "10.0.16.0/20", "172.18.0.128/25"])
def test_the_subnet_pattern_matches_exactly_the_subnet(subnet):
    network = ipaddress.IPv4Network(subnet)
    matches = re.compile(subnet_pattern(subnet)).fullmatch  # Go's $ is the text's end; Python's fullmatch is
    base = int(network.network_address)
    around = [base + offset for offset in range(-300, network.num_addresses + 300, 7)]
    for value in [*around, base, base + network.num_addresses - 1, base - 1, base + network.num_addresses]:
        address = str(ipaddress.IPv4Address(value))
        assert bool(matches(address)) is (ipaddress.IPv4Address(value) in network), address
    inside = str(network.network_address + 1)
    for form in [inside + ":80", inside + ",192.0.2.1", "0" + inside, inside + "\n", " " + inside, "192.0.2.1"]:
        assert not matches(form), form
    assert not re.compile(subnet_pattern("")).fullmatch("")  # no subnet: nothing matches


def test_the_lab_only_task_route_follows_the_middlewares_and_reaches_only_the_overlay():
    dynamic = _site(middlewares=["auth"])
    dynamic.middlewares.update(auth={"basicAuth": {"users": [f"u:{HASH}"]}})
    dynamic.services["site"]["loadBalancer"]["passHostHeader"] = False
    chain = _server(caddy_config(dynamic, EdgeSettings(task_subnet="10.0.1.0/24")), "websecure")["routes"][0]
    routes = chain["handle"][0]["routes"]
    assert [route["handle"][0]["handler"] for route in routes] == ["authentication", "reverse_proxy", "reverse_proxy"]
    task = routes[1]
    pattern = subnet_pattern("10.0.1.0/24")
    assert task["match"] == [{"header_regexp": {TASK_HEADER: {"name": "task", "pattern": pattern}}}]
    proxy = task["handle"][0]
    assert proxy["upstreams"] == [{"dial": f"{{http.request.header.{TASK_HEADER}}}:20128"}]  # the service's port
    assert proxy["headers"] == routes[2]["handle"][0]["headers"] and "load_balancing" not in proxy
    assert routes[2] == {"handle": [service_handler(dynamic.services["site"])]}  # the rest: as Traefik would
    plain = _server(caddy_config(dynamic), "websecure")["routes"][0]["handle"][0]["routes"]
    assert len(plain) == 2  # no subnet known: no such route (production has none either)
    dynamic.services["site"]["loadBalancer"]["servers"] = []
    empty = _server(caddy_config(dynamic, EdgeSettings(task_subnet="10.0.1.0/24")), "websecure")["routes"][0]
    assert [r["handle"][0]["handler"] for r in empty["handle"][0]["routes"]] == ["authentication", "static_response"]


# --- services ----------------------------------------------------------------------------------------------

def test_load_balancer_servers_and_pass_host_header_from_the_docs():
    handler = service_handler({"loadBalancer": {"servers": [{"url": "http://10.0.0.1:8080/"},
                                                            {"url": "http://10.0.0.2:8080/"}],
                                                "passHostHeader": False}})
    assert handler["upstreams"] == [{"dial": "10.0.0.1:8080"}, {"dial": "10.0.0.2:8080"}]
    assert handler["load_balancing"]["selection_policy"] == {"policy": "round_robin"}
    assert handler["headers"]["request"]["set"]["Host"] == ["{http.reverse_proxy.upstream.hostport}"]
    assert "headers" not in service_handler({"loadBalancer": {"servers": [{"url": "http://a"}]}})


def test_a_server_url_outside_the_subset_is_refused():
    data = {"http": {"services": {"s": {"loadBalancer": {"servers": [{"url": "https://a:1/api"}]}}}}}
    assert refusals(data)[0][0] == "http.services.s.loadBalancer.servers[0].url"


# --- the directory -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, key", [
    ({"tcp": {"routers": {}}}, "tcp"),
    ({"http": {"routers": {"r": {"rule": "Host(`a`)", "service": "s", "priority": 10}}}}, "http.routers.r.priority"),
    ({"http": {"middlewares": {"m": {"stripPrefix": {"prefixes": ["/a"]}}}}}, "http.middlewares.m.stripPrefix"),
    ({"http": {"middlewares": {"m": {"ipAllowList": {"sourceRange": ["1.2.3.4"], "ipStrategy": {"depth": 1}}}}}},
     "http.middlewares.m.ipAllowList.ipStrategy"),
    ({"http": {"services": {"s": {"weighted": {"services": []}}}}}, "http.services.s.weighted"),
    ({"http": {"routers": {"r": {"rule": "Host(`a`)", "service": "s", "tls": {"options": "x"}}}}},
     "http.routers.r.tls.options"),
])
def test_every_key_outside_the_subset_is_refused_by_its_path(data, key):
    assert [found for found, _ in refusals(data)] == [key]
    assert f"`{key.rsplit('.', 1)[-1]}` is outside the lab's Traefik subset" in refusals(data)[0][1]


def test_the_directory_reads_yaml_yml_toml_and_subdirectories_and_ignores_other_files(tmp_path):
    _write(tmp_path, "a.yml", """\
        http:
          routers:
            r: {rule: "Host(`a.com`)", service: s}
        """)
    _write(tmp_path, "b.TOML", """\
        [http.services.s.loadBalancer]
        servers = [{url = "http://s:80"}]
        """)
    _write(tmp_path, "sub/c.yaml", "http:\n  middlewares:\n    m: {headers: {customResponseHeaders: {X-A: b}}}\n")
    _write(tmp_path, "notes.txt", "not: [read")
    _write(tmp_path, ".x.yml.tmp", "not: [read")
    dynamic, problems = load_directory(tmp_path)
    assert problems == [] and dynamic is not None
    assert dynamic.files == ("a.yml", "b.TOML", "sub/c.yaml")
    assert set(dynamic.routers) == {"r"} and set(dynamic.services) == {"s"} and set(dynamic.middlewares) == {"m"}


def test_a_name_defined_twice_keeps_its_first_definition_with_a_warning():
    merged = merge([("a.yml", {"http": {"services": {"s": {"loadBalancer": {"servers": [{"url": "http://a"}]}}}}}),
                    ("b.yml", {"http": {"services": {"s": {"loadBalancer": {"servers": [{"url": "http://b"}]}}}}})])
    assert merged.services["s"]["loadBalancer"]["servers"] == [{"url": "http://a"}]
    assert merged.warnings == ("b.yml: http.services.s is already defined in a.yml: skipped, as Traefik does",)


@pytest.mark.parametrize("text, key, message", [
    ("http:\n  routers: [\n", "", "cannot be parsed: line 3, column 1"),
    ("http:\n  routers:\n    r: {rule: 3, service: s}\n", "http.routers.r.rule", "breaks Traefik's v3 schema"),
    ("http:\n  middlewares:\n    m: {headers: {stsSeconds: 1, isDevelopment: true}}\n",
     "http.middlewares.m.headers.isDevelopment", "outside the lab's Traefik subset"),
])
def test_one_bad_file_rejects_the_whole_directory_naming_the_file_and_key(tmp_path, text, key, message):
    _write(tmp_path, "good.yml", "http:\n  services:\n    s: {loadBalancer: {servers: [{url: 'http://s'}]}}\n")
    _write(tmp_path, "bad.yml", text)
    dynamic, problems = load_directory(tmp_path)
    assert dynamic is None
    assert [(p.file, p.key) for p in problems] == [("bad.yml", key)]
    assert message in problems[0].message


def test_a_directory_the_stand_in_cannot_list_rejects_the_whole_directory_naming_it():
    """As Traefik's file provider does (it returns the directory's read error): never a directory read as empty.
    Proven as nobody, since the lab's watcher runs as root."""
    import os
    import tempfile
    from pathlib import Path

    from graphsite_lab.traefik.watcher import snapshot
    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        directory = Path(base)
        _write(directory, "good.yml", "http:\n  services:\n    s: {loadBalancer: {servers: [{url: 'http://s'}]}}\n")
        (directory / "hidden").mkdir(mode=0o700)  # root's: nobody may not list it
        with as_nobody():
            dynamic, problems = load_directory(directory)
            seen = snapshot(directory)
    assert dynamic is None
    assert [(p.file, p.key, p.message) for p in problems] == [
        ("hidden", "", f"cannot list {directory / 'hidden'}: Permission denied")]
    assert seen == ((f"cannot list {directory / 'hidden'}: Permission denied", 0, 0, 0),)


def test_the_stand_in_never_descends_through_a_link_to_a_directory(tmp_path):
    """As Traefik's os.ReadDir gives a link its own type, not its target's: a broken file reached only through a
    link to a directory is not read, and rejects nothing. Before, the stand-in followed the link and rejected."""
    from graphsite_lab.traefik.watcher import snapshot

    directory = tmp_path / "dynamic"
    _write(directory, "good.yml", "http:\n  services:\n    s: {loadBalancer: {servers: [{url: 'http://s'}]}}\n")
    _write(tmp_path / "elsewhere", "broken.yml", "http: [\n")
    (directory / "linked").symlink_to(tmp_path / "elsewhere")
    dynamic, problems = load_directory(directory)
    assert problems == [] and dynamic is not None and dynamic.files == ("good.yml",)
    assert [entry[0] for entry in snapshot(directory)] == [str(directory / "good.yml")]


@pytest.mark.timeout(20)  # a FIFO read as a file waits for a writer: a hang is this test's failure
def test_the_stand_in_rejects_a_link_to_nothing_or_a_fifo_named_as_a_file_it_reads(tmp_path):
    """As Traefik: it reads every entry with a provider extension that is not a directory, and a read that fails
    (or waits) applies nothing. Before, the stand-in skipped both and applied the rest. The watcher sees them."""
    import os

    from graphsite_lab.traefik.watcher import snapshot

    directory = tmp_path / "dynamic"
    _write(directory, "good.yml", "http:\n  services:\n    s: {loadBalancer: {servers: [{url: 'http://s'}]}}\n")
    (directory / "dangling.yml").symlink_to(tmp_path / "nowhere.yml")
    os.mkfifo(directory / "fifo.yml")
    dynamic, problems = load_directory(directory)
    assert dynamic is None
    assert [(p.file, p.message.split(":")[0]) for p in problems] == [("dangling.yml", "cannot read"),
                                                                      ("fifo.yml", "cannot read")]
    assert [entry[0] for entry in snapshot(directory)] == [str(directory / name) for name in
                                                          ("dangling.yml", "fifo.yml", "good.yml")]


def test_caddy_itself_accepts_the_translation_of_every_supported_key(tmp_path):
    """`caddy validate` provisions the whole configuration: what the unit tests above check as data is also
    what the real Caddy accepts (handlers, matchers, issuers, connection policies)."""
    import json
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    caddy = shutil.which("caddy") or str(Path(sys.executable).parent / "caddy")
    dynamic = Dynamic(
        routers={"site": {"rule": "Host(`a.example.com`) || Host(`b.example.com`)", "entryPoints": ["websecure"],
                          "service": "site", "middlewares": ["auth", "sec@file", "allow", "redirect"],
                          "tls": {"certResolver": "letsencrypt", "domains": [{"main": "example.com",
                                                                               "sans": ["*.example.com"]}]}},
                 "site-web": {"rule": "Host(`a.example.com`)", "entryPoints": ["web"], "service": "site",
                              "middlewares": ["redirect@file"]}},
        middlewares={"auth": {"basicAuth": {"users": [f"u:{HASH}"], "realm": "lab", "removeHeader": True}},
                     "sec": {"headers": {"customRequestHeaders": {"X-A": "1", "X-B": ""},
                                         "customResponseHeaders": {"X-C": "2", "Server": ""}, "frameDeny": True,
                                         "contentTypeNosniff": True, "referrerPolicy": "no-referrer",
                                         "contentSecurityPolicy": "default-src 'none'", "permissionsPolicy": "x=()",
                                         "stsSeconds": 60, "stsIncludeSubdomains": True, "stsPreload": True}},
                     "allow": {"ipAllowList": {"sourceRange": ["127.0.0.1/32", "10.0.0.0/8"]}},
                     "redirect": {"redirectScheme": {"scheme": "https", "permanent": True, "port": "8443"}}},
        services={"site": {"loadBalancer": {"servers": [{"url": "http://site:20128"}, {"url": "http://other"}],
                                            "passHostHeader": False}}})
    translation = caddy_config(dynamic, EdgeSettings(task_subnet="10.0.16.0/20"))  # with the lab-only task route
    assert not translation.router_errors
    path = tmp_path / "caddy.json"
    config = translation.config
    config["admin"] = {"disabled": True}
    path.write_text(json.dumps(config))
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    done = subprocess.run([caddy, "validate", "--config", str(path)], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_real_caddy_sends_a_task_header_inside_the_subnet_to_that_address_only(tmp_path):
    """The lab-only task route run by the real Caddy: two page servers on one port, 127.0.0.1 (the service's URL)
    and 127.0.0.2 (a "task"); the header naming 127.0.0.2 reaches it, one outside the subnet reaches the service."""
    import http.server
    import json
    import shutil
    import socket
    import subprocess
    import sys
    import threading
    import time
    from pathlib import Path

    import httpx

    def answering(host: str, port: int, body: bytes) -> http.server.ThreadingHTTPServer:
        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 -- http.server's name
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer((host, port), Page)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def free_port() -> int:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]

    page_port, http_port, https_port = free_port(), free_port(), free_port()
    servers = [answering("127.0.0.1", page_port, b"service"), answering("127.0.0.2", page_port, b"task")]
    dynamic = Dynamic(routers={"site": {"rule": "Host(`a.example.com`)", "entryPoints": ["web"], "service": "site"}},
                      services={"site": {"loadBalancer": {"servers": [{"url": f"http://127.0.0.1:{page_port}"}]}}})
    config = caddy_config(dynamic, EdgeSettings(http_port=http_port, https_port=https_port,
                                                task_subnet="127.0.0.0/30")).config
    config["admin"] = {"disabled": True}
    path = tmp_path / "caddy.json"
    path.write_text(json.dumps(config))
    caddy = shutil.which("caddy") or str(Path(sys.executable).parent / "caddy")
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    process = subprocess.Popen([caddy, "run", "--config", str(path)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        url, host = f"http://127.0.0.1:{http_port}/", {"Host": "a.example.com"}
        for _ in range(100):  # bounded: Caddy listens within a few seconds
            try:
                httpx.get(url, headers=host, timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        answers = {value: httpx.get(url, headers={**host, **({TASK_HEADER: value} if value else {})}, timeout=5)
                   for value in ("127.0.0.2", "127.0.0.9", "127.0.0.2:1", "")}
        assert {value: a.text for value, a in answers.items()} == {
            "127.0.0.2": "task", "127.0.0.9": "service", "127.0.0.2:1": "service", "": "service"}
        other = httpx.get(url, headers={"Host": "b.example.com", TASK_HEADER: "127.0.0.2"}, timeout=5)
        assert other.status_code == 404 and other.text == NOT_FOUND  # only inside a router that matched
    finally:
        process.terminate()
        process.wait(timeout=10)
        for server in servers:
            server.shutdown()
