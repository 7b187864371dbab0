"""Issue 21 item 4: local images embedded as data URIs, within limits, never from outside the report's
directory; the CSP allows `data:` for images and nothing more."""

from __future__ import annotations

import base64
import os

import pytest

from graphsite.builder import build as builder
from graphsite.builder.images import ImageLimits
from graphsite.config import load_config
from graphsite.errors import SourceError
from graphsite.usecases.build import checked_page, unaccepted
from tests.builder.conftest import CORPUS, parse_html, tiny_png


def _csp(html: str) -> dict[str, str]:
    policy = parse_html(html).find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    return {part.split()[0]: " ".join(part.split()[1:]) for part in policy.split("; ")}


@pytest.fixture()
def folder(tmp_path):
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(tiny_png())
    return tmp_path


def test_local_images_are_embedded_and_only_data_is_allowed(folder):
    report = folder / "r.md"
    report.write_text('# T\n\n![diagram](images/a.png) and <img src="images/a.png" alt="raw">\n\n'
                      "![remote](https://img.example/r.png)\n")
    page = checked_page(report)
    sources = [img["src"] for img in parse_html(page.html).find_all("img")]
    expected = "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
    assert sources == [expected, expected, "https://img.example/r.png"]
    assert _csp(page.html)["img-src"] == "data: https://img.example"
    assert not page.report.warnings


def test_a_page_without_local_images_allows_no_data(folder):
    report = folder / "r.md"
    report.write_text("# T\n\n![remote](https://img.example/r.png)\n")
    assert _csp(checked_page(report).html)["img-src"] == "https://img.example"


def test_a_missing_image_is_a_warning_naming_its_line_and_fails_strict(folder):
    report = folder / "r.md"
    report.write_text("# T\n\ntext\n\n![the diagram](images/gone.png)\n")
    page = checked_page(report)
    assert [(w.code, w.line) for w in page.report.warnings] == [("image-missing", 5)]
    assert parse_html(page.html).find("img") is None and "the diagram" in page.html
    assert "img-src" not in _csp(page.html)
    assert [f.code for f in unaccepted(page.report)] == ["image-missing"]


@pytest.mark.parametrize("limits, wanted", [
    (ImageLimits(per_image=10), "more than the limit of 10"),
    (ImageLimits(per_page=len(tiny_png()) + 5), "brings the page's images to"),
])
def test_images_over_the_limits_are_errors_naming_the_line(folder, limits, wanted):
    (folder / "images" / "b.png").write_bytes(tiny_png(2))
    report = folder / "r.md"
    report.write_text("# T\n\n![a](images/a.png)\n\n![b](images/b.png)\n")
    with pytest.raises(SourceError) as caught:
        builder.page_from_source(report, images=limits)
    assert wanted in str(caught.value) and f"{report}:{3 if limits.per_image == 10 else 5}:" in str(caught.value)


@pytest.mark.parametrize("src", ["../outside.png", "images/link.png", "images/%2e%2e/../outside.png",
                                 "images/../../outside.png"])
def test_nothing_outside_the_reports_directory_is_embedded(tmp_path, src):
    (tmp_path / "outside.png").write_bytes(tiny_png())
    folder = tmp_path / "report"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "link.png").symlink_to(tmp_path / "outside.png")
    report = folder / "r.md"
    report.write_text(f"# T\n\ntext\n\n![x]({src})\n")
    with pytest.raises(SourceError, match="leads outside the report's directory") as caught:
        checked_page(report)
    assert f"{report}:5:" in str(caught.value)


def test_a_path_from_a_sites_root_is_never_read(folder):
    report = folder / "r.md"
    report.write_text("# T\n\n![root](/etc/hostname) and ![jekyll](/assets/a.png)\n")
    page = checked_page(report)
    assert [(w.code, w.line) for w in page.report.warnings] == [("image-missing", 3)] * 2
    assert parse_html(page.html).find("img") is None


def test_a_symlink_that_stays_inside_is_followed(folder):
    (folder / "images" / "alias.png").symlink_to(folder / "images" / "a.png")
    report = folder / "r.md"
    report.write_text("# T\n\n![x](images/alias.png)\n")
    assert parse_html(checked_page(report).html).find("img")["src"].startswith("data:image/png;base64,")


@pytest.mark.parametrize("content, kind", [(b"not an image", "file"), (None, "directory")])
def test_what_is_not_an_image_file_is_an_error(folder, content, kind):
    target = folder / "images" / "odd.png"
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    report = folder / "r.md"
    report.write_text("# T\n\n![x](images/odd.png)\n")
    with pytest.raises(SourceError, match="not a PNG, JPEG|not a regular file|cannot be read"):
        checked_page(report)


def test_svg_is_embedded_as_an_image_where_no_script_runs(folder):
    (folder / "d.svg").write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script>x()'
                                  "</script></svg>")
    report = folder / "r.md"
    report.write_text("# T\n\n![d](d.svg)\n")
    assert parse_html(checked_page(report).html).find("img")["src"].startswith("data:image/svg+xml;base64,")


def test_the_limits_come_from_the_config_file(folder, monkeypatch):
    (folder / "graphsite.toml").write_text("[build]\nmax_image_bytes = 10\nmax_page_image_bytes = 99\n")
    monkeypatch.chdir(folder)
    config = load_config()
    assert (config.build.max_image_bytes, config.build.max_page_image_bytes) == (10, 99)
    report = folder / "r.md"
    report.write_text("# T\n\n![a](images/a.png)\n")
    with pytest.raises(SourceError, match="more than the limit of 10"):
        checked_page(report, config=config)


def test_a_real_document_without_its_images_names_each_line():
    page = checked_page(CORPUS / "cncf-supply-chain-security-paper-footnotes.md")
    missing = [w.line for w in page.report.warnings if w.code == "image-missing"]
    assert missing == [146, 442, 485, 492, 503, 511, 519, 527, 535]


def test_a_file_opened_outside_the_report_directory_is_told_apart(tmp_path):
    """The guard behind the path check: where the kernel says an open file is, not where its path said it
    would be (a directory on the way swapped for a link between the check and the open)."""
    import os

    from graphsite.builder.images import _opened_at

    base = tmp_path / "report"
    base.mkdir()
    (base / "in.png").write_bytes(b"x")
    (tmp_path / "out.png").write_bytes(b"x")
    for name, inside in ((base / "in.png", True), (tmp_path / "out.png", False)):
        descriptor = os.open(name, os.O_RDONLY)
        try:
            where = _opened_at(descriptor)
            assert where is not None and where.is_relative_to(base.resolve()) is inside
        finally:
            os.close(descriptor)


def test_an_image_is_refused_where_the_kernel_cannot_say_where_it_was_opened(folder):
    """Before, an unreadable /proc/self/fd meant "inside": the path check alone vouched for a file a swapped
    directory could have led outside. A real build in a mount namespace with /proc hidden under a tmpfs."""
    import subprocess
    import sys

    (folder / "r.md").write_text("# R\n\n![a](images/a.png)\n")
    hidden = f"mount -t tmpfs none /proc && exec {sys.executable} -m graphsite build r.md --out out"
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    run = subprocess.run(["unshare", "--mount", "--fork", "sh", "-c", hidden], cwd=folder, capture_output=True,
                         text=True, timeout=120, check=False, env=env)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "image 'images/a.png' not embedded: where it was opened cannot be told (/proc/self/fd cannot be " \
           "read)" in run.stderr and "build where /proc is mounted" in run.stderr, run.stderr
    assert not (folder / "out" / "index.html").exists()
