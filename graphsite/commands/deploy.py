"""`graphsite deploy`: publish the page, verify it, print the URL last."""

from __future__ import annotations

import time
from pathlib import Path

import click

from graphsite.commands.options import config_option, json_option, source_argument
from graphsite.config import load_config
from graphsite.paths import default_source


@click.command("deploy")
@source_argument()
@click.option("--random-subdomain", is_flag=True, help="Draw a fresh <prefix>-<6 hex> name.")
@click.option("--subdomain", metavar="NAME",
              help="Deploy under NAME, given alone or as NAME.<site.domain> (a new name, or one to redeploy).")
@click.option("--ttl", metavar="DURATION", help="Expire after DURATION (30m, 12h, 7d); `graphsite gc` removes it.")
@click.option("--content", type=click.Choice(["config", "bind"]), help="How the page reaches Caddy.")
@click.option("--dry-run", is_flag=True, help="Print the plan; touch nothing.")
@click.option("--force", is_flag=True, help="Repoint an existing A record of the name.")
@click.option("--keep-on-failure", is_flag=True, help="Keep what a failed run made, for inspection.")
@click.option("--no-verify", "skip_verify", is_flag=True, help="Skip the checks after deploying.")
@click.option("--wait", type=float, default=0.0, metavar="SECONDS", help="Wait for another run on the name.")
@click.option("--private", is_flag=True, help="Readable only with a password (basicAuth at the edge); printed once.")
@click.option("--auth-file", type=click.Path(path_type=Path, dir_okay=False),
              help="Private, for the users of this htpasswd file (bcrypt: htpasswd -nB USER).")
@click.option("--new-password", is_flag=True, help="Make new credentials (a redeploy keeps the old ones).")
@click.option("--public", is_flag=True, help="Make a private deployment public again.")
@json_option
@config_option
def deploy_command(source: Path | None, random_subdomain: bool, subdomain: str | None, ttl: str | None,
                   content: str | None, dry_run: bool, force: bool, keep_on_failure: bool, skip_verify: bool,
                   wait: float, private: bool, auth_file: Path | None, new_password: bool, public: bool,
                   as_json: bool, config_path: Path | None) -> None:
    """Publish SOURCE (default: the embedded report) under a subdomain and prove it is live."""
    from graphsite.commands import present
    from graphsite.publisher.clients import connected, site
    from graphsite.publisher.plan import parse_ttl
    from graphsite.publisher.progress import Console
    from graphsite.usecases.deploy import DeployRequest, deploy, requested_subdomain

    if bool(random_subdomain) == bool(subdomain):
        raise click.UsageError("give exactly one of --random-subdomain or --subdomain NAME")
    start, config = time.perf_counter(), site(load_config(config_path))
    if subdomain:  # read before connecting: a mistyped name costs no connection
        subdomain = requested_subdomain(config, subdomain)
    request = DeployRequest(source=source or default_source(), subdomain=subdomain,
                            ttl=parse_ttl(ttl) if ttl else None, content=content, dry_run=dry_run, force=force,
                            keep_on_failure=keep_on_failure, verify=not skip_verify, wait=wait, private=private,
                            public=public, auth_file=auth_file, new_password=new_password)
    with connected(config) as clients:
        result = deploy(config, request, clients, Console())
    present.deploy(result, time.perf_counter() - start, as_json)
