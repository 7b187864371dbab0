"""Issue 21 item 4: local images embedded as data URIs, within limits, never from outside the report's
directory; the CSP allows `data:` for images and nothing more."""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import threading
import time

import pytest

from graphsite.builder import build as builder
from graphsite.builder.images import ImageLimits, _opened
from graphsite.config import load_config
from graphsite.errors import SourceError
from graphsite.paths import open_below, open_directory
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
                                 "images/../../outside.png", "linked/outside.png"])
def test_nothing_outside_the_reports_directory_is_embedded(tmp_path, src):
    (tmp_path / "outside.png").write_bytes(tiny_png())
    folder = tmp_path / "report"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "link.png").symlink_to(tmp_path / "outside.png")
    (folder / "linked").symlink_to(tmp_path)  # a directory on the way that is a link leading outside
    report = folder / "r.md"
    report.write_text(f"# T\n\ntext\n\n![x]({src})\n")
    with pytest.raises(SourceError, match="leads outside the report's directory") as caught:
        checked_page(report)
    assert f"{report}:5:" in str(caught.value)


def test_a_loop_of_symlinks_is_an_error_naming_the_line(folder):
    """Was a traceback (pathlib's RuntimeError): a user can make a loop, so it is a one-line error."""
    (folder / "images" / "a.png").unlink()
    (folder / "images" / "a.png").symlink_to(folder / "images" / "b.png")
    (folder / "images" / "b.png").symlink_to(folder / "images" / "a.png")
    report = folder / "r.md"
    report.write_text("# T\n\n![x](images/a.png)\n")
    with pytest.raises(SourceError, match=r":3: image 'images/a.png' cannot be read: its path is a loop of symbolic"):
        checked_page(report)


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


def test_the_file_is_opened_one_name_at_a_time_none_followed_if_a_link(tmp_path):
    """The guard behind the path check (a directory on the way, or the file, swapped for a link between the check
    and the open): the checked path, walked again below the report's directory, refuses a link wherever it stands,
    even one that leads back inside; a FIFO is opened without blocking (then refused as no regular file)."""
    base = tmp_path / "report"
    (base / "images" / "deep").mkdir(parents=True)
    (base / "images" / "deep" / "a.png").write_bytes(tiny_png())
    (base / "linked").symlink_to(base / "images")
    (base / "images" / "alias.png").symlink_to(base / "images" / "deep" / "a.png")
    os.mkfifo(base / "images" / "pipe.png")
    directory = open_directory(base)
    try:
        descriptor = open_below(directory, ("images", "deep", "a.png"), os.O_RDONLY)
        with os.fdopen(descriptor, "rb") as stream:
            assert stream.read() == tiny_png()
        for names in (("linked", "deep", "a.png"), ("images", "alias.png"), ("linked",)):
            with pytest.raises(OSError) as caught:
                open_below(directory, names, os.O_RDONLY)
            assert caught.value.errno == errno.ELOOP, names
        os.close(open_below(directory, ("images", "pipe.png"), os.O_RDONLY | os.O_NONBLOCK))
        for names in ((), ("images", "..", "report", "linked"), ("",), (".",), ("/etc",), ("images/deep",)):
            with pytest.raises(ValueError, match="not a path below a directory"):
                open_below(directory, names, os.O_RDONLY)
        with pytest.raises(SourceError) as refused:  # what the build says when the walk meets a link
            _opened(base / "r.md", base, "linked/deep/a.png", 7,
                    lambda: open_below(directory, ("linked", "deep", "a.png"), os.O_RDONLY))
        assert f"{base / 'r.md'}:7: image 'linked/deep/a.png' not embedded: a symbolic link took the place of " \
               "a directory or file on its path" in str(refused.value)
    finally:
        os.close(directory)
    with pytest.raises(OSError) as linked:  # the report's directory itself is reached without following a link
        open_directory(base / "linked")
    assert linked.value.errno == errno.ELOOP


