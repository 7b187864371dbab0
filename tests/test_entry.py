"""`graphsite --version` answers without importing click, and says what the click group says; `graphsite links`
ends without the interpreter's teardown, with its whole output and its exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from graphsite.cli import main


def test_version_is_answered_before_click_is_imported() -> None:
    probe = ("import sys; sys.argv = ['graphsite', '--version']; from graphsite.entry import main; main(); "
             "print('click' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    version, imported = result.stdout.splitlines()
    assert imported == "False"
    assert version == CliRunner().invoke(main, ["--version"]).output.strip()


def test_everything_else_goes_to_the_commands() -> None:
    probe = "import sys; sys.argv = ['graphsite', '--help']; from graphsite.entry import main; main()"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "build" in result.stdout and "deploy" in result.stdout


def _links(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphsite", "links", *args], capture_output=True, text=True,
                          timeout=120)


def test_links_ends_early_with_its_whole_output_and_status(tmp_path: Path) -> None:
    # Enough rows that the JSON is far over a pipe's buffer: all of it must be flushed before the process ends.
    report = tmp_path / "r.md"
    report.write_text("# R\n\n## 1. Links\n\n" + "".join(f"- [{i}](./missing-{i}.md)\n" for i in range(400)))
    config = tmp_path / "graphsite.toml"
    cache = f"cache_dir = {json.dumps(str(tmp_path / 'cache'))}\n"
    config.write_text("[links]\n" + cache)
    result = _links(str(report), "--json", "--offline", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["links"]) == 400

    config.write_text("[links]\n" + cache + "fail_on = [\"local\"]\n")
    result = _links(str(report), "--offline", "--config", str(config))
    assert result.returncode == 1, result.stderr  # a link in a state of links.fail_on
    assert "./missing-399.md (line 404" in result.stdout and "Checked 400 links" in result.stdout

    config.write_text("[links]\nno_such_key = 1\n")
    result = _links(str(report), "--config", str(config))
    assert result.returncode == 2, result.stdout  # a configuration error: a usage error, its message on stderr
    assert "no_such_key" in result.stderr
