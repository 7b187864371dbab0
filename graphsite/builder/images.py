"""Local images (relative paths beside the report) embedded into the page as `data:` URIs.

The page is one self-contained file: `![diagram](images/a.png)` cannot load from beside a page served alone,
so the image's bytes go into the page. Rules, each failure a SourceError naming the report's line:
- the path is relative to the report's directory and must stay inside it once resolved (`..` or a symlink
  that leads outside is refused: a report, perhaps someone else's, must not publish any
  file the builder's user can read); a symlink that stays inside is followed; the resolved path is then opened
  one name at a time from that directory (`paths.open_below`), none followed if it is a symlink, so a directory
  on the way swapped for a link since the check is refused, not followed (on any system: no /proc needed);
- a missing file, or a path from a site's root (`/assets/x.png`, never read), is a warning (`image-missing`,
  an error under `--strict`): the image is shown as its alt
  text, so the page requests nothing from beside itself (a README copied without its images still builds,
  and says which ones it lacks);
- the file must be a regular file, an image by its first bytes (PNG, JPEG, GIF, WebP, AVIF, SVG), at most
  `build.max_image_bytes`, and all of the page's images together at most `build.max_page_image_bytes`;
- remote images (http, https) stay URLs the reader's browser loads, as before.
"""

from __future__ import annotations

import errno
import html
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

from graphsite.builder.model import Finding
from graphsite.builder.sanitize import url_scheme
from graphsite.builder.source import STDIN_NAME
from graphsite.builder.tags import CLEAN_IMG_SRC
from graphsite.digests import base64_text
from graphsite.errors import SourceError
from graphsite.paths import open_below, open_directory
from graphsite.patterns import lazy_pattern
from graphsite.values import frozen

IMAGE_MISSING = "image-missing"

