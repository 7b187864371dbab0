"""Every `graphsite` command in the README is run, so the README cannot drift from the CLI: each one parses
(its subcommand, options, choices and arguments exist), the offline ones run in a scratch directory, and the
deployment cycle runs on the lab in the README's order. Only four are parsed and not run, each for its reason."""

from __future__ import annotations

import re
import secrets
import shlex
import warnings
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from graphsite.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"
EXAMPLE_NAME = "graph-eng-1a2b3c"  # the README's example deployment name, replaced by the one deployed
OFFLINE = {"new", "build", "config"}
LAB = {"deploy", "verify", "list", "history", "teardown", "gc", "doctor"}
PARSED_ONLY = {
    "links": "checks every outbound link over the internet, which tests may not reach",
    "serve": "serves until stopped; tests/ops/test_serve.py runs it in Chromium",
    "diff": "names example files; tests/builder/test_compare.py runs it on pairs, tests/publisher/"
            "test_lab_ci_preview.py on a live page",
    "rollback": "needs a name with two versions and names an example sha; tests/publisher/test_lab_versions.py runs "
                "it under constant requests",
}


def readme_commands() -> list[tuple[dict[str, str], list[str]]]:
    """Return (environment, argv after `graphsite`) of every graphsite command in the README's sh blocks."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    commands = []
    for line in (line for block in blocks for line in block.splitlines()):
        words = shlex.split(line, comments=True)
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        if words and words[0].endswith("graphsite") and (words[0] == "graphsite" or words[0].endswith("/graphsite")):
            commands.append((env, words[1:]))
    return commands


def parse(argv: list[str]) -> tuple[int, dict[str, object]]:
    """Parse `graphsite ARGV` as click would, down to the leaf command, without running it; return the verbosity
    of -v/-q and the leaf's parameters."""
    with warnings.catch_warnings():  # click 8.2 deprecates protected_args; click 9 moves them into args
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = main.make_context("graphsite", list(argv))
        verbosity = -1 if ctx.params["quiet"] else ctx.params["verbose"]
        command: click.Command = main
        args = ctx.protected_args + ctx.args
        while isinstance(command, click.Group) and args:
            name, *rest = args
            sub = command.get_command(ctx, name)
            assert sub is not None, f"graphsite {' '.join(argv)}: no command {name!r}"
            ctx = sub.make_context(name, rest, parent=ctx)
            command, args = sub, (ctx.protected_args + ctx.args if isinstance(sub, click.Group) else [])
    assert not ctx.args, f"graphsite {' '.join(argv)}: unexpected {ctx.args}"
    return verbosity, dict(ctx.params)


def test_the_readme_has_commands_and_each_is_classified():
    commands = readme_commands()
    assert len(commands) >= 10
    for _, argv in commands:
        assert argv[0] in OFFLINE | LAB | set(PARSED_ONLY), f"classify `graphsite {' '.join(argv)}` in this test"


@pytest.mark.parametrize("argv", [argv for _, argv in readme_commands()], ids=" ".join)
def test_every_readme_command_parses(argv):
    """… and a `build` or `links` line the executable reads without click (graphsite/commands/words.py) gives the
    command what click gives it."""
    from graphsite.commands import build, links, words

    read = parse(argv)
    line = words.read_line(argv, {"build": build.COMMAND, "links": links.COMMAND})
    if line is not None:
        assert (line.verbosity, dict(line.arguments)) == read


@pytest.mark.parametrize("argv", [["biuld"], ["build", "--nope"], ["build", "--fonts", "comic"], ["verify"],
                                  ["config", "shwo"]])
def test_a_drifted_command_does_not_parse(argv):
    with pytest.raises((click.UsageError, AssertionError)):
        parse(argv)


def run(argv: list[str], env: dict[str, str | None]):
    result = CliRunner().invoke(main, argv, env={"NO_COLOR": "1", **env}, catch_exceptions=False)
    assert result.exit_code == 0, f"graphsite {' '.join(argv)}:\n{result.output}"
    return result


def test_the_offline_commands_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ran = []
    # `new` first: it writes the report.md that the README's `build report.md` reads
    for env, argv in sorted(readme_commands(), key=lambda command: command[1][0] != "new"):
        if argv[0] in OFFLINE:
            run(argv, {"GRAPHSITE_CONFIG": None, "CLOUDFLARE_API_TOKEN": None, **env})
            ran.append(argv[0])
    assert {"new", "build", "config"} <= set(ran)
    assert (tmp_path / "public" / "index.html").is_file() and (tmp_path / "site" / "index.html").is_file()


@pytest.mark.lab
def test_the_deployment_cycle_runs_on_the_lab(lab):
    """deploy → verify → list → history → teardown → gc → doctor, as the README writes them, against the lab."""
    prefix = f"gsops{secrets.token_hex(2)}"
    base: dict[str, str | None] = {"GRAPHSITE_CONFIG": str(lab.config_path), "GRAPHSITE_SITE_PREFIX": prefix,
                                   "CLOUDFLARE_API_TOKEN": None}
    name = ""
    deployed = False
    try:
        for _env, argv in readme_commands():  # the README's GRAPHSITE_CONFIG names the default lab, not this one
            if argv[0] not in LAB:
                continue
            if argv[0] == "deploy":
                if deployed:
                    parse(argv)  # one deploy is enough: the rehearsal line differs only by fewer flags
                    continue
                url = run(argv, base).stdout.strip().splitlines()[-1]
                name, deployed = url.split("//", 1)[1].split(".", 1)[0], True
                assert name.startswith(prefix + "-")
                continue
            argv = [name if word == EXAMPLE_NAME else word for word in argv]
            if argv == ["gc"]:  # on a shared swarm a real gc would take other sessions' expired pages too
                argv = ["gc", "--dry-run"]
            output = run(argv, base).output
            if argv[0] in ("list", "history"):
                assert name in output
    finally:
        if name:
            CliRunner().invoke(main, ["teardown", name], env=base)
    assert deployed and name
