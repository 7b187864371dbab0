"""`graphsite verify NAME`: the seven checks of a deployment; exit 1 on any FAIL."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

import click

from graphsite.commands.options import config_option, json_option
from graphsite.config import PASSWORD_ENV, load_config


@click.command("verify")
@click.argument("name")
@click.option("--user", help="The user of a private page (default: the one deploy makes, reader).")
@click.option("--password-file", type=click.File("r", encoding="utf-8"),
              help=f"Read a private page's password from the first line of FILE ('-': stdin); else ${PASSWORD_ENV}.")
@json_option
@config_option
def verify_command(name: str, user: str | None, password_file: TextIO | None, as_json: bool,
                   config_path: Path | None) -> None:
    """Prove deployment NAME (the subdomain alone or its fqdn) is live: service, origin, public URL, TLS,
    redirect, DNS, route. A private page's content is checked only with its password (never an argument: a
    file, or the environment)."""
    from graphsite.commands import present
    from graphsite.labels import subdomain_of
    from graphsite.publisher.access import USER
    from graphsite.publisher.clients import connected, site
    from graphsite.usecases.verify import VerifySettings, verify

    password = _password(password_file)
    config = site(load_config(config_path))
    name = subdomain_of(name, config.site.domain)  # before connecting: a mistyped name costs no connection
    with connected(config) as clients:
        credentials = (user or USER, password) if password else None
        report = verify(VerifySettings.from_config(config), name, clients, credentials)
    present.verify(report, as_json)


def _password(password_file: TextIO | None) -> str:
    """Return the password of --password-file (its first line), else of $GRAPHSITE_PASSWORD ("": none)."""
    if password_file is None:
        return os.environ.get(PASSWORD_ENV, "")
    try:
        lines = password_file.read().splitlines()
    except UnicodeDecodeError:
        raise click.BadParameter(f"{password_file.name} is not UTF-8 text", param_hint="--password-file") from None
    if not lines or not lines[0]:
        raise click.BadParameter(f"{password_file.name} holds no password on its first line",
                                 param_hint="--password-file")
    return lines[0]
