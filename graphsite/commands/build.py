"""`graphsite build [SOURCE]`: render a Markdown report into one self-contained index.html."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from graphsite.build import BuildOutcome
    from graphsite.citations.results import LinkReport

SHOWN_WARNINGS = 20  # more would bury the summary line; -v shows them all, --json lists them all


@click.command("build")
@click.argument("source", required=False, type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=Path("site"),
              show_default=True, help="Directory that receives index.html.")
@click.option("--subdomain", metavar="NAME",
              help="Show `live NAME` and name it in the teardown command (NAME alone or NAME.<site.domain>).")
@click.option("--fonts", type=click.Choice(["embedded", "google", "system"]), default="embedded", show_default=True,
              help="embedded: the theme's fonts inside the page, no request; google: Google Fonts' stylesheet; "
                   "system: the reader's own fonts.")
@click.option("--pdf", is_flag=True, help="Also print the page to OUT/report.pdf with headless Chromium.")
@click.option("--strict", is_flag=True, help="Fail (and write nothing) on any unaccepted citation finding or "
              "link to a #fragment the page does not have.")
@click.option("--check-links", is_flag=True,
              help="Also check every outbound link over the network and say on the page what came of each "
                   "reference (exit 1 on a dead link; see `links`).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def build_command(source: Path | None, out_dir: Path, subdomain: str | None, fonts: str, pdf: bool, strict: bool,
                  check_links: bool, as_json: bool, config_path: Path | None) -> None:
    """Render SOURCE (default: content/graph-engineering.md, else the packaged report) into OUT/index.html."""
    from graphsite.build import build
    from graphsite.config import load_config
    from graphsite.errors import GraphsiteError
    from graphsite.labels import subdomain_of
    from graphsite.paths import default_source

    try:
        config = load_config(config_path)
        subdomain = subdomain_of(subdomain, config.site.domain, what="--subdomain") if subdomain else None
        source = source or default_source()
        outcome = build(source, out_dir, subdomain=subdomain, fonts=fonts, strict=strict, config=config,
                        check_links=check_links)  # the source is read again for the links' places: in the try
    except GraphsiteError as exc:
        if as_json:  # a machine reading stdout gets an object on failure too (the message also goes to stderr)
            from graphsite import output

            output.emit_json({"error": exc.format_message()})
        raise
    links = outcome.links
    report_outcome(outcome, as_json, links=links)
    if pdf:  # after the page's own summary: the page is written whether or not printing works
        from graphsite import output
        from graphsite.builder.pdf import write_pdf

        pdf_path = write_pdf(outcome.path, outcome.path.parent / "report.pdf")
        output.info(f"Printed {pdf_path} ({pdf_path.stat().st_size / 1024:.0f} KB)")
    if links is not None:
        from graphsite.citations.summary import show_links

        show_links(links, config.links.fail_on, stdout_is_json=as_json)


def report_outcome(outcome: BuildOutcome, as_json: bool, *, links: LinkReport | None = None) -> None:
    """Warnings and the one-line summary on stderr; the JSON object (or nothing) on stdout."""
    from graphsite import output

    summary = outcome.summary()
    shown = hidden = 0
    for warning in summary["warnings"]:
        where = f"line {warning['line']}: " if warning["line"] else ""
        text = f"{where}{warning['code']}: {warning['message']}"
        if warning.get("accepted"):
            output.detail(f"{text} (accepted: {warning['accepted']})")
        elif shown < SHOWN_WARNINGS:
            output.warn(text)
            shown += 1
        else:
            output.detail(text)
            hidden += 1
    if hidden:
        output.warn(f"… and {hidden} more (-v shows them, --json lists them)")
    counts = summary["citations"]
    output.info(f"Built {outcome.path} ({summary['bytes'] / 1024:.0f} KB) in {outcome.seconds:.2f} s: "
                f"{summary['sections']} sections, {counts['inline']} citations, {counts['references']} "
                f"references, {counts['unique_urls']} unique outbound URLs")
    if as_json:
        output.emit_json({**summary, "links": links.as_dict()} if links is not None else summary)
