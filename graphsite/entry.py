"""The `graphsite` executable: `graphsite --version` is answered before click and the commands are imported
(a third of its start-up otherwise); everything else goes to the click group in graphsite.cli."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from graphsite import VERSION_MESSAGE, __version__

        print(VERSION_MESSAGE.format(__version__))
        return
    from graphsite.cli import main as cli

    cli()
