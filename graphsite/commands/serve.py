"""`graphsite serve [SOURCE] [--port N]`: build the page, serve it on 127.0.0.1, rebuild and reload on change."""

from __future__ import annotations

from pathlib import Path

import click

from graphsite.commands.options import config_option, fonts_option, json_option
from graphsite.errors import GraphsiteError


@click.command("serve")
@click.argument("source", required=False, type=click.Path(path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
@fonts_option("As `graphsite build`: embedded (the default there too, so the preview is the page a deploy "
              "publishes; no request), google (Google Fonts' stylesheet) or system.")
@json_option
@config_option
def serve_command(source: Path | None, port: int, fonts: str, as_json: bool, config_path: Path | None) -> None:
    """Serve SOURCE on http://127.0.0.1:PORT/, rebuilt when it, the theme or the configuration changes."""
    from graphsite.commands import present
    from graphsite.config import find_config_file, load_config
    from graphsite.paths import default_source, theme_dir
    from graphsite.usecases import preview
    from graphsite.usecases.build import checked_page

    source = source or default_source()
    if not source.is_file():
        raise GraphsiteError(f"{source}: no such file", hint="name a Markdown report, or create one: graphsite new")

    def build() -> str:
        return checked_page(source, fonts=fonts, config=load_config(config_path)).html

    def watched() -> list[Path]:
        config_file = find_config_file(config_path)
        return [source, *sorted(p for p in theme_dir().rglob("*") if p.is_file()), *([config_file] if config_file
                                                                                      else [])]

    server_preview = preview.Preview(build, watched)
    server_preview.rebuild()
    try:
        server = preview.start(server_preview, source.resolve().parent, port)
    except OSError as exc:
        raise GraphsiteError(f"--port {port}: cannot listen on 127.0.0.1:{port}: {exc.strerror}",
                             hint="choose another --port (0: any free one)") from None
    try:  # from the announcement on: Ctrl-C as soon as the address is out is a normal end
        present.serving(source, f"http://127.0.0.1:{server.server_port}/", as_json)
        server_preview.watch()
    except KeyboardInterrupt:
        present.serve_stopped()
    finally:
        server_preview.stop()
        server.shutdown()
        server.server_close()
