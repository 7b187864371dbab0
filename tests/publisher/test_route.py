import os
import stat
import tempfile
from pathlib import Path

import pytest
import yaml

from graphsite.atomic import TEMPORARY_SUFFIX
from graphsite.errors import DeployError
from graphsite.publisher import route, route_files
from graphsite.publisher.deployment import Stamp
from graphsite.publisher.stores import RouteFiles
from tests.publisher.nobody import as_nobody

STAMP = Stamp("s1", "s1.hhdevs.space", "0a1b2c3d", "2026-07-01T12:00:00Z")


def _route_files(dynamic_dir: Path) -> dict[str, Path]:
    """The route files of `dynamic_dir` that carry graphsite's whole stamp, by name."""
    paths = sorted(p for p in dynamic_dir.iterdir() if p.suffix == ".yml") if dynamic_dir.is_dir() else []
    return {p.stem: p for p in paths if route_files.route_stamp(p) is not None}


def test_route_file_matches_the_golden_file(production, golden):
    document = route.route_document(route.RouteSettings.from_config(production), "graph-eng-0a1b2c",
                                    "graph-eng-0a1b2c.hhdevs.space")
    text = route.dump(document)
    assert yaml.safe_load(text) == yaml.safe_load(golden("route-host.yml", text))
    assert route.schema_errors(document) == []


def test_route_structure(production):
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
    http = yaml.safe_load(route.dump(document))["http"]
    secure, web = http["routers"]["s1-websecure"], http["routers"]["s1-web"]
    assert secure["rule"] == web["rule"] == "Host(`s1.hhdevs.space`)"
    assert secure["entryPoints"] == ["websecure"] and web["entryPoints"] == ["web"]
    assert secure["tls"] == {"certResolver": "letsencrypt"}  # per-host: the HTTP challenge cannot do wildcards
    assert web["middlewares"] == ["redirect-to-https@file"]
    assert secure["service"] == web["service"] == "s1-service"
    assert http["services"]["s1-service"]["loadBalancer"] == {
        "servers": [{"url": "http://s1:20128"}], "passHostHeader": True}


def test_wildcard_tls_names_main_and_sans(production):
    config = production.replace("deploy", tls="wildcard")
    document = route.route_document(route.RouteSettings.from_config(config), "s1", "s1.hhdevs.space")
    assert document["http"]["routers"]["s1-websecure"]["tls"]["domains"] == [
        {"main": "hhdevs.space", "sans": ["*.hhdevs.space"]}]
    assert route.schema_errors(document) == []


def test_a_hostile_subdomain_stays_data(production, tmp_path):
    # Dumped from data: a quote or newline in a value can never become YAML structure.
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "evil`)\n  x: {y: 1}")
    loaded = yaml.safe_load(route.dump(document))
    assert loaded["http"]["routers"]["s1-web"]["rule"] == "Host(`evil`)\n  x: {y: 1}`)"


@pytest.mark.parametrize("breakage", [
    lambda d: d["http"]["routers"]["s1-websecure"].__setitem__("tls", True),
    lambda d: d["http"]["routers"]["s1-web"].pop("service"),
    lambda d: d["http"]["services"]["s1-service"]["loadBalancer"].__setitem__("servers", []),
    lambda d: d.__setitem__("htpp", {}),
])
def test_a_malformed_route_is_refused_and_never_written(production, tmp_path, breakage):
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
    breakage(document)
    path = tmp_path / "s1.yml"
    with pytest.raises(DeployError, match="Traefik's v3 schema"):
        route_files.write_route(path, document)
    assert list(tmp_path.iterdir()) == []


def test_write_is_atomic_0644_and_idempotent(production, tmp_path):
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
    path = tmp_path / "dynamic" / "s1.yml"
    assert route_files.write_route(path, document, STAMP) is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert yaml.safe_load(path.read_text()) == document
    assert route_files.write_route(path, document, STAMP) is False
    assert [p.name for p in path.parent.iterdir()] == ["s1.yml"]  # no temporary file left behind
    assert _route_files(path.parent) == {"s1": path}


def test_only_graphsite_routes_count_as_ours(production, tmp_path):
    ours = tmp_path / "s1.yml"
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
    route_files.write_route(ours, document, STAMP)
    assert route_files.route_stamp(ours) is not None
    foreign = tmp_path / "dokploy.yml"
    foreign.write_text(yaml.safe_dump({"http": {"routers": {"dokploy-router-app": {
        "rule": "Host(`dokploy.hhdevs.space`)", "service": "dokploy-service-app"}}}}))
    middlewares = tmp_path / "middlewares.yml"
    middlewares.write_text(yaml.safe_dump({"http": {"middlewares": {"redirect-to-https": {}}}}))
    renamed = tmp_path / "s2.yml"
    renamed.write_text(ours.read_text())  # s1's routers in a file named s2: not s2's route
    others = (foreign, middlewares, renamed, tmp_path / "missing.yml")
    assert not any(route_files.route_stamp(p) is not None for p in others)
    assert _route_files(tmp_path) == {"s1": ours}


def test_a_route_that_cannot_be_written_is_a_deploy_error_not_a_traceback(production, tmp_path):
    blocker = tmp_path / "dynamic"
    blocker.write_text("a file where the directory should be")
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
    with pytest.raises(DeployError, match="cannot write the route"):
        route_files.write_route(blocker / "s1.yml", document)


