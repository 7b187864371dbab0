"""Private reports and the dynamic directory, as pure decisions: who may read a deployment, what the route
carries, which files block Traefik, which middlewares are undefined."""

from __future__ import annotations

import re
from pathlib import Path

import bcrypt
import pytest

from graphsite.errors import ConfigError, DeployError
from graphsite.publisher import caddy, route, route_files
from graphsite.publisher.access import decide_access, hash_line, mark, new_credentials, read_htpasswd
from graphsite.publisher.deployment import Stamp
from graphsite.publisher.dynamic import blocking_files
from graphsite.publisher.plan import ConfigFile

FQDN = "graph-eng-0a1b2c.hhdevs.space"


def test_new_credentials_hash_with_bcrypt_and_keep_the_password_out_of_the_repr():
    access = new_credentials(rounds=4)
    user, hashed = access.users[0].split(":", 1)
    assert user == access.user == "reader" and len(access.password) >= 20
    assert bcrypt.checkpw(access.password.encode(), hashed.encode())
    assert access.password not in repr(access) and access.password not in access.users[0]


def test_the_route_of_a_private_deployment_asks_for_the_users_first(production):
    config = production.replace("deploy", middlewares=("security-headers@file",))
    users = (hash_line("reader", "pw", rounds=4),)
    document = route.route_document(route.RouteSettings.from_config(config), "graph-eng-0a1b2c", FQDN, users=users)
    assert route.schema_errors(document) == []
    websecure = document["http"]["routers"]["graph-eng-0a1b2c-websecure"]
    assert websecure["middlewares"] == ["graph-eng-0a1b2c-auth@file", "security-headers@file"]
    assert route.route_users(document, "graph-eng-0a1b2c") == users
    public = route.route_document(route.RouteSettings.from_config(production), "graph-eng-0a1b2c", FQDN)
    assert "middlewares" not in public["http"]


def test_a_private_route_is_still_ours_and_a_foreign_middleware_is_not(production, tmp_path):
    path = tmp_path / "graph-eng-0a1b2c.yml"
    document = route.route_document(route.RouteSettings.from_config(production), "graph-eng-0a1b2c", FQDN,
                                    users=(hash_line("r", "p", rounds=4),))
    stamp = Stamp("graph-eng-0a1b2c", FQDN, "0a1b2c3d", "2026-07-01T12:00:00Z")
    path.write_text(route.dump(document, stamp))
    assert route_files.route_stamp(path) is not None
    path.write_text(route.dump(document))  # the same document without its stamp proves nothing
    assert route_files.route_stamp(path) is None
    document["http"]["middlewares"]["someone-else"] = {"headers": {}}
    path.write_text(route.dump(document, stamp))
    assert route_files.route_stamp(path) is None


def test_a_redeploy_keeps_the_credentials_unless_told_otherwise(production, tmp_path):
    path = tmp_path / "n.yml"
    first = decide_access(path, "n", private=True)
    document = route.route_document(route.RouteSettings.from_config(production), "n", "n.hhdevs.space",
                                    users=first.users)
    path.write_text(route.dump(document))
    kept = decide_access(path, "n")  # without --private: a private report never turns public by omission
    assert kept.users == first.users and kept.kept and kept.credentials is None
    renewed = decide_access(path, "n", new_password=True)
    assert renewed.users != first.users and renewed.credentials is not None
    assert decide_access(path, "n", public=True).users == ()
    with pytest.raises(ConfigError, match="--public cannot be combined"):
        decide_access(path, "n", public=True, private=True)


