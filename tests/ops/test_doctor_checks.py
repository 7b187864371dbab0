"""The doctor's judgement as pure functions: facts made by hand, every way a precondition can break, and the
facts gatherers that read only files (route directories, Traefik's static configuration, the kernel's routes)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from graphsite.config import Config
from graphsite.publisher.cloudflare import Zone
from graphsite.publisher.swarm import DaemonFacts, ImageFacts, NetworkFacts
from graphsite.usecases.doctor import checks as judge
from graphsite.usecases.doctor.checks import FAIL, PASS, SKIP, WARN, evaluate
from graphsite.usecases.doctor.host import dynamic_dir_facts, host_addresses, ipvs_facts, static_facts
from graphsite.usecases.doctor.model import DynamicDir, Facts, Ipvs, RouteFile, Token, Unknown
from tests.publisher.nobody import as_nobody

MANAGER = DaemonFacts(version="27.3.1", api_version="1.47", swarm_state="active", manager=True, node_id="n" * 25)
NETWORK = NetworkFacts(name="dokploy-network", found=True, driver="overlay", scope="swarm", attachable=True)
MIDDLEWARES = "http:\n  middlewares:\n    redirect-to-https:\n      redirectScheme: {scheme: https, permanent: true}\n"


def by_name(checks) -> dict:
    return {c.name: c for c in checks}


def good(tmp_path: Path, **changes) -> Facts:
    directory = tmp_path / "dynamic"
    directory.mkdir(exist_ok=True)
    (directory / "middlewares.yml").write_text(MIDDLEWARES)
    values: dict[str, Any] = dict(
        daemon=MANAGER, network=NETWORK, image=ImageFacts("caddy:2-alpine", present=True),
        ipvs=Ipvs(loaded=True, module=True), dynamic_dir=dynamic_dir_facts(directory),
        static=Unknown("deploy.traefik_static is empty"), token=Token(source="CLOUDFLARE_API_TOKEN", length=40),
        token_status="active", zone=Zone("z" * 32, "hhdevs.space", "active"), records=3,
        addresses=("10.0.0.5", "129.146.163.180", "127.0.0.1"), ca_bundles=())
    values.update(changes)
    return Facts(**values)


def test_a_healthy_production_stack_passes(tmp_path):
    checks = evaluate(Config(), good(tmp_path))
    assert {c.status for c in checks} == {PASS, SKIP}, [c for c in checks if c.status not in (PASS, SKIP)]
    assert [c.name for c in checks if c.status == SKIP] == ["traefik.static"]


@pytest.mark.parametrize(("change", "name", "words"), [
    ({"daemon": Unknown("Docker: cannot reach the daemon")}, "docker.daemon", "cannot reach"),
    ({"daemon": DaemonFacts("17.05", "1.29", "active", True, "n")}, "docker.daemon", "1.30"),
    ({"daemon": DaemonFacts("27", "1.4\u00b2", "active", True, "n")}, "docker.daemon", "API 1.4\u00b2; Swarm"),
    ({"daemon": DaemonFacts("27", "1.47", "inactive", False, "")}, "docker.swarm", "in no swarm"),
    ({"daemon": DaemonFacts("27", "1.47", "active", False, "worker-node-id")}, "docker.swarm", "worker"),
    ({"network": NetworkFacts("dokploy-network", found=False)}, "docker.network",
     "Docker network dokploy-network does not exist"),
    ({"network": NetworkFacts("dokploy-network", True, "bridge", "local", False)}, "docker.network", "not a Swarm"),
    ({"network": NetworkFacts("dokploy-network", True, "overlay", "swarm", False)}, "docker.network",
     "dokploy-network is not attachable"),
    ({"image": ImageFacts("caddy:2-alpine", False, False, "manifest unknown")}, "docker.image", "not pullable"),
    ({"ipvs": Ipvs(loaded=False, module=False)}, "docker.ipvs", "no IPVS"),
    ({"token": Token(source="")}, "cloudflare.token", "no Cloudflare API token"),
    ({"token": Unknown("dns.token_file: cannot read /x: No such file")}, "cloudflare.token", "/x"),
    ({"token": Token(source="CLOUDFLARE_API_TOKEN", length=41, charset_ok=False)}, "cloudflare.token",
     "characters no Cloudflare token has"),
    ({"token_status": Unknown("Cloudflare: verify the API token: HTTP 401: 1000 Invalid API Token")},
     "cloudflare.verify", "Invalid API Token"),
    ({"token_status": "disabled"}, "cloudflare.verify", "disabled"),
    ({"zone": None, "zone_looked_up": True}, "cloudflare.zone", "this token sees no zone named hhdevs.space"),
    ({"zone": Zone("z" * 32, "other.example", "active")}, "cloudflare.zone", "is the zone other.example, not"),
    ({"records": Unknown("HTTP 403: 10000 Authentication error")}, "cloudflare.records", "403"),
    ({"addresses": ("10.0.0.5",), "ca_bundles": ()}, "dns.record_content", "cannot be told"),
])
def test_each_broken_precondition_is_named(tmp_path, change, name, words):
    checks = by_name(evaluate(Config(), good(tmp_path, **change)))
    check = checks[name]
    assert check.status in (FAIL, WARN), check
    assert words in check.evidence, check
    assert check.fix, check
    assert all(c.status in (PASS, SKIP) for n, c in checks.items() if n != name), checks


def test_a_daemon_that_does_not_answer_skips_what_depends_on_it(tmp_path):
    checks = by_name(evaluate(Config(), good(tmp_path, daemon=Unknown("no daemon"))))
    assert checks["docker.daemon"].status == FAIL
    assert checks["docker.swarm"].status == checks["docker.network"].status == SKIP
    assert "docker.image" not in checks


def test_ipvs_is_not_needed_with_dnsrr_and_unknown_is_a_warning(tmp_path):
    none = Ipvs(loaded=False, module=False)
    assert by_name(evaluate(Config().replace("deploy", endpoint_mode="dnsrr"), good(tmp_path, ipvs=none))
                   )["docker.ipvs"].status == PASS
    assert by_name(evaluate(Config(), good(tmp_path, ipvs=Ipvs(False, None))))["docker.ipvs"].status == WARN
    assert by_name(evaluate(Config(), good(tmp_path, ipvs=Ipvs(False, True))))["docker.ipvs"].status == PASS


@pytest.mark.parametrize(("content", "status"), [
    ("129.146.163.180", PASS), ("10.0.0.5", FAIL), ("2001:db8::1", FAIL), ("not-an-ip", FAIL), ("8.8.8.8", WARN),
])
def test_record_content(tmp_path, content, status):
    config = Config().replace("dns", record_content=content)
    assert by_name(evaluate(config, good(tmp_path)))["dns.record_content"].status == status


def test_a_loopback_record_passes_only_as_a_rehearsal(tmp_path):
    config = Config().replace("dns", record_content="127.0.0.1")
    assert by_name(evaluate(config, good(tmp_path)))["dns.record_content"].status == FAIL
    rehearsal = config.replace("verify", resolve_https="127.0.0.1:8443")
    assert by_name(evaluate(rehearsal, good(tmp_path)))["dns.record_content"].status == PASS


def test_an_unparsable_route_file_names_the_file_and_line(tmp_path):
    directory = tmp_path / "dynamic"
    directory.mkdir()
    (directory / "middlewares.yml").write_text(MIDDLEWARES)
    (directory / "nested").mkdir()
    (directory / "nested" / "broken.yaml").write_text("http:\n  routers:\n    a: [unclosed\n")
    (directory / "schema.toml").write_text('[http.routers.a]\nrule = 3\n')
    (directory / "notes.txt").write_text("{{ not read by Traefik")
    facts = good(tmp_path, dynamic_dir=dynamic_dir_facts(directory))
    check = by_name(evaluate(Config(), facts))["traefik.files"]
    assert check.status == FAIL
    assert f"{directory / 'nested' / 'broken.yaml'}: line " in check.evidence
    assert f"{directory / 'schema.toml'}: http.routers.a" in check.evidence
    assert "notes.txt" not in check.evidence


def test_a_directory_this_user_cannot_list_fails_the_files_check_and_skips_the_middlewares():
    """Before, a directory under deploy.dynamic_dir this user could not list read as empty: traefik.files passed
    (and so deploy's preflight) while Traefik, as root, read a file there it cannot load. Proven as nobody."""
    import os
    import tempfile

    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        good(Path(base))
        directory = Path(base) / "dynamic"
        (directory / "hidden").mkdir(mode=0o700)  # root's: nobody may not list it
        (directory / "hidden" / "broken.yml").write_text("http: [\n")
        with as_nobody():
            unlisted = dynamic_dir_facts(directory)
        checks = by_name(evaluate(Config(), good(Path(base), dynamic_dir=unlisted)))
        as_root = by_name(evaluate(Config(), good(Path(base), dynamic_dir=dynamic_dir_facts(directory))))
    assert unlisted.files == Unknown(f"cannot list {directory / 'hidden'}: Permission denied")
    assert checks["traefik.files"].status == FAIL
    assert checks["traefik.files"].evidence.startswith(f"cannot list {directory / 'hidden'}: Permission denied: ")
    assert (checks["traefik.middleware"].status, checks["traefik.middlewares"].status) == (SKIP, SKIP)
    # as root, as Traefik lists it: the broken file in hidden/ is read, and named
    assert as_root["traefik.files"].status == FAIL, as_root["traefik.files"]
    assert f"{directory / 'hidden' / 'broken.yml'}: line 2, column 1" in as_root["traefik.files"].evidence


def test_a_dynamic_dir_under_a_parent_this_user_may_not_search_is_unknown_never_absent():
    """What dynamic_dir_facts' docstring says: a parent this user may not search leaves even whether the
    directory exists unknown. Proven as nobody."""
    import os
    import tempfile

    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:
        os.chmod(base, 0o700)  # root's: nobody may not search it
        directory = Path(base) / "dynamic"
        directory.mkdir()
        with as_nobody():
            facts = dynamic_dir_facts(directory)
    assert facts == Unknown(f"deploy.dynamic_dir: cannot look into {directory}: Permission denied")


def test_a_file_this_user_may_not_read_fails_the_files_check_as_unknown_not_broken():
    """Before, a root-only file (0600) under deploy.dynamic_dir was reported as one Traefik cannot load, though
    Traefik, as root, reads it: what it holds is unknown. Proven as nobody."""
    import os
    import tempfile

    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        directory = Path(base) / "dynamic"
        good(Path(base))
        (directory / "root.yml").write_text("http: {}\n")
        (directory / "root.yml").chmod(0o600)
        with as_nobody():
            unread = dynamic_dir_facts(directory)
        checks = by_name(evaluate(Config(), good(Path(base), dynamic_dir=unread)))
    assert unread.files == Unknown(f"cannot read {directory / 'root.yml'}: Permission denied")
    assert checks["traefik.files"].status == FAIL and "Traefik cannot load" not in checks["traefik.files"].evidence
    assert checks["traefik.files"].evidence.startswith(f"cannot read {directory / 'root.yml'}: Permission denied: ")
    assert (checks["traefik.middleware"].status, checks["traefik.middlewares"].status) == (SKIP, SKIP)


def test_a_link_to_nothing_named_as_a_route_file_fails_the_files_check(tmp_path):
    """Before, it was skipped (not a regular file) and traefik.files passed, though Traefik reads it and fails."""
    facts = good(tmp_path)
    (tmp_path / "dynamic" / "x.yml").symlink_to(tmp_path / "nowhere.yml")
    check = by_name(evaluate(Config(), good(tmp_path, dynamic_dir=dynamic_dir_facts(tmp_path / "dynamic"))))
    assert by_name(evaluate(Config(), facts))["traefik.files"].status == PASS
    assert check["traefik.files"].status == FAIL and f"{tmp_path / 'dynamic' / 'x.yml'}: cannot read: " in \
        check["traefik.files"].evidence


def test_a_missing_middleware_and_directory(tmp_path):
    empty = DynamicDir(tmp_path, exists=True, is_dir=True, writable=True, files=(RouteFile(tmp_path / "a.yml"),))
    check = by_name(evaluate(Config(), good(tmp_path, dynamic_dir=empty)))["traefik.middleware"]
    assert check.status == FAIL and "redirect-to-https@file" in check.evidence and "redirectScheme" in check.fix
    missing = dynamic_dir_facts(tmp_path / "nowhere")
    checks = by_name(evaluate(Config(), good(tmp_path, dynamic_dir=missing)))
    assert checks["traefik.dynamic_dir"].status == FAIL and "does not exist" in checks["traefik.dynamic_dir"].evidence
    assert checks["traefik.files"].status == SKIP
    unwritable = DynamicDir(tmp_path, exists=True, is_dir=True, writable=False)
    assert by_name(evaluate(Config(), good(tmp_path, dynamic_dir=unwritable)))["traefik.dynamic_dir"].status == FAIL
    docker = Config().replace("deploy", redirect_middleware="redirect@docker")
    assert by_name(evaluate(docker, good(tmp_path, dynamic_dir=empty)))["traefik.middleware"].status == SKIP


STATIC = """
entryPoints:
  web: {address: ":80"}
  websecure: {address: ":443"}
providers:
  file: {directory: /etc/dokploy/traefik/dynamic, watch: true}
certificatesResolvers:
  letsencrypt:
    acme: {email: a@b.c, storage: /etc/dokploy/traefik/dynamic/acme.json, httpChallenge: {entryPoint: web}}
  cloudflare:
    acme: {email: a@b.c, dnsChallenge: {provider: cloudflare}}
"""


def test_the_static_configuration(tmp_path):
    path = tmp_path / "traefik.yml"
    path.write_text(STATIC)
    static = static_facts(str(path))
    assert not isinstance(static, Unknown)
    assert static.resolvers == {"letsencrypt": "httpChallenge", "cloudflare": "dnsChallenge"}

    def checks(**deploy):
        return by_name(evaluate(Config().replace("deploy", **deploy), good(tmp_path, static=static)))

    assert checks()["traefik.resolver"].status == PASS
    assert checks()["traefik.entrypoints"].status == PASS
    assert "traefik.provider" not in checks()
    wildcard = checks(tls="wildcard")["traefik.resolver"]
    assert wildcard.status == FAIL and "httpChallenge" in wildcard.evidence
    assert checks(tls="wildcard", cert_resolver="cloudflare")["traefik.resolver"].status == PASS
    unknown = checks(cert_resolver="le")["traefik.resolver"]
    assert unknown.status == FAIL and "no resolver le (defined: cloudflare, letsencrypt)" in unknown.evidence
    assert checks(https_entrypoint="https")["traefik.entrypoints"].status == FAIL
    assert checks(dynamic_dir="/srv/dynamic")["traefik.provider"].status == WARN
    path.write_text("entryPoints: [unclosed\n")
    broken = by_name(evaluate(Config(), good(tmp_path, static=static_facts(str(path)))))["traefik.static"]
    assert broken.status == FAIL and f"{path}: line 2, column 1: " in broken.evidence
    path.write_text("entryPoints:\n  web: {address: " + "9" * 5000 + "}\n")
    broken = by_name(evaluate(Config(), good(tmp_path, static=static_facts(str(path)))))["traefik.static"]
    assert broken.status == FAIL and f"{path}: a value cannot be read: Exceeds the limit" in broken.evidence
    assert isinstance(static_facts(str(tmp_path / "missing.yml")), Unknown)


@pytest.mark.parametrize(("text", "problem"), [
    ("certificatesResolvers: le\n", "certificatesResolvers is not a mapping (it is a str)"),
    ("certificatesResolvers: [le]\n", "certificatesResolvers is not a mapping (it is a list)"),
    ("certificatesResolvers:\n  le: x\n", "certificatesResolvers.le is not a mapping (it is a str)"),
    ("certificatesResolvers:\n  le: {acme: [1]}\n", "certificatesResolvers.le.acme is not a mapping (it is a list)"),
    ("providers: file\n", "providers is not a mapping (it is a str)"),
    ("providers: {file: [a]}\n", "providers.file is not a mapping (it is a list)"),
    ("providers: {file: {directory: [a]}}\n", "providers.file.directory is not a string (it is a list)"),
    ("entryPoints: [web]\n", "entryPoints is not a mapping (it is a list)"),
])
def test_a_wrongly_shaped_static_configuration_is_named_never_a_traceback(tmp_path, text, problem):
    path = tmp_path / "traefik.yml"
    path.write_text(STATIC + text)
    check = by_name(evaluate(Config(), good(tmp_path, static=static_facts(str(path)))))["traefik.static"]
    assert (check.status, check.evidence) == (FAIL, f"deploy.traefik_static: {path}: {problem}")


def test_entry_points_named_by_numbers_and_words_are_all_listed(tmp_path):
    path = tmp_path / "traefik.yml"
    path.write_text("entryPoints:\n  80: {}\n  web: {}\n")
    static = static_facts(str(path))
    assert not isinstance(static, Unknown) and static.entrypoints == ("80", "web")


def test_traefik_paths_this_user_cannot_look_at_are_unknown_naming_the_path(tmp_path):
    """As nobody, Path.exists raised PermissionError below a parent it may not search: a traceback in doctor.
    A directory it may search but not list read as an empty one."""
    good(tmp_path)  # the modules the gatherers import, imported while they can be read
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        hidden, unlisted = Path(base) / "hidden", Path(base) / "unlisted"
        (hidden / "dynamic").mkdir(parents=True)
        (hidden / "traefik.yml").write_text(STATIC)
        unlisted.mkdir(mode=0o711)
        (unlisted / "middlewares.yml").write_text(MIDDLEWARES)
        hidden.chmod(0o700)
        with as_nobody():
            static, facts = static_facts(str(hidden / "traefik.yml")), {
                directory: dynamic_dir_facts(directory) for directory in (hidden / "dynamic", unlisted)}
        assert static == Unknown(f"deploy.traefik_static: cannot look at {hidden / 'traefik.yml'}: Permission denied")
        for directory, fact in facts.items():
            checks = by_name(evaluate(Config(), good(tmp_path, dynamic_dir=fact, static=static)))
            why = f"deploy.dynamic_dir: cannot look into {directory}: Permission denied"
            assert (checks["traefik.dynamic_dir"].status, checks["traefik.dynamic_dir"].evidence) == (FAIL, why)
            assert {checks[name].status for name in ("traefik.files", "traefik.middleware", "traefik.static")} == {SKIP}


def test_host_addresses_from_the_kernels_local_routes(tmp_path):
    trie = tmp_path / "fib_trie"
    trie.write_text("Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 10.0.0.5\n        /32 host LOCAL\n"
                    "     |-- 10.0.0.255\n        /32 link BROADCAST\n     |-- 127.0.0.1\n        /32 host LOCAL\n")
    assert host_addresses(trie) == ("10.0.0.5", "127.0.0.1")
    assert isinstance(host_addresses(tmp_path / "none"), Unknown)
    assert "127.0.0.1" in host_addresses()  # this machine's own


def test_ipvs_facts_read_the_module_list(tmp_path):
    import platform

    release = tmp_path / "modules" / platform.release()
    release.mkdir(parents=True)
    (release / "modules.dep").write_text("kernel/net/netfilter/ipvs/ip_vs.ko.xz: kernel/lib/libcrc32c.ko\n")
    assert ipvs_facts(tmp_path / "proc", tmp_path / "modules").module is True
    (release / "modules.dep").write_text("kernel/net/foo.ko:\n")
    assert ipvs_facts(tmp_path / "proc", tmp_path / "modules").module is False
    assert ipvs_facts(tmp_path / "proc", tmp_path / "none").module is None


def test_preflight_error_lists_every_failure_and_fix():
    from graphsite.usecases.doctor import preflight_error

    failing = (judge.CheckResult("docker.network", FAIL, "deploy.network: Docker network x does not exist",
                           "docker network create"),
               judge.CheckResult("docker.swarm", PASS, "manager"))
    error = preflight_error(failing)
    assert error is not None and "docker.network: deploy.network: Docker network x does not exist" in error.message
    assert "fix: docker network create" in error.message and "docker.swarm" not in error.message
    assert preflight_error(failing[1:]) is None


def test_the_directories_deploy_writes(tmp_path):
    from graphsite.usecases.doctor.host import writable_dir

    (tmp_path / "file").write_text("")
    assert writable_dir("deploy.lock_dir", tmp_path / "new" / "locks").problem == ""
    blocked = writable_dir("deploy.lock_dir", tmp_path / "file" / "locks")
    assert blocked.problem == f"{tmp_path / 'file'} is not a directory"
    checks = by_name(evaluate(Config(), good(tmp_path, writable_dirs=(blocked,))))
    lock = checks["deploy.lock_dir"]
    assert lock.status == FAIL
    assert f"deploy.lock_dir: cannot create files in {tmp_path / 'file' / 'locks'}" in lock.evidence


def test_a_zone_id_that_is_not_one(tmp_path):
    config = Config().replace("dns", zone_id="0123")
    check = by_name(evaluate(config, good(tmp_path, zone=None)))["cloudflare.zone"]
    assert check.status == FAIL
    assert check.evidence == "dns.zone_id: no zone 0123 for this token (a zone id is 32 hex digits)"
    config = Config().replace("dns", zone_id="0" * 32)
    check = by_name(evaluate(config, good(tmp_path, zone=None)))["cloudflare.zone"]
    assert check.evidence == f"dns.zone_id: no zone {'0' * 32} for this token"


def test_the_operators_middlewares_are_looked_for_in_every_file_and_refused_or_warned_about(tmp_path):
    """deploy.middlewares: a doctor check (and so deploy's preflight, reading the directory once): each of the
    file provider's defined in some file, subdirectories included; another provider's is not visible here."""
    config = Config().replace("deploy", middlewares=("sec", "auth@file", "x@docker"))
    directory = tmp_path / "dynamic"
    facts = good(tmp_path)
    check = by_name(evaluate(config, facts))["traefik.middlewares"]
    assert check.status == FAIL and "sec@file, auth@file defined in no file of" in check.evidence, check
    assert 'deploy.undefined_middleware = "warn"' in check.fix
    (directory / "shared").mkdir()
    (directory / "shared" / "more.yml").write_text("http:\n  middlewares:\n    sec: {headers: {frameDeny: true}}\n")
    facts = good(tmp_path)
    check = by_name(evaluate(config, facts))["traefik.middlewares"]
    assert check.status == FAIL and "auth@file defined in no file" in check.evidence and "sec@" not in check.evidence
    warned = by_name(evaluate(config.replace("deploy", undefined_middleware="warn"), facts))["traefik.middlewares"]
    assert warned.status == WARN and "auth@file" in warned.evidence, warned
    found = by_name(evaluate(config.replace("deploy", middlewares=("sec@file", "x@docker")), facts))
    assert found["traefik.middlewares"].status == PASS, found["traefik.middlewares"]
    assert "x@docker: another provider's" in found["traefik.middlewares"].evidence


def test_a_setting_with_a_fixed_set_of_values_is_checked_when_the_configuration_loads(tmp_path):
    from graphsite.config import load_config
    from graphsite.errors import ConfigError

    path = tmp_path / "graphsite.toml"
    path.write_text('[deploy]\nundefined_middleware = "ignore"\nendpoint_mode = "ipvs"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    assert "deploy.undefined_middleware: expected refuse or warn, got 'ignore'" in info.value.message
    assert "deploy.endpoint_mode: expected vip or dnsrr, got 'ipvs'" in info.value.message


# --- who else may change what graphsite trusts -----------------------------------------------------------------


@pytest.fixture
def trusted(tmp_path) -> tuple[Config, dict[str, Path]]:
    """A token file and the three directories deploy writes in, real ones in tmp_path, owned by this user."""
    paths = {"dns.token_file": tmp_path / "cf-token", "deploy.dynamic_dir": tmp_path / "dynamic",
             "deploy.lock_dir": tmp_path / "locks", "deploy.bind_root": tmp_path / "srv"}
    paths["dns.token_file"].write_text("t0ken-" + "x" * 34 + "\n")
    paths["dns.token_file"].chmod(0o600)
    for setting, path in paths.items():
        if setting != "dns.token_file":
            path.mkdir()
            path.chmod(0o755)
    config = Config().replace("dns", token_file=str(paths["dns.token_file"])).replace(
        "deploy", dynamic_dir=str(paths["deploy.dynamic_dir"]), lock_dir=str(paths["deploy.lock_dir"]),
        bind_root=str(paths["deploy.bind_root"]), content="bind")
    return config, paths


def _permission_checks(config: Config) -> dict:
    from graphsite.usecases.doctor.host import permission_facts

    return {c.name: c for c in judge.permission_checks(config, Facts(permissions=permission_facts(config)))}


@pytest.mark.parametrize(("setting", "mode", "words"), [
    ("dns.token_file", 0o644, "mode 0644, its group and others can read the Cloudflare token"),
    ("dns.token_file", 0o640, "mode 0640, its group can read the Cloudflare token"),
    ("dns.token_file", 0o604, "mode 0604, others can read the Cloudflare token"),
    ("deploy.dynamic_dir", 0o777, "mode 0777, its group and others can create files in it"),
    ("deploy.lock_dir", 0o1777, "mode 1777, its group and others can create files in it (sticky: that stops only"),
    ("deploy.bind_root", 0o775, "mode 0775, its group can create files in it"),
])
def test_a_file_others_may_read_or_a_directory_others_may_write_is_a_warning_with_its_fix(trusted, setting, mode,
                                                                                          words):
    config, paths = trusted
    path = paths[setting]
    path.chmod(mode)
    found = _permission_checks(config)
    name = "permissions." + setting.partition(".")[2]
    check = found[name]
    assert check.status == WARN and f"{setting} {path}: {words}" in check.evidence, check
    assert check.fix == (f"chmod 600 {path}" if setting == "dns.token_file" else f"chmod go-w {path}")
    assert all(c.status == PASS for n, c in found.items() if n != name), found
    token = paths["dns.token_file"].read_text().strip()
    assert not any(token in c.evidence + c.fix for c in found.values())


def test_files_only_their_owner_may_change_pass(trusted):
    config, paths = trusted
    found = _permission_checks(config)
    assert sorted(found) == ["permissions.bind_root", "permissions.dynamic_dir", "permissions.lock_dir",
                             "permissions.token_file"]
    assert {c.status for c in found.values()} == {PASS}, found
    # bind_root is looked at in bind mode only; a directory not made yet is not looked at (deploy makes it 0755)
    assert "permissions.bind_root" not in _permission_checks(config.replace("deploy", content="config"))
    paths["deploy.lock_dir"].rmdir()
    assert "permissions.lock_dir" not in _permission_checks(config)


def test_a_directory_owned_by_another_user_is_a_warning(trusted):
    """/tmp/graphsite-locks made first by another user: 0755 is its mode today, theirs to change tomorrow."""
    import os

    config, paths = trusted
    os.chown(paths["deploy.lock_dir"], 4242, 4242)
    check = _permission_checks(config)["permissions.lock_dir"]
    assert check.status == WARN and "owned by uid 4242 (not root, not this user)" in check.evidence
    assert check.fix == f"chown {os.geteuid()} {paths['deploy.lock_dir']}"


def test_the_directories_graphsite_makes_pass_whatever_the_umask(tmp_path):
    """Made by deploy under a umask of 0: the lock directory, the bind root and the dynamic directory are 0755."""
    import os

    from graphsite.publisher import bind, route, route_files
    from graphsite.publisher.deployment import Stamp
    from graphsite.publisher.lock import subdomain_lock

    config = Config().replace("deploy", dynamic_dir=str(tmp_path / "dynamic"), lock_dir=str(tmp_path / "locks"),
                              bind_root=str(tmp_path / "srv"), content="bind")
    previous = os.umask(0)
    try:
        with subdomain_lock(config.deploy.lock_dir, "s1"):
            pass
        document = route.route_document(route.RouteSettings.from_config(config), "s1", "s1.hhdevs.space")
        route_files.write_route(tmp_path / "dynamic" / "s1.yml", document)
        if os.geteuid() == 0:  # bind mode chowns to uid 1000
            directory = tmp_path / "srv" / "s1"
            bind.ensure_bind_dir(directory, b"page", Stamp("s1"), "a" * 64, bind.page_directory(directory))
        else:
            (tmp_path / "srv").mkdir(0o755)
    finally:
        os.umask(previous)
    assert {c.status for c in _permission_checks(config).values()} == {PASS}


def test_strict_permissions_turns_each_warning_into_a_refusal_of_deploy(trusted, tmp_path):
    from graphsite.config import load_config
    from graphsite.usecases.doctor import preflight_error

    config, paths = trusted
    paths["dns.token_file"].chmod(0o644)
    paths["deploy.dynamic_dir"].chmod(0o777)
    written = tmp_path / "strict.toml"
    written.write_text("[deploy]\nstrict_permissions = true\n")
    assert load_config(written, environ={}).deploy.strict_permissions is True
    assert load_config(written, environ={"GRAPHSITE_DEPLOY_STRICT_PERMISSIONS": "false"}).deploy.strict_permissions \
        is False
    assert Config().deploy.strict_permissions is False
    assert {c.status for c in _permission_checks(config).values()} == {WARN, PASS}
    assert preflight_error(tuple(_permission_checks(config).values())) is None  # a warning: deploy carries on
    found = _permission_checks(config.replace("deploy", strict_permissions=True))
    assert (found["permissions.token_file"].status, found["permissions.dynamic_dir"].status) == (FAIL, FAIL)
    assert found["permissions.lock_dir"].status == PASS
    error = preflight_error(tuple(found.values()))
    assert error is not None and "(2 failed check(s))" in error.message
    assert f"fix: chmod 600 {paths['dns.token_file']}" in error.message
    assert f"fix: chmod go-w {paths['deploy.dynamic_dir']}" in error.message
    assert paths["dns.token_file"].read_text().strip() not in error.message