def test_the_route_is_complete_under_a_name_traefik_ignores_before_the_rename(production, tmp_path, monkeypatch):
    """Traefik's file provider reads only .yml/.yaml/.toml: the file is written whole under another name and
    renamed, so Traefik never sees a half-written route. The real os.rename runs (within the directory's
    descriptor, as graphsite.atomic does it); this only watches it."""
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
    path, real_rename, seen = tmp_path / "s1.yml", os.rename, []

    def watched(source, target, *, src_dir_fd=None, dst_dir_fd=None):
        folder = Path(os.readlink(f"/proc/self/fd/{src_dir_fd}"))
        status = os.stat(source, dir_fd=src_dir_fd, follow_symlinks=False)
        seen.append((folder, Path(source).suffix, stat.S_IMODE(status.st_mode),
                     yaml.safe_load((folder / source).read_text()), folder / target, src_dir_fd == dst_dir_fd))
        real_rename(source, target, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(os, "rename", watched)
    route_files.write_route(path, document)
    [(folder, suffix, mode, content, target, same_directory)] = seen
    assert folder == tmp_path and suffix not in (".yml", ".yaml", ".toml") and target == path and same_directory
    assert mode == 0o644 and content == document


def test_a_link_named_like_a_route_is_never_ours_and_never_written_through(production, tmp_path):
    """A link dynamic/s1.yml to a file outside that holds s1's route, stamped: not s1's route, not a temporary,
    refused by a write and by a removal in one line; the target's owner, mode and content stay as they were."""
    stamp = Stamp("s1", "2026-07-01T12:00:00Z")
    document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
    target = tmp_path / "outside.yml"
    target.write_text(route.dump(document, stamp))
    os.chown(target, 4242, 4242)
    target.chmod(0o600)
    before = (target.stat().st_uid, target.stat().st_mode, target.read_bytes())
    dynamic = tmp_path / "dynamic"
    dynamic.mkdir()
    link, temporary = dynamic / "s1.yml", dynamic / (".s1.yml.k3j2" + TEMPORARY_SUFFIX)
    link.symlink_to(target)
    temporary.symlink_to(target)
    assert route_files.route_stamp(link) is None and route_files.read_route(link) is None
    assert _route_files(dynamic) == {} and route_files.temporaries(dynamic, "hhdevs.space") == {}
    for act in (lambda: route_files.write_route(link, document, stamp), lambda: route_files.remove_file(link),
                lambda: route_files.route_text(link)):
        with pytest.raises(DeployError) as refused:
            act()
        message = refused.value.message
        assert "\n" not in message and str(link) in message and f"symbolic link to {target}" in message
    assert (target.stat().st_uid, target.stat().st_mode, target.read_bytes()) == before
    assert link.is_symlink() and temporary.is_symlink()


def test_a_fifo_named_like_a_route_does_not_hang_a_reader(tmp_path):
    os.mkfifo(tmp_path / "s1.yml")
    assert route_files.route_stamp(tmp_path / "s1.yml") is None and route_files.route_text(tmp_path / "s1.yml") is None
    assert _route_files(tmp_path) == {}


@pytest.mark.skipif(os.geteuid() != 0, reason="it looks as nobody and back: run as root")
def test_a_route_file_that_cannot_be_looked_at_is_a_failed_read_never_absent(production):
    """RouteFiles.routes filtered with os.path.lexists, which answers False on EACCES: "could not look" read as
    "no route file", which deploy's refusal of a foreign route and teardown's and gc's proof of absence decide on.
    Each path is now looked at once and a look that failed raises, naming it, as nobody sees it: a directory it
    may list but not search (mode 0744), and one below a directory it may not search (the dynamic directory
    itself: Path.is_dir raised PermissionError, a traceback)."""
    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        os.chmod(base, 0o755)
        dynamic, hidden = Path(base) / "dynamic", Path(base) / "hidden"
        (hidden / "dynamic").mkdir(parents=True)
        document = route.route_document(route.RouteSettings.from_config(production), "s1", "s1.hhdevs.space")
        route_files.write_route(dynamic / "s1.yml", document, STAMP)
        assert RouteFiles().routes(dynamic, "s1") == RouteFiles().routes(dynamic) == {dynamic / "s1.yml": STAMP}
        dynamic.chmod(0o744)  # nobody may list it, not look at what is in it
        hidden.chmod(0o700)
        with as_nobody():
            for look, what in ((lambda: RouteFiles().routes(dynamic, "s1"), dynamic / "s1.yml"),
                               (lambda: RouteFiles().routes(dynamic), dynamic / "s1.yml"),
                               (lambda: RouteFiles().routes(hidden / "dynamic"), hidden / "dynamic")):
                with pytest.raises(DeployError) as refused:
                    look()
                assert refused.value.detail == f"{what}: cannot look at it: Permission denied", refused.value.detail


@pytest.mark.parametrize("text", [
    "http: 5\n", "http: {routers: 5}\n", "http: [{a: 1}]\n", "http: {services: [1, 2]}\n",
    "x: " + "9" * 5000 + "\n", "x: " + "[" * 3000 + "]" * 3000 + "\n",
], ids=["http-int", "routers-int", "http-list", "services-list", "digits", "depth"])
def test_a_route_file_of_any_other_shape_has_no_stamp_never_a_traceback(text):
    """stamp_of_text caught only YAMLError and called set() on whatever `http` held: one foreign file of such a
    shape in Traefik's shared directory ended list, gc, deploy and teardown with a traceback."""
    comment = "# graphsite: name=s1 fqdn=s1.example.com id=0123abcd created=2026-07-01T12:00:00Z\n"
    assert route.stamp_of_text(comment + text, "s1") is None