@pytest.mark.parametrize("text, why", [
    ("http:\n  - routers\n", "http is a list, not a mapping"),
    ("http:\n  middlewares:\n    - n-auth\n", "http.middlewares is a list, not a mapping"),
    ("http:\n  middlewares:\n    n-auth: basicAuth\n", "http.middlewares.n-auth is not a basicAuth middleware"),
    ("http:\n  middlewares:\n    n-auth: {basicAuth: {users: 'r:$2b$'}}\n", "http.middlewares.n-auth is not a"),
    ("http:\n  middlewares:\n    n-auth: {basicAuth: {users: []}}\n", "http.middlewares.n-auth is not a"),
    ("http:\n  middlewares:\n    n-auth: {basicAuth: {usersFile: /x}}\n", "http.middlewares.n-auth is not a"),
    ("http:\n  middlewares:\n    n-auth: {basicAuth: {users: [{r: x}]}}\n", "http.middlewares.n-auth is not a"),
    ("http:\n  middlewares:\n    n-auth: ~\n", "http.middlewares.n-auth is not a basicAuth middleware"),
])
def test_a_hand_edited_route_is_a_failed_read_of_its_users_never_none(tmp_path, text, why):
    """route_users read the route with .get() unchecked: `http` or `middlewares` as a list raised AttributeError
    (a redeploy's traceback); a users entry of another shape read as no users: a private page made public."""
    path = tmp_path / "n.yml"
    path.write_text(text)
    for flags in ({}, {"private": True}, {"new_password": True}, {"was_private": True}):
        with pytest.raises(DeployError) as refused:
            decide_access(path, "n", **flags)
        assert refused.value.detail.startswith(f"{path}: {why}"), refused.value.detail
        assert "--auth-file" in refused.value.hint
    assert decide_access(path, "n", public=True).users == ()  # what the user says is not read from the file
    path.write_text("http:\n  middlewares:\n    security-headers: {headers: {}}\n")
    assert decide_access(path, "n").users == ()  # no auth middleware of its own: public, as written


def _caddyfile(plan) -> ConfigFile:
    return next(c for c in plan.service.configs if c.target == caddy.CADDYFILE_PATH)


def test_the_access_label_and_the_service_s_caddyfile_follow_the_access(fixed_plan):
    access = new_credentials(rounds=4)
    private = mark(fixed_plan, access)
    assert dict(private.service.labels)["graphsite.access"] == "private"
    assert private.deployment.access == "private"
    user, hashed = access.users[0].split(":", 1)
    assert f"\tbasic_auth {{\n\t\t{user} {hashed}\n\t}}\n" in _caddyfile(private).data.decode()
    assert _caddyfile(private).name != _caddyfile(fixed_plan).name  # a new config: Swarm configs are immutable
    assert [c.target for c in private.service.configs] == [c.target for c in fixed_plan.service.configs]
    public = mark(private, decide_access(Path("/nonexistent"), "x"))
    assert dict(public.service.labels)["graphsite.access"] == "public"
    assert _caddyfile(public) == _caddyfile(fixed_plan)


def test_route_users_that_cannot_reach_the_caddyfile_stop_the_plan(fixed_plan):
    from graphsite.publisher.access import Access

    with pytest.raises(DeployError, match="user 'a{b'") as raised:
        mark(fixed_plan, Access(users=("a{b:$2b$10$" + "a" * 53,)))
    assert "hint: redeploy with --new-password" in raised.value.message


@pytest.mark.parametrize("text, message", [
    ("alice:$apr1$H6uskkkW$IgXLP6ewTrSuBkTrqE8wj/\n", "line 1: expected user:bcrypt-hash"),
    ("# only a comment\n", "holds no user"),
    ("{$HOME}:$2b$10$" + "a" * 53 + "\n", "line 1: user '{$HOME}': only letters"),  # it reaches the Caddyfile
])
def test_an_auth_file_must_hold_bcrypt_lines(tmp_path, text, message):
    path = tmp_path / "htpasswd"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        read_htpasswd(path)
    path.write_text("# users\n" + hash_line("alice", "pw", rounds=4) + "\n")
    assert read_htpasswd(path)[0].startswith("alice:$2b$")


def test_any_broken_file_of_the_directory_blocks_and_is_named(tmp_path):
    (tmp_path / "ok.yml").write_text("http:\n  middlewares:\n    m: {redirectScheme: {scheme: https}}\n")
    (tmp_path / "notes.md").write_text("not: [yaml")
    assert blocking_files(tmp_path) == []
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.toml").write_text("[http.routers.r]\nrule = 3\n")
    (tmp_path / "a.yaml").write_text("http: [\n")
    lines = blocking_files(tmp_path)
    assert [line.split(":")[0] for line in lines] == [str(tmp_path / "a.yaml"), str(tmp_path / "sub" / "b.toml")]
    assert "line 2, column 1" in lines[0] and "http.routers.r" in lines[1]


