"""`scripts/lab up | down | status` (also `python -m graphsite_lab`)."""

from __future__ import annotations

import sys

import click

from graphsite import output
from graphsite_lab.instance import LabInstance


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """The lab: Docker Swarm, an edge Caddy with an internal CA, a fake Cloudflare API, on loopback."""


@main.command("up")
@click.option("--nodes", type=click.IntRange(1, 9), envvar="LAB_NODES", default=1, show_default=True,
              help="Swarm nodes: the lab's daemon (manager) and N-1 workers in network namespaces (needs root).")
def up_command(nodes: int) -> None:
    """Bring the lab up (idempotent) and print the deploy command to use it."""
    from graphsite_lab.stack import up

    lab = LabInstance.from_env()
    report = up(lab, nodes=nodes)
    for part, action in report.steps:
        output.info(f"  {part:<34} {action}")
    output.info("Nothing changed: the lab was already up." if not report.changed else "Lab up.")
    output.info(f"Lab ready in {report.seconds:.1f} s ({lab.root}).")
    output.result(f"GRAPHSITE_CONFIG={_shown(lab.path('graphsite.toml'))} graphsite deploy --random-subdomain")


@main.command("down")
@click.option("--purge-image", is_flag=True, help="Also remove the page image, when this lab built it.")
def down_command(purge_image: bool) -> None:
    """Remove what `up` started or created, by recorded id; leave what it found running."""
    from graphsite_lab.stack import down

    lab = LabInstance.from_env()
    results = down(lab, purge_image=purge_image)
    for part, action in results:
        output.info(f"  {part:<34} {action}")
    output.info("Lab down." if results else "Nothing to take down: this lab started nothing that still runs.")


@main.command("status")
def status_command() -> None:
    """Show each part of the lab and whether it answers; exit 1 when a part is down."""
    from graphsite_lab.health import status

    parts = status(LabInstance.from_env())
    for part in parts:
        output.result(f"{'up  ' if part.ok else 'DOWN'}  {part.name:<34} {part.detail}")
    if not all(part.ok for part in parts):
        sys.exit(1)


def _shown(path) -> str:
    """Return `path` relative to the working directory when it is inside it."""
    from pathlib import Path

    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run() -> None:
    """Run the lab's command; graphsite's errors (a LabError among them) end it as click ends its own: `Error: …`
    on stderr and the error's status, no traceback."""
    from graphsite.errors import GraphsiteError

    try:
        main(prog_name="scripts/lab")
    except GraphsiteError as error:
        error.show()
        sys.exit(error.exit_code)


if __name__ == "__main__":
    run()
