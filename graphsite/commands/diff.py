"""`graphsite diff OLD NEW` / `graphsite diff NAME [REPORT]`: what a new version changes, section by section."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from graphsite.config import PASSWORD_ENV, load_config

if TYPE_CHECKING:
    from graphsite.builder.compare import Changes
    from graphsite.builder.outline import Outline
    from graphsite.config import Config

PAGE_SUFFIXES = (".html", ".htm")


@click.command("diff")
@click.argument("old")
@click.argument("new", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def diff_command(old: str, new: Path | None, as_json: bool, config_path: Path | None) -> None:
    """Say what NEW changes against OLD: sections added, removed or rewritten (with word counts), citations and
    references added or removed, front-matter fields changed. OLD and NEW are reports (Markdown) or pages that
    `build` wrote (.html). OLD may instead be a deployment NAME: then NEW (default: the report `build` uses) is
    compared with the page NAME serves at its public URL (a private one's password from $GRAPHSITE_PASSWORD)."""
    from graphsite.builder.compare import compare

    config = load_config(config_path)
    if Path(old).exists():
        if new is None:
            raise click.UsageError(f"{old} is a file: give the NEW report to compare it with")
        before = _outline(Path(old), config)
    elif "/" in old or Path(old).suffix.lower() in (*PAGE_SUFFIXES, ".md", ".markdown"):
        raise click.BadParameter(f"no such file {old!r} (a deployment's NAME has no '/' and no file suffix)",
                                 param_hint="OLD")
    else:
        before = _live(old, config)
        new = new or _default_source()
    _show(compare(before, _outline(new, config)), old, str(new), as_json)


def _default_source() -> Path:
    from graphsite.paths import default_source

    return default_source()


def _outline(path: Path, config: Config) -> Outline:
    """The outline of a built page (.html), else of the page the Markdown at `path` builds into."""
    from graphsite.builder.build import build_page
    from graphsite.builder.outline import read_outline
    from graphsite.errors import BuildError

    if path.suffix.lower() in PAGE_SUFFIXES:
        try:
            return read_outline(path.read_text(encoding="utf-8"), where=str(path))
        except (OSError, UnicodeDecodeError) as exc:
            raise BuildError(f"{path}: cannot read the page: {getattr(exc, 'strerror', None) or exc}") from None
    # fonts do not change what the page says: "system" skips subsetting them
    page = build_page(path, fonts="system", max_bytes=config.build.max_bytes)
    return read_outline(page.html, where=str(path))


def _live(name: str, config: Config) -> Outline:
    """The outline of the page deployment NAME serves to its readers."""
    from graphsite.builder.outline import read_outline
    from graphsite.labels import subdomain_of
    from graphsite.publisher.access import USER
    from graphsite.publisher.clients import site
    from graphsite.publisher.served import served_page

    config = site(config)
    subdomain = subdomain_of(name, config.site.domain)
    password = os.environ.get(PASSWORD_ENV, "")
    fqdn = f"{subdomain}.{config.site.domain}"
    html = served_page(config, fqdn, (USER, password) if password else None)
    return read_outline(html, where=f"the page https://{fqdn}/ serves")


def _show(found: Changes, old: str, new: str, as_json: bool) -> None:
    """One line per change on stdout (a heading on stderr), or one JSON object with --json."""
    from graphsite import output

    if as_json:
        output.emit_json({"old_source": old, "new_source": new, **found.as_json()})
    elif not found.changed:
        output.result(f"No changes from {old} to {new}: the same sections, words, citations, references and "
                      "front matter")
    else:
        output.info(f"Changes from {old} ({found.old.words} words) to {new} ({found.new.words} words):")
        for line in found.lines():
            output.result(line)