@pytest.mark.parametrize("name,text,error", [
    ("long.yml", "x: " + "9" * 5000, "a value cannot be read: Exceeds the limit (4300 digits)"),
    ("long.toml", "x = " + "9" * 5000, "a value cannot be read: Exceeds the limit (4300 digits)"),
    ("deep.yml", "x: " + "[" * 3000 + "]" * 3000, "nested too deeply to read"),
    ("deep.toml", "x = " + "[" * 3000 + "]" * 3000, "nested too deeply to read"),
    ("date.yml", "x: 2020-13-45", "a value cannot be read: month must be in 1..12"),
], ids=["yaml-digits", "toml-digits", "yaml-depth", "toml-depth", "yaml-date"])
def test_a_file_python_refuses_to_parse_blocks_as_a_parse_error(tmp_path, name, text, error):
    (tmp_path / name).write_text(text)
    (line,) = blocking_files(tmp_path)
    assert line.startswith(f"{tmp_path / name}: ") and error in line and "set_int_max_str_digits" not in line


def test_a_file_named_only_toml_is_read_as_toml_as_traefik_reads_it(tmp_path):
    """A file named `.toml` is read by Traefik (its extension is `.toml` to Go) as TOML; graphsite listed it, but
    chose YAML by Python's suffix (''): valid TOML blocked, YAML that Traefik cannot decode passed."""
    (tmp_path / ".toml").write_text("[http.routers.r]\nrule = \"Host(`a.example.com`)\"\nservice = \"s\"\n"
                                    "[http.services.s.loadBalancer]\nservers = [{url = \"http://a:80\"}]\n")
    assert blocking_files(tmp_path) == []
    (tmp_path / ".toml").write_text("http:\n  routers: {}\n")
    (line,) = blocking_files(tmp_path)
    assert line.startswith(f"{tmp_path / '.toml'}: ")


def test_a_directory_this_user_cannot_list_is_a_failed_read_never_an_empty_one(tmp_path):
    """Before, a subdirectory of the dynamic directory this user could not list read as empty (`except OSError:
    return found`), though Traefik, as root, reads it: a broken file in it blocked nothing that deploy, verify or
    doctor saw. Proven as nobody: root may list everything."""
    import tempfile

    from graphsite.publisher.dynamic import UnlistedDirectory, UnreadFile, read_directory
    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        directory = Path(base)
        directory.chmod(0o755)
        (directory / "ok.yml").write_text("http: {}\n")
        for name, mode in (("hidden", 0o700), ("unsearchable", 0o744)):  # root's: nobody may not list / search it
            (directory / name).mkdir(mode=mode)
            (directory / name / "broken.yml").write_text("http: [\n")
            (directory / name).chmod(mode)
        with as_nobody():
            for look in (blocking_files, read_directory):
                with pytest.raises(UnlistedDirectory, match=re.escape(f"cannot list {directory / 'hidden'}: "
                                                                      "Permission denied")):
                    look(directory)
        (directory / "hidden").chmod(0o755)
        with as_nobody(), pytest.raises(UnreadFile) as unsearched:  # listed, with each name's type: not opened
            blocking_files(directory)
        assert str(unsearched.value) == f"cannot read {directory / 'unsearchable' / 'broken.yml'}: Permission denied"
        assert len(blocking_files(directory)) == 2  # root lists both: the broken file in each blocks Traefik


def test_only_a_directory_traefik_descends_into_must_be_listed_and_a_link_to_one_is_not_followed():
    """Before, a directory that may be read but not searched (0744) holding only notes.txt, and a link to /root,
    raised UnlistedDirectory: deploy, verify and doctor refused over what Traefik never reads. And a link to a
    directory was followed, though Traefik's os.ReadDir gives the link's own type: it never descends through one,
    so a broken file there blocks nothing. As nobody, for whom /root is not listable."""
    import tempfile

    from graphsite.publisher.dynamic import read_directory
    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        directory, elsewhere = Path(base) / "dynamic", Path(base) / "elsewhere"
        Path(base).chmod(0o755)
        for made in (directory, elsewhere):
            made.mkdir()
        (directory / "ok.yml").write_text("http: {}\n")
        (directory / "notes").mkdir()
        (directory / "notes" / "notes.txt").write_text("what this directory is for\n")
        (directory / "notes").chmod(0o744)  # root's: nobody may list it, not look at what is in it
        (directory / "link").symlink_to("/root")
        (elsewhere / "broken.yml").write_text("http: [\n")
        (directory / "linked").symlink_to(elsewhere)
        with as_nobody():
            read = read_directory(directory)
            blocked = blocking_files(directory)
        assert [parsed.path for parsed in read] == [directory / "ok.yml"] and blocked == []
        assert blocking_files(directory) == []  # as root too: the linked directory is not Traefik's to read


