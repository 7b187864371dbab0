"""Human output: progress and summaries on stderr, results on stdout. Respects NO_COLOR, -v and -q."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_verbosity = 0
_emitted = False  # a JSON object is on stdout: a command prints one, and a failure after it prints no other
_without_teardown = False  # the command lets the process end without the interpreter's teardown (graphsite/entry.py)


def configure(verbosity: int = 0) -> None:
    """Start a command's output: the verbosity of -v (1 and more) and -q (-1); nothing printed yet."""
    global _verbosity, _emitted, _without_teardown
    _verbosity, _emitted, _without_teardown = verbosity, False, False


def end_without_teardown() -> None:
    """Let the process end as soon as the running command is done, without the interpreter's teardown (only for a
    command that leaves nothing to it: every file it wrote closed, no thread running; see graphsite/entry.py)."""
    global _without_teardown
    _without_teardown = True


def ends_without_teardown() -> bool:
    return _without_teardown


def verbosity() -> int:
    return _verbosity


def emitted() -> bool:
    """Return whether this command printed its JSON object already."""
    return _emitted


def colour_on(stream: TextIO) -> bool:
    """Return whether text written to `stream` may be coloured: a terminal, and NO_COLOR not set."""
    return not os.environ.get("NO_COLOR") and stream.isatty()


def _color(text: str, code: str) -> str:
    if not colour_on(sys.stderr):
        return text
    return f"\033[{code}m{text}\033[0m"


def shown(text: str) -> str:
    """Return `text` (read from a label, a marker or a file name anyone who can write there chose) as a terminal
    may show it: as it is when every character is printable, else quoted with its control characters, escape
    sequences and undecodable bytes (surrogates) escaped, as a title is."""
    return text if text.isprintable() else repr(text)


def info(message: str) -> None:
    """Progress for the person at the keyboard (stderr)."""
    if _verbosity >= 0:
        print(message, file=sys.stderr, flush=True)


def detail(message: str) -> None:
    """Extra progress shown with -v (stderr)."""
    if _verbosity >= 1:
        print(message, file=sys.stderr, flush=True)


def warn(message: str) -> None:
    """A warning for the person at the keyboard (stderr)."""
    if _verbosity >= 0:
        print(_color("warning: ", "33") + message, file=sys.stderr, flush=True)


def secret(message: str) -> None:
    """A secret the user asked to see once (a private report's password): stderr, whatever -q says."""
    print(message, file=sys.stderr, flush=True)


def result(text: str) -> None:
    """A result line on stdout (the URL, a path)."""
    print(text, flush=True)


def emit_json(data: Any) -> None:
    """One JSON object on stdout."""
    import json  # only --json needs it

    global _emitted
    _emitted = True
    print(json.dumps(data, indent=2, sort_keys=True, default=str), flush=True)


@contextmanager
def step(label: str) -> Iterator[None]:
    """Print `label … done (0.12 s)` on stderr around a block."""
    start = time.perf_counter()
    try:
        yield
    except BaseException:
        info(f"  {label} … failed ({time.perf_counter() - start:.2f} s)")
        raise
    info(f"  {label} … {_color('done', '32')} ({time.perf_counter() - start:.2f} s)")
