"""The `graphsite` executable: `graphsite --version` is answered before click and the commands are imported
(a third of its start-up otherwise); everything else goes to the click group in graphsite.cli."""

from __future__ import annotations

import gc
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
    from graphsite.cli import main as cli

    cli()