def test_a_file_this_user_may_not_read_is_unknown_never_broken():
    """Before, a root-only route file (0600) read as a broken one ('cannot read: Permission denied'): verify
    said Traefik applies no change, though Traefik, as root, reads it. Whether it loads is unknown. As nobody."""
    import tempfile

    from graphsite.publisher.dynamic import UnreadFile, read_directory
    from tests.publisher.nobody import as_nobody

    with tempfile.TemporaryDirectory() as base:  # pytest's tmp_path is under a 0700 directory nobody may not search
        directory = Path(base)
        directory.chmod(0o755)
        (directory / "ok.yml").write_text("http: {}\n")
        (directory / "root.yml").write_text("http: {}\n")
        (directory / "root.yml").chmod(0o600)
        with as_nobody():
            for look in (blocking_files, read_directory):
                with pytest.raises(UnreadFile) as unread:
                    look(directory)
                assert str(unread.value) == f"cannot read {directory / 'root.yml'}: Permission denied"
        assert blocking_files(directory) == []  # as root, as Traefik reads it: it loads


@pytest.mark.timeout(20)  # a FIFO read as a file waits for a writer: a hang is this test's failure
def test_an_entry_traefik_reads_but_cannot_load_blocks_even_when_it_is_no_regular_file(tmp_path):
    """Traefik reads every entry with a provider extension that is not a directory, without asking whether it
    is a regular file, and a read that fails applies nothing. Before, graphsite skipped a link to nothing, a
    FIFO or a link to a directory named so (not is_file()), and a dangling link read as 'removed since
    listed': verify, doctor and deploy passed while Traefik applied nothing. Only a name gone is gone."""
    import os

    from graphsite.publisher.dynamic import parse_file, read_directory

    (tmp_path / "ok.yml").write_text("http: {}\n")
    (tmp_path / "a-dangling.yml").symlink_to(tmp_path / "nowhere.yml")
    os.mkfifo(tmp_path / "b-fifo.yaml")
    (tmp_path / "somewhere").mkdir()
    (tmp_path / "c-dir.toml").symlink_to(tmp_path / "somewhere")
    (tmp_path / "d-loop.yml").symlink_to(tmp_path / "d-loop.yml")
    assert [parsed.path.name for parsed in read_directory(tmp_path)] == [
        "a-dangling.yml", "b-fifo.yaml", "c-dir.toml", "d-loop.yml", "ok.yml"]
    assert blocking_files(tmp_path) == [
        f"{tmp_path / 'a-dangling.yml'}: cannot read: No such file or directory: a link to "
        f"{tmp_path / 'nowhere.yml'}, which does not exist",
        f"{tmp_path / 'b-fifo.yaml'}: cannot read: a FIFO, not a regular file: Traefik's file provider hangs on it "
        "(its read waits for a writer, and removing the FIFO does not wake it): open it for writing before removing "
        f"it (`timeout 5 sh -c ': > {tmp_path / 'b-fifo.yaml'}'`: it returns once Traefik has it open), or "
        "remove it and restart Traefik",
        f"{tmp_path / 'c-dir.toml'}: cannot read: Is a directory",
        f"{tmp_path / 'd-loop.yml'}: cannot read: Too many levels of symbolic links"]
    assert parse_file(tmp_path / "never.yml").gone and not parse_file(tmp_path / "a-dangling.yml").gone


def test_a_file_named_only_by_its_extension_is_read_as_traefik_reads_it(tmp_path):
    """Go's filepath.Ext(".yml") is ".yml": Traefik reads a file named so (any case); Python's suffix of it is
    '', and before, graphsite ignored it: a broken `.yml` blocked Traefik while verify passed."""
    from graphsite.publisher.dynamic import provider_files

    (tmp_path / ".yml").write_text("http: [\n")
    (tmp_path / ".TOML").write_text("")
    (tmp_path / "yml").write_text("http: [\n")  # no dot: not read
    assert [path.name for path in provider_files(tmp_path)] == [".TOML", ".yml"]
    assert [line.split(": ")[0] for line in blocking_files(tmp_path)] == [str(tmp_path / ".yml")]


