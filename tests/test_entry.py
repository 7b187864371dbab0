"""`graphsite --version` answers without importing click, and says what the click group says."""

from __future__ import annotations

import subprocess
import sys

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
