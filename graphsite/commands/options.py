"""The options several commands share, declared once: --json, --config, --fonts and the report argument."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

json_option: Callable[[F], F] = click.option(
    "--json", "as_json", is_flag=True,
    help="Print one JSON object on stdout, a failure included (error, hint, status).")
config_option: Callable[[F], F] = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
FONTS = ("embedded", "google", "system")


def fonts_option(help: str) -> Callable[[F], F]:  # noqa: A002 (click's own name)
    return click.option("--fonts", type=click.Choice(FONTS), default="embedded", show_default=True, help=help)


def source_argument(*, dir_okay: bool = True) -> Callable[[F], F]:
    """SOURCE, the report: a Markdown file, or `-` for standard input (default: the embedded report)."""
    return click.argument("source", required=False,
                          type=click.Path(path_type=Path, allow_dash=True, dir_okay=dir_okay))