@pytest.mark.timeout(20)
def test_a_link_to_dev_null_is_an_empty_configuration_and_an_endless_device_unknown(tmp_path):
    """A link to /dev/null is a way to disable a file: Traefik reads an empty configuration. Before, graphsite
    called it "a character device, not a regular file" and blocking. A device that gives no end is not broken
    either: what Traefik reads there is unknown."""
    from graphsite.publisher.dynamic import DEVICE_LIMIT, UnreadFile, parse_file, read_directory

    (tmp_path / "off.yml").symlink_to("/dev/null")
    (tmp_path / "ok.yml").write_text("http: {}\n")
    assert [(parsed.path.name, parsed.data) for parsed in read_directory(tmp_path)] == [
        ("off.yml", {}), ("ok.yml", {"http": {}})]
    assert blocking_files(tmp_path) == []
    (tmp_path / "zero.yml").symlink_to("/dev/zero")
    zero = parse_file(tmp_path / "zero.yml")
    assert zero.unknown and zero.error == (f"cannot read: a character device that gave more than {DEVICE_LIMIT} "
                                           "bytes without an end: what Traefik reads there is unknown")
    with pytest.raises(UnreadFile, match=f"cannot read {tmp_path / 'zero.yml'}: a character device"):
        read_directory(tmp_path)


def test_a_file_removed_while_the_directory_is_read_is_left_out_not_reported_broken(tmp_path):
    """Another deploy's teardown removes its route file while this deploy's preflight reads the directory: the
    file is gone, not broken (CI once refused a deploy over it). A real race, bounded: one thread writes and
    removes route files while the directory is judged again and again."""
    import threading
    import time

    from graphsite.publisher.dynamic import parse_file, read_directory

    gone = parse_file(tmp_path / "never.yml")
    assert gone.gone and gone.data is None and "removed" in gone.error
    (tmp_path / "kept.yml").write_text("http: {}\n")
    stop = threading.Event()

    def churn() -> None:
        for turn in range(1_000_000):
            if stop.is_set():
                return
            path = tmp_path / f"route-{turn % 50}.yml"
            path.write_text("http:\n  middlewares:\n    m: {redirectScheme: {scheme: https}}\n" * 40)
            path.unlink()

    writer = threading.Thread(target=churn)
    writer.start()
    try:
        deadline, judged = time.monotonic() + 1.5, 0
        while time.monotonic() < deadline:
            assert blocking_files(tmp_path) == []
            assert "kept.yml" in [parsed.path.name for parsed in read_directory(tmp_path)]
            judged += 1
    finally:
        stop.set()
        writer.join(timeout=10)
    assert judged > 10 and not writer.is_alive()


def test_a_private_deployment_whose_route_is_gone_stays_private_with_new_credentials(tmp_path):
    """The service's record says private; its route file (and so its credentials) is gone: a redeploy without
    flags must not publish it, so it makes new credentials (shown once)."""
    access = decide_access(tmp_path / "gone.yml", "n", was_private=True)
    assert access.private and access.credentials is not None
    assert decide_access(tmp_path / "gone.yml", "n", was_private=True, public=True).private is False


def test_the_middlewares_a_file_defines_are_read_the_same_for_doctor_and_deploy(tmp_path):
    from graphsite.publisher.dynamic import parse_file

    cases = {"a.yml": ("http:\n  middlewares:\n    z: {headers: {frameDeny: true}}\n    a: {stripPrefix: {}}\n",
                       ("a", "z")),
             "b.yml": ("http: [1, 2]\n", ()), "c.yml": ("http:\n  middlewares: [x]\n", ()),
             "d.yml": ("http: [\n", ()), "e.toml": ("[http.middlewares.t.headers]\nframeDeny = true\n", ("t",))}
    for name, (text, names) in cases.items():
        (tmp_path / name).write_text(text)
        assert parse_file(tmp_path / name).middlewares() == names, name


@pytest.mark.parametrize("name", ["it's.yml", 'a"b.yml', "$HOME.yml", "a`touch injected`.yml", "$(id).yml"])
def test_the_fifo_hint_opens_that_fifo_whatever_its_name_and_runs_nothing_else(tmp_path, name):
    """The hint was `timeout 5 sh -c ": > 'PATH'"`: a name with a quote broke it, `$HOME` opened another file, a
    backtick ran a command for whoever pasted it (root, on Dokploy). Run as bash runs a pasted line, it opens the
    FIFO (a reader waits on it here) and nothing else."""
    import os
    import subprocess
    import threading

    os.mkfifo(tmp_path / name)
    (line,) = blocking_files(tmp_path)
    command = line.split("(`", 1)[1].split("`:", 1)[0]
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append((tmp_path / name).read_bytes()))
    reader.start()
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=10)
    reader.join(timeout=10)
    assert done.returncode == 0, done.stderr
    assert got == [b""] and sorted(p.name for p in tmp_path.iterdir()) == [name]