DEFAULT_MAX_IMAGE_BYTES = 2 * 1024 * 1024  # build.max_image_bytes: a large screenshot
DEFAULT_MAX_PAGE_IMAGE_BYTES = 10 * 1024 * 1024  # build.max_page_image_bytes: all of one page's images
_ALT = lazy_pattern(r'\salt="([^"]*)"')
_svg = lazy_pattern(rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*(?:<!DOCTYPE[^>]*>\s*)?<svg[\s>]", re.DOTALL)


@frozen
class ImageLimits:
    """How large one embedded image, and all of a page's, may be (bytes of the file, before base64)."""

    per_image: int = DEFAULT_MAX_IMAGE_BYTES
    per_page: int = DEFAULT_MAX_PAGE_IMAGE_BYTES


DEFAULT_IMAGE_LIMITS = ImageLimits()


def is_local(src: str) -> bool:
    """Return whether an image `src` names a file beside the report (a relative path, not `//host/…`)."""
    return bool(src.strip()) and not url_scheme(src) and not src.startswith(("//", "\\\\", "#"))


def local_sources(fragments: list[str]) -> list[str]:
    """Return the distinct local image sources of sanitised HTML fragments (as the author wrote them, URL
    escapes decoded), in page order."""
    found: dict[str, None] = {}
    for fragment in fragments:
        if "<img" in fragment:
            for match in CLEAN_IMG_SRC.finditer(fragment):
                src = html.unescape(match.group(2))
                if is_local(src):
                    found.setdefault(src, None)
    return list(found)


def embed(fragment: str, uris: dict[str, str | None]) -> str:
    """Return a fragment with each local image's src replaced by its data URI, and each missing one (None)
    by its alt text."""
    if "<img" not in fragment:
        return fragment

    def replace(match: re.Match[str]) -> str:
        src = html.unescape(match.group(2))
        if src not in uris:
            return match.group(0)
        uri = uris[src]
        if uri is None:
            alt = _ALT().search(match.group(0))
            return f'<span class="image-missing">{alt.group(1) if alt else ""}</span>'
        return f"{match.group(1)}{uri}{match.group(3)}"

    return CLEAN_IMG_SRC.sub(replace, fragment)


def load_images(report_path: Path, body: str, body_line: int, sources: list[str],
                limits: ImageLimits) -> tuple[dict[str, str | None], list[Finding]]:
    """Return the data URI of every local image in `sources` (None for a missing one), read from beside the
    report at `report_path`, and a warning per missing one (`body` is the report's Markdown, from file line
    `body_line`, to name the line of a failure)."""
    base = report_path.resolve().parent
    uris: dict[str, str | None] = {}
    missing: list[Finding] = []
    total = 0
    with _ReportDirectory(base) as directory:
        for src in sources:
            line = _line_of(body, body_line, src)
            if src.startswith("/"):  # a web site's root (Jekyll's `/assets/x.png`): never read from this machine
                uris[src] = None
                missing.append(Finding(IMAGE_MISSING, f"image {src!r} is a path from a web site's root, which a page "
                                       "of its own does not have: the page shows its alt text", line=line))
                continue
            if report_path == STDIN_NAME:  # no directory of its own: the working directory is not the report's
                uris[src] = None
                missing.append(Finding(IMAGE_MISSING, f"image {src!r} is not read: a report from standard input has "
                                       "no directory of its own (build the file itself to embed its images): the "
                                       "page shows its alt text", line=line))
                continue
            data = _read(report_path, directory, src, line, limits.per_image)
            if data is None:
                uris[src] = None
                missing.append(Finding(IMAGE_MISSING, f"image {src!r} not found beside the report (looked for "
                                       f"{_path(report_path, base, src, line)}): the page shows its alt text",
                                       line=line))
                continue
            total += len(data)
            if total > limits.per_page:
                raise SourceError(report_path, f"image {src!r} brings the page's images to {total:,} bytes, more "
                                  f"than the limit of {limits.per_page:,}", line=line,
                                  hint="make the images smaller, or raise build.max_page_image_bytes in graphsite.toml")
            mime = _mime(data)
            if mime is None:
                raise SourceError(report_path, f"image {src!r} is not a PNG, JPEG, GIF, WebP, AVIF or SVG image",
                                  line=line, hint="convert it to one of these formats")
            uris[src] = f"data:{mime};base64,{base64_text(data)}"
    return uris, missing


def _line_of(body: str, body_line: int, src: str) -> int | None:
    """Return the file line of the first image that names `src` (as written, or URL-escaped), or None."""
    written = {src, unquote(src)}
    marks = [f"{before}{name}" for name in written for before in ("](", "](<", "]: ", "]: <", 'src="', "src='", "src=")]
    for number, line in enumerate(body.split("\n"), start=body_line):
        if any(mark in line or mark in unquote(line) for mark in marks):
            return number
    return None


def _path(report_path: Path, base: Path, src: str, line: int | None) -> Path:
    """Return the resolved file `src` names, inside the report's directory, or raise SourceError."""
    written = unquote(urlsplit(src).path)
    if not written or "\x00" in written:
        raise SourceError(report_path, f"image {src!r} names no file", line=line)
    try:
        target = _resolved(base / written)  # follows every symlink: the check below sees where it really leads
    except RuntimeError:
        raise SourceError(report_path, f"image {src!r} cannot be read: its path is a loop of symbolic links",
                          line=line) from None
    except OSError as exc:  # a link on the way removed while it was followed
        raise SourceError(report_path, f"image {src!r} cannot be read: {exc.strerror}", line=line) from None
    if not target.is_relative_to(base):
        raise SourceError(report_path, f"image {src!r} leads outside the report's directory ({base}), which the "
                          "page never publishes from", line=line,
                          hint="copy the image into the report's directory and link it by a relative path")
    return target


class _ReportDirectory:
    """The report's directory, opened (`paths.open_directory`) at the first image read from it, then kept open:
    every image is opened below this one directory, whatever is renamed or linked above it meanwhile."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def fd(self) -> int:
        """Return the directory's descriptor, opening it the first time; raise OSError."""
        if self._fd is None:
            self._fd = open_directory(self.path)
        return self._fd

    def __enter__(self) -> _ReportDirectory:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _resolved(path: Path) -> Path:
    """Return `path` with every symlink followed, as far as it exists; raise RuntimeError for a loop of symlinks
    (which Python 3.13 leaves in a lenient resolve, where earlier ones raise this)."""
    try:
        return path.resolve(strict=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RuntimeError(f"symlink loop from {path}") from None
        return path.resolve()  # a missing file: a link that leads outside is still seen


def _read(report_path: Path, directory: _ReportDirectory, src: str, line: int | None, most: int) -> bytes | None:
    """Return the image's bytes, None when there is no such file, or raise SourceError."""
    base = directory.path
    target = _path(report_path, base, src, line)
    if target == base:
        raise SourceError(report_path, f"image {src!r} is not a regular file ({target})", line=line)
    # each name of the resolved path (which held no symlink) opened below the one before without following a link:
    # a directory on the way swapped for a link since the check is refused, not followed. O_NONBLOCK: a FIFO does
    # not block (and is refused below as no regular file)
    names = target.relative_to(base).parts
    descriptor = _opened(report_path, base, src, line,
                         lambda: open_below(directory.fd(), names, os.O_RDONLY | os.O_NONBLOCK))
    if descriptor is None:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(report_path, f"image {src!r} is not a regular file ({target})", line=line)
        if info.st_size > most:
            raise SourceError(report_path, f"image {src!r} is {info.st_size:,} bytes, more than the limit of "
                              f"{most:,}", line=line,
                              hint="make it smaller, or raise build.max_image_bytes in graphsite.toml")
        with os.fdopen(os.dup(descriptor), "rb") as stream:
            data = stream.read(most + 1)
    except OSError as exc:
        raise SourceError(report_path, f"image {src!r} cannot be read: {exc.strerror}", line=line) from None
    finally:
        os.close(descriptor)
    if len(data) > most:
        raise SourceError(report_path, f"image {src!r} is more than the limit of {most:,} bytes", line=line,
                          hint="make it smaller, or raise build.max_image_bytes in graphsite.toml")
    return data


def _opened(report_path: Path, base: Path, src: str, line: int | None, opening: Callable[[], int]) -> int | None:
    """Return the descriptor `opening` gives for the image `src`, None when there is no such file, or raise
    SourceError."""
    try:
        return opening()
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the path held no symlink when checked: one took the place of a name since
            raise SourceError(report_path, f"image {src!r} not embedded: a symbolic link took the place of a "
                              "directory or file on its path while it was read, so it is not proven inside the "
                              f"report's directory ({base})", line=line,
                              hint="build again once nothing is changing the report's directory") from None
        raise SourceError(report_path, f"image {src!r} cannot be read: {exc.strerror}", line=line) from None


def _mime(data: bytes) -> str | None:
    """Return the image type its first bytes announce, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:12] in {b"ftypavif", b"ftypavis"}:
        return "image/avif"
    if _svg().match(data[:4096].lstrip(b"\xef\xbb\xbf")):
        return "image/svg+xml"
    return None
