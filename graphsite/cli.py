"""The `graphsite` command: a click group whose subcommands are imported only when invoked,
so `graphsite build` never pays for docker, cloudflare or httpx imports."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

import click

from graphsite import VERSION_MESSAGE, __version__
from graphsite.codes import Exit
from graphsite.commands import words
from graphsite.commands.options import click_command

_AS_JSON = "graphsite.as_json"  # ctx.meta: whether the command line asks for --json, as _wants_json reads it
# command name -> "module:attribute" of a click.Command, or of a words.Command (commands/words.py)
COMMANDS = {
    "build": "graphsite.commands.build:COMMAND",
    "links": "graphsite.commands.links:COMMAND",
    "deploy": "graphsite.commands.deploy:deploy_command",
    "verify": "graphsite.commands.verify:verify_command",
    "teardown": "graphsite.commands.teardown:teardown_command",
    "diff": "graphsite.commands.diff:diff_command",
    "history": "graphsite.commands.history:history_command",
    "rollback": "graphsite.commands.rollback:rollback_command",
    "list": "graphsite.commands.listing:list_command",
    "gc": "graphsite.commands.gc:gc_command",
    "doctor": "graphsite.commands.doctor:doctor_command",
    "serve": "graphsite.commands.serve:serve_command",
    "new": "graphsite.commands.new:new_command",
    "config": "graphsite.commands.config:config_group",
}

HELP = {
    "build": "Render a Markdown report into one self-contained index.html.",
    "links": "Check every outbound link of a report over the network.",
    "deploy": "Publish the page on Swarm + Traefik + Cloudflare, then verify it.",
    "verify": "Prove a deployment is live: service, origin, public URL, TLS, redirect, DNS, route.",
    "teardown": "Remove everything a deployment made and prove nothing is left.",
    "diff": "Say what a new version of a report changes, section by section, against an old one or the live page.",
    "history": "List the versions a deployment keeps, the live one marked, each with its own URL.",
    "rollback": "Make a kept version live again without downtime, then verify it.",
    "list": "List deployments (or the one NAME) as the systems themselves record them.",
    "gc": "Tear down every expired deployment.",
    "doctor": "Check every precondition of a deploy, read-only: Docker, Traefik, Cloudflare, DNS, TLS.",
    "serve": "Preview a report on 127.0.0.1, rebuilt and reloaded on every change.",
    "new": "Write a starter report that builds cleanly with --strict.",
    "config": "Show the effective configuration and each value's source; the JSON Schema of graphsite.toml.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._available(name)]

    @staticmethod
    def _available(name: str) -> bool:
        module = COMMANDS[name].partition(":")[0]
        return importlib.util.find_spec(module) is not None

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        as_json = _wants_json(args)  # before click parses `args` (it takes the words out of the list)
        ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta[_AS_JSON] = as_json
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command as graphsite/entry.py runs the lines it reads: its failure, an interrupt and a reader
        that left become its status in `present.run`, before click's own handling (Abort) sees them."""
        from graphsite.commands import present

        return present.run(lambda: super(LazyGroup, self).invoke(ctx), as_json=ctx.meta[_AS_JSON])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None or not self._available(name):
            return None
        module_name, _, attribute = target.partition(":")
        command: click.Command | words.Command = getattr(importlib.import_module(module_name), attribute)
        return click_command(command) if isinstance(command, words.Command) else command

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        """Run the command; every failure, a usage error included, is shown by `present` (one JSON object on stdout
        with --json) and ends with its status of `codes.Exit`: the command's own in `invoke`, click's here."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        from graphsite import output

        args = list(sys.argv[1:] if args is None else args)
        output.configure()
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            from graphsite.commands.present import unless_reader_left

            status = unless_reader_left(functools.partial(_show_click_failure, error, _wants_json(args)))
        except (click.Abort, KeyboardInterrupt, EOFError) as error:
            from graphsite.commands.present import failure, unless_reader_left

            # Ctrl-C or the end of input while click read the line, outside `invoke`: click wrote the blank line and
            # raised Abort from the KeyboardInterrupt or EOFError (a signals.Interrupted names its signal). One during
            # that blank line click's outer `try` re-raises as is when not standalone; one during its shell
            # completion, which runs before both of its `try` blocks, passes through in any mode (click 8.5's
            # Command.main). Both are caught here.
            cause = error.__cause__ if isinstance(error, click.Abort) else error
            interrupt = cause if isinstance(cause, KeyboardInterrupt | EOFError) else KeyboardInterrupt()
            status = unless_reader_left(lambda: failure(interrupt, as_json=_wants_json(args)))
        sys.exit(status if isinstance(status, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, HELP[name]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="graphsite", message=VERSION_MESSAGE.format("%(version)s"))
@click.option("-v", "--verbose", count=True, help="More progress on stderr.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
@click.pass_context
def main(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """graphsite: a decision-ready Markdown report as one dark page, published and proven live."""
    from graphsite import output

    output.configure(verbosity=-1 if quiet else verbose)


def _wants_json(args: list[str]) -> bool:
    """Return whether the command line asks for --json: read from the words, since a usage error stops click
    before it has parsed them (words after `--` are arguments, not options)."""
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def _show_click_failure(error: click.ClickException, as_json: bool) -> int:
    """Show click's own error (a usage error) as `present` shows a failure; return its exit status."""
    from graphsite.commands.present import failure_shown

    error.show()
    return failure_shown(*_click_failure(error), as_json=as_json)


def _click_failure(error: click.ClickException) -> tuple[int, dict[str, Any]]:
    """Return the exit status of one of click's errors and the fields that describe it: error, hint, status (and
    usage)."""
    if isinstance(error, click.UsageError):
        ctx = error.ctx
        hint = f"`{ctx.command_path} --help` lists what it takes" if ctx is not None else None
        return Exit.USAGE, {"error": error.format_message(), "hint": hint, "status": int(Exit.USAGE),
                            "usage": ctx.get_usage() if ctx is not None else None}
    # e.g. a --password-file that cannot be opened
    return error.exit_code, {"error": error.format_message(), "hint": None, "status": error.exit_code}
