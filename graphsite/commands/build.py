"""`graphsite build [SOURCE]`: render a Markdown report into one self-contained index.html."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("build")
@click.argument("source", required=False, type=click.Path(path_type=Path, dir_okay=True))
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=Path("site"),
              show_default=True, help="Directory that receives index.html.")
@click.option("--subdomain", help="Show `live <subdomain>` and name it in the teardown command.")
@click.option("--fonts", type=click.Choice(["google", "system"]), default="google", show_default=True,
              help="system: no external request at all (private networks).")
@click.option("--strict", is_flag=True, help="Fail (and write nothing) on any unaccepted citation finding.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="graphsite.toml to use.")
def build_command(source: Path | None, out_dir: Path, subdomain: str | None, fonts: str, strict: bool,
                  as_json: bool, config_path: Path | None) -> None:
    """Render SOURCE (default: content/graph-engineering.md, else the packaged report) into OUT/index.html."""
    from graphsite import output
    from graphsite.builder.build import build
    from graphsite.config import load_config
    from graphsite.paths import default_source

    outcome = build(source or default_source(), out_dir, subdomain=subdomain, fonts=fonts, strict=strict,
                    config=load_config(config_path))
    report_outcome(outcome, as_json, output)


def report_outcome(outcome, as_json: bool, output) -> None:  # type: ignore[no-untyped-def]
    """Warnings and the one-line summary on stderr; the JSON object (or nothing) on stdout."""
    summary = outcome.summary()
    for warning in summary["warnings"]:
        where = f"line {warning['line']}: " if warning["line"] else ""
        note = f" (accepted: {warning['accepted']})" if warning.get("accepted") else ""
        (output.detail if warning.get("accepted") else output.warn)(f"{where}{warning['code']}: "
                                                                      f"{warning['message']}{note}")
    counts = summary["citations"]
    output.info(f"Built {outcome.path} ({summary['bytes'] / 1024:.0f} KB) in {outcome.seconds:.2f} s: "
                f"{summary['sections']} sections, {counts['inline']} citations, {counts['references']} "
                f"references, {counts['unique_urls']} unique outbound URLs")
    if as_json:
        output.emit_json(summary)
