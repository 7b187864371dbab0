"""`graphsite new PATH`: write a starter report that builds with `--strict` and no warning; never overwrite."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import click

from graphsite.atomic import fsync_directory
from graphsite.commands.options import json_option
from graphsite.errors import GraphsiteError

STARTER = Path(__file__).resolve().parents[1] / "starter.md"


def starter_text(path: Path) -> str:
    """Return the starter report, its comments naming `path`."""
    return STARTER.read_text(encoding="utf-8").replace("THIS_FILE", str(path))


def create_new(path: Path, text: str) -> None:
    """Write `text` to `path` whole, or not at all; raise GraphsiteError when `path` exists (even if it appears
    meanwhile: the file is linked into place, which fails rather than replaces)."""
    if path.exists() or path.is_symlink():
        raise GraphsiteError(f"{path}: already exists; graphsite new never overwrites",
                             hint="choose another PATH, or remove the file first")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise GraphsiteError(f"{path}: cannot write the starter report: {exc.strerror or exc}",
                             hint="choose a PATH in a writable directory") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), 0o644)
            os.fsync(handle.fileno())
        os.link(temporary, path)
    except FileExistsError:
        raise GraphsiteError(f"{path}: already exists; graphsite new never overwrites",
                             hint="choose another PATH, or remove the file first") from None
    except OSError as exc:
        raise GraphsiteError(f"{path}: cannot write the starter report: {exc.strerror or exc}",
                             hint="choose a writable PATH") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    fsync_directory(path.parent)


@click.command("new")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@json_option
def new_command(path: Path, as_json: bool) -> None:
    """Write a starter report to PATH: every front-matter field explained, a cited section, a reference list."""
    from graphsite.commands import present

    create_new(path, starter_text(path))
    present.new(path, as_json)
