"""The `graphsite` executable: `graphsite --version` is answered before click and the commands are imported
(a third of its start-up otherwise); everything else goes to the click group in graphsite.cli.

A command that leaves nothing to the interpreter's own shutdown (every file it wrote closed, no thread running)
may call `output.end_without_teardown()`: once it is done, the exit handlers run, the output is flushed, and the
process ends there, without freeing every module and object one by one. That teardown is 40 ms of CPU after a
`graphsite links` run whose work took 0.2 s (benchmarks/links_vs_peers.py), paid again on every run.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys

# Young objects between two collections of the cyclic garbage collector (CPython's default is 700). Start-up
# imports make tens of thousands of objects that live as long as the process (modules, classes, functions,
# compiled expressions), and rescanning them every 700 allocations was 6 to 12 ms of the 0.15 s `graphsite links`
# spends before its first request (benchmarks/links_vs_peers.py). Cycles are still collected, later.
START_UP_GC_THRESHOLD = (20_000, 50, 100)


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from graphsite import VERSION_MESSAGE, __version__

        print(VERSION_MESSAGE.format(__version__))
        return
    gc.set_threshold(*START_UP_GC_THRESHOLD)
    from graphsite import output
    from graphsite.cli import main as cli

    try:
        cli()
    except SystemExit as done:
        if not output.ends_without_teardown():
            raise
        _end_now(done.code)


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
