"""SIGINT, SIGTERM and SIGHUP stop a run the same way: the first one raises `Interrupted` where the run is, so
that its undo runs once; a second one, during the undo, leaves at once after saying what is left.

`Interrupted` is a KeyboardInterrupt: libraries that catch `Exception` to retry or wrap (the Cloudflare SDK does)
let it through.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeAlias

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop by a signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.outcome = ""  # what the interrupted run did about its work: undone, kept, live

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        from graphsite.codes import stopped_by

        return stopped_by(self.signum)


# What signal.signal takes and gives back: a function, SIG_DFL or SIG_IGN, or None (a handler not set from Python).
_Handler: TypeAlias = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


def _install(handler: Callable[[int, object], None]) -> dict[int, _Handler]:
    if threading.current_thread() is not threading.main_thread():
        return {}  # signal handlers can only be set from the main thread (an in-process test runner's worker)
    return {signum: signal.signal(signum, handler) for signum in SIGNALS}


def _restore(previous: dict[int, _Handler]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


# Signals that came after the first one but before the undo installed its own handler (while the first one's
# exception was still unwinding): the undo takes them over, as if they had come during it.
_deferred: list[int] = []


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, the first of SIGINT, SIGTERM and SIGHUP raises Interrupted; a later one is kept for
    `last_chance` (raising it too would skip the undo the first one started)."""
    _deferred.clear()
    fired: list[int] = []

    def first(signum: int, _frame: object) -> None:
        if fired:
            _deferred.append(signum)
            return
        fired.append(signum)
        raise Interrupted(signum)

    previous = _install(first)
    try:
        yield
    finally:
        _restore(previous)


@contextmanager
def last_chance(what_is_left: Callable[[], str]) -> Iterator[None]:
    """Within the block (an undo), a signal ends the process at once, after printing `what_is_left()`."""

    def second(signum: int, _frame: object) -> None:
        try:
            message = what_is_left()
        except Exception as exc:  # the message must not stop the exit
            message = f"(could not say what is left: {type(exc).__name__})"
        sys.stderr.write(f"\nstopped by a second {signal.Signals(signum).name} during the undo: {message}\n")
        sys.stderr.flush()
        os._exit(128 + signum)

    previous = _install(second)
    try:
        if _deferred:  # a second signal came before this handler was in place
            second(_deferred.pop(), None)
        yield
    finally:
        _restore(previous)