def test_a_directory_swapped_for_a_link_while_images_are_read_never_leads_outside(tmp_path):
    """The fault itself: another process swaps a directory on the image's path for a link to outside, and back, as
    fast as it can while images are read from below it for a second. Every read embeds the inside file, finds it
    missing, or is refused with one line; never the outside file (a plain open of the checked path embeds it some
    ten times a second here)."""
    import subprocess
    import sys

    from graphsite.builder.images import DEFAULT_IMAGE_LIMITS, load_images

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "a.png").write_bytes(tiny_png(2))
    images = tmp_path / "report" / "images"
    (images / "d").mkdir(parents=True)
    (images / "d" / "a.png").write_bytes(tiny_png())
    (images / "d.link").symlink_to(tmp_path / "outside")
    report = tmp_path / "report" / "r.md"
    swap = ("import os, sys\nos.chdir(sys.argv[1])\nwhile True:\n    os.rename('d', 'd.real'); "
            "os.rename('d.link', 'd'); os.rename('d', 'd.link'); os.rename('d.real', 'd')\n")
    inside, outside = (f"data:image/png;base64,{base64.b64encode(tiny_png(width)).decode()}" for width in (1, 2))
    seen: dict[str, int] = {}
    swapper = subprocess.Popen([sys.executable, "-c", swap, str(images)])
    try:
        end = time.monotonic() + 1
        while time.monotonic() < end:
            try:
                uri = load_images(report, "", 1, ["images/d/a.png"], DEFAULT_IMAGE_LIMITS)[0]["images/d/a.png"]
                kind = {inside: "inside", None: "missing"}.get(uri, "other")
            except SourceError as exc:
                assert str(exc).startswith(f"{report}:") and "image 'images/d/a.png'" in str(exc), str(exc)
                kind = "refused"
            seen[kind] = seen.get(kind, 0) + 1
    finally:
        swapper.kill()
        swapper.wait()
    assert "other" not in seen and seen.get("inside"), seen


def test_a_fifo_named_as_an_image_is_refused_without_blocking(folder):
    """A FIFO opened for reading blocks until a writer comes: the build would hang. Should it block, a writer comes
    after 5 s so the test fails instead of hanging."""
    fifo = folder / "images" / "pipe.png"
    os.mkfifo(fifo)
    (folder / "r.md").write_text("# T\n\n![x](images/pipe.png)\n")

    def writer() -> None:
        with contextlib.suppress(OSError):  # ENXIO: no reader holds it, as it should be
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    unblock = threading.Timer(5, writer)
    unblock.start()
    started = time.monotonic()
    try:
        with pytest.raises(SourceError, match=r":3: image 'images/pipe.png' is not a regular file"):
            checked_page(folder / "r.md")
    finally:
        unblock.cancel()
    assert time.monotonic() - started < 5


def test_images_are_embedded_and_refused_where_there_is_no_proc(tmp_path):
    """Before, where /proc/self/fd could not be read (macOS, a container without /proc), every local image was
    refused. Two real builds in a mount namespace with /proc hidden under an empty tmpfs: a nested image embeds,
    an image through a symlinked directory that leads outside is still refused."""
    import subprocess
    import sys

    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "a.png").write_bytes(tiny_png(2))
    folder = tmp_path / "report"
    (folder / "images" / "deep").mkdir(parents=True)
    (folder / "images" / "deep" / "a.png").write_bytes(tiny_png())
    (folder / "images" / "elsewhere").symlink_to(tmp_path / "outside")
    (folder / "good.md").write_text("# R\n\n![a](images/deep/a.png)\n")
    (folder / "bad.md").write_text("# R\n\n![a](images/elsewhere/a.png)\n")
    build = f"{sys.executable} -m graphsite build"
    script = (f"mount -t tmpfs none /proc && test ! -e /proc/self || exit 9\n"
              f"{build} good.md --out good 2>good.err; echo $? >good.rc\n"
              f"{build} bad.md --out bad 2>bad.err; echo $? >bad.rc\n")
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    run = subprocess.run(["unshare", "--mount", "--fork", "sh", "-c", script], cwd=folder, capture_output=True,
                         text=True, timeout=120, check=False, env=env)
    assert run.returncode == 0, run.stderr
    good, bad = ((folder / f"{name}.rc").read_text().strip() for name in ("good", "bad"))
    assert good == "0", (folder / "good.err").read_text()
    page = (folder / "good" / "index.html").read_text()
    assert parse_html(page).find("img")["src"] == "data:image/png;base64," + base64.b64encode(tiny_png()).decode()
    errors = (folder / "bad.err").read_text()
    assert bad == "1" and "Traceback" not in errors, errors
    assert "bad.md:3: image 'images/elsewhere/a.png' leads outside the report's directory" in errors, errors
    assert not (folder / "bad" / "index.html").exists()
