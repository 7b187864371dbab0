"""`graphsite diff OLD NEW` / `graphsite diff NAME [REPORT]`: what a new version changes, section by section."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option
from graphsite.config import load_config
from graphsite.usecases.diff import PAGE_SUFFIXES


@click.command("diff")
@click.argument("old")
@click.argument("new", required=False, type=click.Path(path_type=Path))
@json_option
@config_option
def diff_command(old: str, new: Path | None, as_json: bool, config_path: Path | None) -> None:
    """Say what NEW changes against OLD: sections added, removed or rewritten (with word counts), citations and
    references added or removed, front-matter fields changed. OLD and NEW are reports (Markdown) or pages that
    `build` wrote (.html). OLD may instead be a deployment NAME: then NEW (default: the report `build` uses) is
    compared with the page NAME serves at its public URL (a private one's password from $GRAPHSITE_PASSWORD)."""
    from graphsite.commands import present
    from graphsite.usecases import diff

    config = load_config(config_path)
    if Path(old).exists():
        if new is None:
            raise click.UsageError(f"{old} is a file: give the NEW report to compare it with")
        found = diff.between_files(Path(old), new, config)
    elif "/" in old or Path(old).suffix.lower() in (*PAGE_SUFFIXES, ".md", ".markdown"):
        raise click.BadParameter(f"no such file {old!r} (a deployment's NAME has no '/' and no file suffix)",
                                 param_hint="OLD")
    else:
        new = new or _default_source()
        found = diff.against_live(old, new, config)
    present.diff(found, old, str(new), as_json)


def _default_source() -> Path:
    from graphsite.paths import default_source

    return default_source()
