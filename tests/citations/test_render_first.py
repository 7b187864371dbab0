"""`graphsite build --check-links` renders once, after the link check, and deploy once the live page is read:
what fails a render in a broken installation (a theme file that cannot be read, a missing font) is asked first,
so it fails before a single link is requested (not after minutes of checking) or the live page read; and
`graphsite diff NAME NEW` builds NEW before it asks for the live page.

The installation is a real copy of graphsite whose theme (graphsite/_data/theme, where a wheel keeps it) is broken,
run in its own interpreter: against a loopback server that counts the requests it receives, or against the
publisher's in-memory fakes (tests/publisher/fakes.py), which list the page configs read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphsite
from graphsite.paths import theme_dir

from .conftest import Server

PACKAGE = Path(graphsite.__file__).parent
REPO = Path(__file__).resolve().parents[2]


def _installation(tmp_path: Path) -> Path:
    """Return a site directory holding a copy of graphsite with its theme where a wheel puts it."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "graphsite", ignore=shutil.ignore_patterns("_data"))
    shutil.copytree(theme_dir(), site / "graphsite" / "_data" / "theme")
    return site


def _build(site: Path, work: Path, fonts: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if name != "GRAPHSITE_CONFIG"}
    env.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(work / "cache"))
    return subprocess.run([sys.executable, "-m", "graphsite", "build", "report.md", "--out", "out", "--check-links",
                           "--fonts", fonts], cwd=work, env=env, capture_output=True, text=True, check=False,
                          timeout=60)


@pytest.mark.parametrize("broken", ["a theme file not UTF-8", "a font missing"])
def test_a_broken_installation_fails_the_build_before_any_link_is_requested(tmp_path: Path, pitfall_server: Server,
                                                                           broken: str) -> None:
    site = _installation(tmp_path)
    theme = site / "graphsite" / "_data" / "theme"
    if broken == "a theme file not UTF-8":
        culprit, fonts = theme / "page.css", "system"
        culprit.write_bytes(b"\xff\xfe body {}")
    else:
        culprit, fonts = theme / "fonts" / "inter-latin-400-normal.woff2", "embedded"
        culprit.unlink()
    work = tmp_path / "work"
    work.mkdir()
    (work / "report.md").write_text(f"# Checked\n\n## 1. Claims\n\nA claim [[1]({pitfall_server.url('/ok')})].\n\n"
                                    f"## References\n\n1. A page. {pitfall_server.url('/ok')}\n", encoding="utf-8")
    (work / "graphsite.toml").write_text(f'[links]\ntimeout = 5.0\nretries = 0\nallow_private = true\n'
                                         f'cache_dir = "{work / "links"}"\n', encoding="utf-8")

    result = _build(site, work, fonts)
    assert result.returncode == 1, result.stderr
    assert str(culprit) in result.stderr and "reinstall graphsite" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert pitfall_server.hits.log == []
    assert not (work / "out").exists()

    if broken == "a theme file not UTF-8":
        shutil.copy(theme_dir() / "page.css", culprit)
    control = _build(site, work, "system")  # the same build, its installation whole: the links are checked
    assert control.returncode == 0, control.stderr
    assert pitfall_server.hits.count("/ok") >= 1


_DEPLOYED_PAGE = """
import json, sys
from pathlib import Path
from graphsite.errors import BuildError
from graphsite.publisher.deployment import Deployment
from graphsite.usecases.build import checked_report
from graphsite.usecases.diff import deployed_page, held_page
from tests.publisher.fakes import fake_world

config, clients = fake_world(Path(sys.argv[1]))
swarm = clients.docker
swarm.add_service("graph-x", Deployment("graph-x", "graph-x.example.com", sha256="ab" * 32, id="abc123").labels())
error, read = "", []
try:
    deployed_page(checked_report(Path(sys.argv[2])), "graph-x", config, clients, swarm.service("graph-x"))
except BuildError as exc:
    error, read = exc.message, list(swarm.read_configs)
try:  # the control: the live page deploy would have read (the fake holds no page: an error, after the read)
    held_page("graph-x", config, clients, swarm.service("graph-x"))
except Exception as exc:
    print(json.dumps([error, read, swarm.read_configs, str(exc)]))
"""


def test_a_broken_theme_fails_a_deploy_before_the_live_page_is_read(tmp_path: Path) -> None:
    """deploy renders its page once it has read the live one (its "Changed since" note): a theme that cannot be
    read fails first. (The control, in the same run: the read deploy would have made.)"""
    import json

    site = _installation(tmp_path)
    culprit = site / "graphsite" / "_data" / "theme" / "page.js"
    culprit.write_bytes(b"\xff\xfe;")
    report = tmp_path / "report.md"
    report.write_text("# Title\n\n## 1. Claims\n\nSome words.\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}", "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-c", _DEPLOYED_PAGE, str(tmp_path / "world"), str(report)], env=env,
                         cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 0, run.stderr
    error, read, control, why = json.loads(run.stdout)
    assert error.startswith(f"{culprit}: cannot read the theme's file") and read == []
    assert control == ["graph-x-page-abababababab"] and "its page was not found" in why


_AGAINST_LIVE = """
import sys
from pathlib import Path
from graphsite.config import Config
from graphsite.errors import GraphsiteError
from graphsite.usecases.diff import against_live

config = (Config().replace("site", domain="example.com")
          .replace("verify", resolve_https=sys.argv[2], ca_bundle=sys.argv[3]))
try:
    print("compared:", against_live("graph-x", Path(sys.argv[1]), config))
except GraphsiteError as exc:
    print(exc.message.splitlines()[0])
"""


def test_a_broken_theme_fails_a_diff_against_the_live_page_before_its_request(tmp_path: Path) -> None:
    """`graphsite diff NAME NEW` builds NEW before it asks the edge for the live page (here a loopback TLS
    server that names itself graph-x.example.com): a broken theme fails with no connection made."""
    import trustme

    from .test_tls import _serving

    authority = trustme.CA()
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    site = _installation(tmp_path)
    culprit = site / "graphsite" / "_data" / "theme" / "page.css"
    culprit.write_bytes(b"\xff\xfe body {}")
    report = tmp_path / "report.md"
    report.write_text("# Title\n\n## 1. Claims\n\nSome words.\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    with _serving(authority.issue_cert("graph-x.example.com")) as (_, counting):
        def diff() -> str:
            address = f"127.0.0.1:{counting.server_address[1]}"
            run = subprocess.run([sys.executable, "-c", _AGAINST_LIVE, str(report), address, str(bundle)], env=env,
                                 cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60)
            assert run.returncode == 0, run.stderr
            return run.stdout.strip()

        assert diff().startswith(f"{culprit}: cannot read the theme's file") and counting.accepted == 0
        shutil.copy(theme_dir() / "page.css", culprit)
        control = diff()  # whole again: the live page is asked for (the loopback serves no page graphsite built)
        assert counting.accepted == 1 and "is not a page graphsite built" in control, control
