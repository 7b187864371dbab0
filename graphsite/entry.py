"""The `graphsite` executable: `graphsite --version` is answered before click and the commands are imported
(a third of its start-up otherwise); everything else goes to the click group in graphsite.cli."""

from __future__ import annotations

import sys

VERSION_MESSAGE = "graphsite, version {}"  # what click's version_option prints for the group


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from graphsite import __version__

        print(VERSION_MESSAGE.format(__version__))
        return
    from graphsite.cli import main as cli

    cli()
