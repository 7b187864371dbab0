"""`graphsite build [SOURCE]`: render a Markdown report into one self-contained index.html."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, fonts_option, json_option, source_argument


@click.command("build")
@source_argument()
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=Path("site"),
              show_default=True, help="Directory that receives index.html.")
@click.option("--subdomain", metavar="NAME",
              help="Show `live NAME` and name it in the teardown command (NAME alone or NAME.<site.domain>).")
@fonts_option("embedded: the theme's fonts inside the page, no request; google: Google Fonts' stylesheet; "
              "system: the reader's own fonts.")
@click.option("--pdf", is_flag=True, help="Also print the page to OUT/report.pdf with headless Chromium.")
@click.option("--strict", is_flag=True, help="Fail (and write nothing) on any unaccepted citation finding, "
              "link to a #fragment the page does not have, or local image that is missing.")
@click.option("--check-links", is_flag=True,
              help="Also check every outbound link over the network and say on the page what came of each "
                   "reference (exit 1 on a dead link; see `links`).")
@click.option("--since", type=click.Path(path_type=Path, dir_okay=False), metavar="OLD",
              help="The previous version (a report, or a page `build` wrote): the page notes the sections that "
                   "changed since it (\"Changed since <date>\").")
@json_option
@config_option
def build_command(source: Path | None, out_dir: Path, subdomain: str | None, fonts: str, pdf: bool, strict: bool,
                  check_links: bool, since: Path | None, as_json: bool, config_path: Path | None) -> None:
    """Render SOURCE (default: content/graph-engineering.md, else the packaged report; `-`: standard input) into
    OUT/index.html."""
    from graphsite import output
    from graphsite.commands import present
    from graphsite.config import load_config
    from graphsite.labels import subdomain_of
    from graphsite.paths import default_source
    from graphsite.usecases.build import build

    config = load_config(config_path)
    subdomain = subdomain_of(subdomain, config.site.domain, what="--subdomain") if subdomain else None
    source = source or default_source()
    outcome = build(source, out_dir, subdomain=subdomain, fonts=fonts, strict=strict, config=config,
                    check_links=check_links, since=since)
    links = outcome.links
    present.build_summary(outcome)
    if pdf:  # after the page's own summary: the page is written whether or not printing works
        from graphsite.builder.pdf import write_pdf

        pdf_path = write_pdf(outcome.path, outcome.path.parent / "report.pdf")
        present.printed(pdf_path)
    else:  # the page is written atomically and closed, and no thread runs: nothing is left to the teardown
        output.end_without_teardown()
    present.build(outcome, as_json, links=links, fail_on=config.links.fail_on)
