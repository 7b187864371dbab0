"""A command's words, declared once as values: the options and the argument a command takes, what each holds and
its help. `commands/options.py` makes click's parameters of them (for `--help`, usage errors and every command line
this module declines), and `read` reads a plain command line of them directly, without click.

Why: importing click is about a fifth of a small build's CPU time and of `graphsite links`' start-up before its
first request (issues 20 and 24), and `build` and `links` are the commands run most often and timed. The
executable (graphsite/entry.py) reads their command line here when it is plain, and hands every other one to click.

`read` answers only what click would answer the same way, and declines (returns None) everything else, so click
reads it and says what is wrong: help, an unknown or repeated option, a missing or empty value, a value starting
with `-`, `--`, a choice or a number click would refuse or read otherwise (`inf`, `+3`), a path click's checks
would refuse. tests/test_words.py holds the two side by side on generated command lines.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from graphsite.values import frozen

# The options of the `graphsite` group itself, read before the command's name (click's count of -v, and -q).
VERBOSE, QUIET = ("-v", "--verbose"), ("-q", "--quiet")


@frozen
class PathKind:
    """A path, checked as click.Path checks it (an existing path must be of an allowed kind and readable)."""

    file_okay: bool = True
    dir_okay: bool = True
    allow_dash: bool = False

    def convert(self, text: str) -> Path | None:
        if text == "-" and self.allow_dash and self.file_okay:
            return Path(text)
        try:
            mode = os.stat(text).st_mode
        except OSError:  # click takes a path it cannot stat as it is
            return Path(text)
        if (stat.S_ISREG(mode) and not self.file_okay) or (stat.S_ISDIR(mode) and not self.dir_okay):
            return None
        return Path(text) if os.access(text, os.R_OK) else None


@frozen
class TextKind:
    def convert(self, text: str) -> str | None:
        return text


@frozen
class ChoiceKind:
    choices: tuple[str, ...]

    def convert(self, text: str) -> str | None:
        return text if text in self.choices else None


@frozen
class PositiveKind:
    """A number of seconds above 0 (click.FloatRange(min=0, min_open=True)); only finite ones are read here."""

    def convert(self, text: str) -> float | None:
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) and number > 0 else None


@frozen
class CountKind:
    """A whole number of at least 1 (click.IntRange(min=1)); only up to 18 plain ASCII digits are read here (Python
    refuses to read a number of over 4,300 digits: click says so, as a usage error)."""

    def convert(self, text: str) -> int | None:
        if not (text.isascii() and text.isdigit() and len(text) <= 18) or int(text) < 1:
            return None
        return int(text)


Kind = PathKind | TextKind | ChoiceKind | PositiveKind | CountKind


@frozen
class Flag:
    """`--name`: True when given, else `default` (None tells "not given" apart from False)."""

    name: str
    dest: str
    help: str
    default: bool | None = False


@frozen
class Option:
    """`--name VALUE`."""

    name: str
    dest: str
    kind: Kind
    help: str
    default: object = None
    metavar: str | None = None
    show_default: bool = False


@frozen
class Argument:
    """The command's one optional argument."""

    dest: str
    kind: Kind


@frozen
class Command:
    """A command's name, its help (click shows it under Usage), its argument and options in the order `--help` lists
    them, and the function that does it (called with one keyword per dest)."""

    name: str
    help: str
    argument: Argument | None
    params: tuple[Flag | Option, ...]
    run: str  # "module:function", imported only when the command runs

    def param(self, name: str) -> Flag | Option | None:
        return next((param for param in self.params if param.name == name), None)


@frozen
class Line:
    """A command line read: the command, the verbosity of -v/-q, and the arguments of its function."""

    command: Command
    verbosity: int
    arguments: Mapping[str, object]


# The options several commands share.
JSON = Flag("--json", "as_json", "Print one JSON object on stdout, a failure included (error, hint, status).")
CONFIG = Option("--config", "config_path", PathKind(), "graphsite.toml to use.")
FONTS = ("embedded", "google", "system")


def fonts(help: str) -> Option:  # noqa: A002 (click's own name)
    return Option("--fonts", "fonts", ChoiceKind(FONTS), help, default="embedded", show_default=True)


def source(*, dir_okay: bool = True) -> Argument:
    """SOURCE, the report: a Markdown file, or `-` for standard input (default: the embedded report)."""
    return Argument("source", PathKind(allow_dash=True, dir_okay=dir_okay))


def read_line(words: Sequence[str], commands: Mapping[str, Command]) -> Line | None:
    """Read `graphsite [-v|-q]… COMMAND …` for one of `commands`, or return None for click to read."""
    verbose, quiet = 0, False
    for at, word in enumerate(words):
        if word in VERBOSE:
            verbose += 1
        elif word in QUIET:
            quiet = True
        elif word in commands:
            arguments = read(commands[word], words[at + 1:])
            return None if arguments is None else Line(commands[word], -1 if quiet else verbose, arguments)
        else:
            return None
    return None


def read(command: Command, words: Sequence[str]) -> dict[str, object] | None:
    """Return the arguments of `command`'s function that `words` give, as click would read them, or None."""
    given: dict[str, object] = {}
    position = 0
    while position < len(words):
        word = words[position]
        position += 1
        if word.startswith("-") and word != "-":
            name, equals, inline = word.partition("=")
            param = command.param(name)
            if param is None or param.dest in given:
                return None
            if isinstance(param, Flag):
                if equals:
                    return None
                given[param.dest] = True
                continue
            if not equals:
                if position == len(words):
                    return None
                inline, position = words[position], position + 1
            value = _value(param.kind, inline)
            if value is None:
                return None
            given[param.dest] = value
        elif command.argument is None or command.argument.dest in given:
            return None
        else:
            value = _value(command.argument.kind, word)
            if value is None:
                return None
            given[command.argument.dest] = value
    return _with_defaults(command, given)


def _value(kind: Kind, text: str) -> object | None:
    if not text or (text.startswith("-") and text != "-"):
        return None
    return kind.convert(text)


def _with_defaults(command: Command, given: dict[str, object]) -> dict[str, object] | None:
    """`given` with every parameter not given at its default, converted as click converts a default."""
    arguments: dict[str, object] = {}
    if command.argument is not None:
        arguments[command.argument.dest] = given.get(command.argument.dest)
    for param in command.params:
        if param.dest in given:
            arguments[param.dest] = given[param.dest]
        elif isinstance(param, Flag) or param.default is None:
            arguments[param.dest] = param.default
        else:
            default = param.kind.convert(str(param.default))
            if default is None:
                return None
            arguments[param.dest] = default
    return arguments
