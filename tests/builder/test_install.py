"""A non-editable install (`uv pip install .` into a fresh venv, as `make` installs) run from another folder
finds its theme and its embedded report: the wheel carries theme/ and content/ under graphsite/_data (deploy/
documents the defaults, which live in config.py; the lab is not in the wheel)."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.pypi
def test_fresh_non_editable_install_builds_the_embedded_report(tmp_path):
    """A venv of its own, graphsite installed into it from the checkout as a wheel (built in isolation, its
    dependencies resolved from the index), run from a directory that is not the checkout. The installer is the
    uv that `make` installs (README): it resolves the same pyproject, in seconds where pip took half a minute."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    uv = Path(sys.executable).parent / "uv"
    assert uv.is_file(), f"{uv} is missing: `make install-dev` installs it"
    subprocess.run([str(uv), "pip", "install", "--quiet", "--python", str(python), str(REPO)],
                   check=True, capture_output=True, text=True, cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = ("import graphsite.paths as p, json, importlib.util as u; "
             "print(json.dumps([p.__file__, str(p.theme_dir()), str(p.default_source()), "
             "u.find_spec('graphsite_lab') is None]))")
    where = subprocess.run([str(python), "-c", probe],
                           check=True, capture_output=True, text=True, cwd=elsewhere)
    module, theme, source, no_lab = json.loads(where.stdout)
    assert no_lab, "the lab is for checkouts: the production wheel must not carry graphsite_lab"
    site_packages = str(env_dir)
    assert module.startswith(site_packages), "graphsite must come from the fresh venv, not the checkout"
    assert theme.startswith(site_packages) and "/_data/theme" in theme
    assert source.startswith(site_packages) and source.endswith("_data/content/graph-engineering.md")
    result = subprocess.run([str(env_dir / "bin" / "graphsite"), "build", "--json"], capture_output=True,
                            text=True, cwd=elsewhere, check=False)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    page = elsewhere / "site" / "index.html"
    assert summary["output"] == "site/index.html" and page.is_file()
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    assert soup.title.string.startswith("Graph Engineering")
    assert len(soup.select("#cards article")) == 5 and soup.find("style").string.strip()
