"""click's parameters of the words declared in commands/words.py: the options several commands share (--json,
--config, the report argument), and whole commands declared there (`build`, `links`), so `--help`, usage errors
and every command line the direct reader declines come from the same declaration."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from graphsite.commands import words

F = TypeVar("F", bound=Callable[..., object])


def click_type(kind: words.Kind) -> click.ParamType[Any]:
    """The click type that reads what `kind` reads (and refuses, with click's message, what it declines)."""
    if isinstance(kind, words.PathKind):
        return click.Path(path_type=Path, file_okay=kind.file_okay, dir_okay=kind.dir_okay, allow_dash=kind.allow_dash)
    if isinstance(kind, words.ChoiceKind):
        return click.Choice(kind.choices)
    if isinstance(kind, words.PositiveKind):
        return click.FloatRange(min=0, min_open=True)
    if isinstance(kind, words.CountKind):
        return click.IntRange(min=1)
    return click.STRING


def _declared(param: words.Flag | words.Option | words.Argument) -> tuple[list[str], dict[str, Any]]:
    """The declarations and attributes of click's parameter for `param`."""
    if isinstance(param, words.Argument):
        return [param.dest], {"required": False, "type": click_type(param.kind)}
    if isinstance(param, words.Flag):
        return [param.name, param.dest], {"is_flag": True, "default": param.default, "help": param.help}
    return [param.name, param.dest], {"type": click_type(param.kind), "default": param.default,
                                      "metavar": param.metavar, "show_default": param.show_default,
                                      "help": param.help}


def click_param(param: words.Flag | words.Option | words.Argument) -> click.Parameter:
    declarations, attributes = _declared(param)
    kind = click.Argument if isinstance(param, words.Argument) else click.Option
    return kind(declarations, **attributes)


def click_command(command: words.Command) -> click.Command:
    """`command` as a click command: its parameters, its help, and its function, imported when it runs."""
    module, _, name = command.run.partition(":")

    def run(**arguments: Any) -> object:
        return getattr(importlib.import_module(module), name)(**arguments)

    params = ([click_param(command.argument)] if command.argument else []) + [click_param(p) for p in command.params]
    return click.Command(command.name, callback=run, params=params, help=command.help)


def _decorator(param: words.Flag | words.Option | words.Argument) -> Callable[[F], F]:
    declarations, attributes = _declared(param)
    if isinstance(param, words.Argument):
        return click.argument(*declarations, **attributes)
    return click.option(*declarations, **attributes)


json_option: Callable[[F], F] = _decorator(words.JSON)
config_option: Callable[[F], F] = _decorator(words.CONFIG)


def fonts_option(help: str) -> Callable[[F], F]:  # noqa: A002 (click's own name)
    return _decorator(words.fonts(help))


def source_argument(*, dir_okay: bool = True) -> Callable[[F], F]:
    """SOURCE, the report: a Markdown file, or `-` for standard input (default: the embedded report)."""
    return _decorator(words.source(dir_okay=dir_okay))
