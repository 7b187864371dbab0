"""The console reporter (publisher/ports.py's Reporter) that the commands give the use cases: progress on
stderr through graphsite.output, which honours -v, -q and NO_COLOR."""

from __future__ import annotations

from contextlib import AbstractContextManager

from graphsite import output


class Console:
    """Progress for the person at the keyboard, on stderr."""

    def step(self, label: str) -> AbstractContextManager[None]:
        return output.step(label)

    def info(self, message: str) -> None:
        output.info(message)

    def warn(self, message: str) -> None:
        output.warn(message)
