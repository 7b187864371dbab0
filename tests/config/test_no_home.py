"""graphsite run where the user has no home directory (HOME unset with no password entry, empty or relative) and no
XDG_CACHE_HOME: a build goes on without its private caches; what needs a directory under the home (the link
cache's default, a setting written `~/…`) is a one-line error naming the setting, never a traceback and never a
directory that follows the working directory."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from graphsite.config import Config, LinksConfig, load_config
from graphsite.errors import ConfigError

REPORT = "# Plain\n\nA claim [[1](https://example.org/)].\n\n## References\n\n1. Example. https://example.org/\n"
NOT_A_HOME = ["", "relative/home"]  # HOME set to what is not an absolute path


def _stranger() -> int:
    """Return a user id the password database has no entry for."""
    return next(uid for uid in range(4242, 5242) if not _known(uid))


def _known(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


@pytest.fixture
def homeless(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME")


@pytest.mark.parametrize("home", NOT_A_HOME)
def test_the_link_cache_needs_a_home_or_its_setting(homeless: None, monkeypatch: pytest.MonkeyPatch,
                                                    home: str) -> None:
    monkeypatch.setenv("HOME", home)
    for setting in ("", "~", "~/links"):
        with pytest.raises(ConfigError) as caught:
            LinksConfig(cache_dir=setting).cache_path()
        assert caught.value.detail.startswith("links.cache_dir: ") and "links.cache_dir" in (caught.value.hint or "")
    assert LinksConfig(cache_dir="/srv/links").cache_path() == Path("/srv/links")
    monkeypatch.setenv("XDG_CACHE_HOME", "/srv/cache")  # the home is not needed then
    assert LinksConfig().cache_path() == Path("/srv/cache/graphsite")


@pytest.mark.parametrize("home", NOT_A_HOME)
def test_settings_written_under_the_home_name_their_setting(homeless: None, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path, home: str) -> None:
    monkeypatch.setenv("HOME", home)
    monkeypatch.delenv("CLOUDFLARE_API_TOKEN", raising=False)
    config = Config().replace("dns", token_file="~/token")
    with pytest.raises(ConfigError, match=r"^dns\.token_file: '~/token'"):
        config.token()
    (tmp_path / "graphsite.toml").write_text('[links]\nca_bundle = "~/ca.pem"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"links\.ca_bundle: '~/ca\.pem'"):
        load_config(tmp_path / "graphsite.toml", environ={})


def test_build_and_links_with_no_home_at_all() -> None:
    """The whole command, run by a user with no home: no HOME and (as root) a user id with no password entry, else
    an empty HOME. The build writes its page with the embedded fonts (subset without a cache); `links` says what to
    set, then works once links.cache_dir is set."""
    work = Path(tempfile.mkdtemp())  # under /tmp, readable by the user below: not under tmp_path (0700)
    try:
        work.chmod(0o755)
        (work / "report.md").write_text(REPORT, encoding="utf-8")
        env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "NO_COLOR": "1"}
        user: list[str] = []
        if os.geteuid() == 0:
            stranger = _stranger()
            os.chown(work, stranger, stranger)
            user = ["setpriv", f"--reuid={stranger}", f"--regid={stranger}", "--clear-groups"]
        else:
            env["HOME"] = ""

        def graphsite(*args: str, **more: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*user, sys.executable, "-m", "graphsite", *args], capture_output=True, text=True,
                                  check=False, cwd=work, env={**env, **more})

        built = graphsite("build", "report.md", "--out", "site")
        assert built.returncode == 0, built.stderr
        assert "gs-" in (work / "site" / "index.html").read_text(encoding="utf-8")  # its embedded faces
        for setting in ({}, {"GRAPHSITE_LINKS_CACHE_DIR": "~/links"}):
            refused = graphsite("links", "report.md", "--offline", **setting)
            assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
            assert refused.stderr.startswith("Error: links.cache_dir: ") and "hint: set links.cache_dir" in \
                refused.stderr, refused.stderr
        checked = graphsite("links", "report.md", "--offline", GRAPHSITE_LINKS_CACHE_DIR=str(work / "links"))
        assert checked.returncode == 0 and "Traceback" not in checked.stderr, checked.stderr
        assert "https://example.org/" in checked.stdout + checked.stderr
    finally:
        shutil.rmtree(work)
