"""The `graphsite` executable: `graphsite --version` is answered before click and the commands are imported
(a third of its start-up otherwise); a plain command line of `build` or `links` is read by commands/words.py and run
without click (a fifth of a small build's time); everything else goes to the click group in graphsite.cli, which
reads the same declarations.

A command that leaves nothing to the interpreter's own shutdown (every file it wrote closed, no thread running)
may call `output.end_without_teardown()`: once it is done, the exit handlers run, the output is flushed, and the
process ends there, without freeing every module and object one by one. That teardown is 40 ms of CPU after a
`graphsite links` run whose work took 0.2 s (benchmarks/links_vs_peers.py), paid again on every run.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphsite.commands import words

# Young objects between two collections of the cyclic garbage collector (CPython's default is 700). Start-up
# imports make tens of thousands of objects that live as long as the process (modules, classes, functions,
# compiled expressions), and rescanning them every 700 allocations was 6 to 12 ms of the 0.15 s `graphsite links`
# spends before its first request (benchmarks/links_vs_peers.py). Cycles are still collected, later.
START_UP_GC_THRESHOLD = (20_000, 50, 100)
# The commands whose plain command lines are read without click: their module and its words.Command, COMMAND.
DIRECT = {"build": "graphsite.commands.build", "links": "graphsite.commands.links"}


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from graphsite import VERSION_MESSAGE, __version__

        print(VERSION_MESSAGE.format(__version__))
        return
    gc.set_threshold(*START_UP_GC_THRESHOLD)
    from graphsite import output

    line = _plain_line(sys.argv[1:])
    try:
        if line is None:
            from graphsite.cli import main as cli

            cli()
        else:
            _run(line)
    except SystemExit as done:
        if not output.ends_without_teardown():
            raise
        _end_now(done.code)


def _plain_line(args: list[str]) -> words.Line | None:
    """Read a plain command line of one of DIRECT's commands, or return None for click to read it (any other
    command, help, anything unusual; and when a shell asks click to complete a word)."""
    if not any(word in DIRECT for word in args) or any(
            name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return None
    from graphsite.commands import words

    commands = {name: importlib.import_module(module).COMMAND for name, module in DIRECT.items()
                if name in args}
    return words.read_line(args, commands)


def _run(line: words.Line) -> None:
    """Run a command line read without click as the click group runs it (graphsite/cli.py): the same output
    settings, and its end decided by the same `present.run`."""
    from graphsite import output
    from graphsite.commands import present  # every command imports it as it starts: no start-up cost of its own

    output.configure(verbosity=line.verbosity)
    module, _, name = line.command.run.partition(":")
    sys.exit(present.run(lambda: getattr(importlib.import_module(module), name)(**line.arguments),
                         as_json=bool(line.arguments.get("as_json"))))


def _end_now(code: object) -> None:
    """End the process with the status `sys.exit(code)` would give, after the exit handlers and a flush."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        # a closed pipe (`graphsite links | head`): nothing more can reach it
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code or 0)
