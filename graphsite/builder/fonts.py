"""The page's fonts, embedded: the spec's three typefaces (theme/fonts/, SIL OFL) subset with fontTools to the
characters the page shows, inlined as WOFF2 `data:` URLs in one `@font-face` stylesheet. No request leaves
the page for a font, and a private network reads it the same as the Internet.
"""

from __future__ import annotations

import contextlib
import html
import io
import re
from functools import lru_cache
from pathlib import Path

from graphsite.digests import base64_text, blake2b
from graphsite.errors import BuildError
from graphsite.paths import PrivateDir, installed_record, private_cache
from graphsite.values import frozen

# Always in the subset, whatever the text: ASCII, and what the theme and its script write themselves.
BASE_CHARACTERS = "".join(chr(code) for code in range(0x20, 0x7F)) + "§·—–…’‘“”•→↗"
_TAGS = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.DOTALL | re.IGNORECASE)


@frozen
class Face:
    """One `@font-face`: the page's own family name (see theme/fonts/SOURCES.md), weight, style, file."""

    family: str
    weight: int
    style: str
    file: str


# Every face the theme uses (each subset weighs ~11 KB, mono ~5 KB): text in 400 and 600, upright and italic,
# headings in the serif's 600, labels and bold code in the mono's 600; then one symbol family the stacks fall
# back to for what these Latin fonts lack (arrows, maths, box drawing, emoji). The theme sets
# `font-synthesis: none`: no face is faked by slanting or smearing another.
FACES = (
    Face("gs-sans", 400, "normal", "inter-latin-400-normal.woff2"),
    Face("gs-sans", 600, "normal", "inter-latin-600-normal.woff2"),
    Face("gs-sans", 400, "italic", "inter-latin-400-italic.woff2"),
    Face("gs-sans", 600, "italic", "inter-latin-600-italic.woff2"),
    Face("gs-serif", 600, "normal", "source-serif-4-latin-600-normal.woff2"),
    Face("gs-mono", 400, "normal", "ibm-plex-mono-latin-400-normal.woff2"),
    Face("gs-mono", 600, "normal", "ibm-plex-mono-latin-600-normal.woff2"),
    Face("gs-symbols", 400, "normal", "dejavu-sans-mono-symbols.woff2"),
    Face("gs-emoji", 400, "normal", "noto-emoji-2-400-normal.woff2"),
)
# The cache keeps the subsets used last (written, or read: a hit refreshes the file's time): every face's for about
# the last 32 sets of characters (about 10 KB each). It is pruned once a page, after all its faces are in hand,
# and never of that page's own: pruned at each write, a page whose subsets were the oldest lost the next face's
# before reading it, and so subset every face again.
KEEP = 32 * len(FACES)


@frozen
class Subset:
    """A face subset to a page's characters: its WOFF2 bytes, its file's name in the cache ("" where nothing is
    cached) and whether it was made here rather than read from the cache (memoised: as it was the first time)."""

    data: bytes
    name: str
    made: bool


def page_characters(page_html: str) -> str:
    """Return the sorted distinct characters a reader can see in `page_html`, plus the base set."""
    text = html.unescape(_TAGS.sub(" ", page_html))
    return "".join(sorted(set(text + BASE_CHARACTERS) - set("\n\r\t")))


@lru_cache(maxsize=64)
def subset_woff2(path: Path, characters: str, cache: PrivateDir | None) -> Subset:
    """Return the font at `path` as WOFF2 holding only the glyphs of `characters` (and their features),
    from the user's font cache (`paths.private_cache`; None: no cache) when the same font was subset to the
    same characters by the same fontTools before (subsetting takes a quarter of a second per face; the result is
    deterministic). A fontTools without one dist-info RECORD (a distribution's package) is not known well enough
    to key a cache on: its subsets are made at every build, never read from the cache nor written to it. The
    cache is not pruned here but once a page (`font_face_css`)."""
    source = font_file(path)
    installed = _subsetter()
    # BLAKE2b, not SHA-256: no hashlib to import (graphsite/digests.py), at about OpenSSL's speed on the ~0.5 MB
    # it hashes (a face and fontTools' RECORD), where CPython's own SHA-256 is six times slower
    key = "" if installed is None else blake2b(b"\0".join([source, characters.encode(), installed, b"v4"]),
                                                digest_size=32).hexdigest()
    name = f"{key}.woff2" if cache and key else ""
    found = cache.read(name, refresh=True) if cache and name else None
    if found is not None:
        return Subset(found, name, made=False)
    try:
        data = _subset(source, characters)
    except Exception as exc:  # fontTools raises many types on a damaged file (TTLibError, struct.error, …)
        raise BuildError(f"{path}: not a usable font ({type(exc).__name__}: {exc})",
                         hint="reinstall graphsite, or build with --fonts system") from None
    if cache and name:
        with contextlib.suppress(OSError):
            cache.write(name, data)
    return Subset(data, name, made=True)


def font_file(path: Path) -> bytes:
    """Return the bytes of the font at `path`; raise BuildError naming it when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BuildError(f"{path}: cannot read the font: {exc.strerror}",
                         hint="reinstall graphsite, or build with --fonts system") from None


def check_faces(directory: Path) -> None:
    """Raise BuildError naming the first face in `directory` that cannot be read (what `font_face_css` would
    raise once the page is rendered: a caller with slow work before the render asks first)."""
    for face in FACES:
        font_file(directory / face.file)


@lru_cache(maxsize=1)
def _subsetter() -> bytes | None:
    """Return what identifies the installed fontTools in a cache key: its dist-info RECORD
    (`paths.installed_record`, as the front matter's cache knows PyYAML), read rather than imported, since
    importing fontTools (and its logging set-up) is most of a warm build's font work; None where there is no one
    RECORD (its version alone would let two builds of it share subsets, as a distribution patching it would)."""
    found = installed_record("fontTools", "fonttools")
    return None if found is None else found[1]


def _subset(source: bytes, characters: str) -> bytes:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["kern", "liga", "calt", "ccmp", "locl", "mark", "mkmk"]
    options.hinting = False
    options.desubroutinize = True
    font = TTFont(io.BytesIO(source), recalcTimestamp=False)  # the font's own date: identical input, identical bytes
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=characters)
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    return out.getvalue()


def font_face_css(directory: Path, characters: str) -> str:
    """Return the `@font-face` rules of every face, subset to `characters`, as `data:` URLs."""
    rules = []
    with private_cache("fonts") as cache:  # checked once a page, not once a face
        subsets = [subset_woff2(directory / face.file, characters, cache) for face in FACES]
        if cache and any(subset.made for subset in subsets):  # a build that wrote nothing leaves it as it is
            with contextlib.suppress(OSError):  # or the subsets of every older fontTools, font and page stay forever
                cache.prune(".woff2", KEEP, spare=frozenset(subset.name for subset in subsets))
    for face, subset in zip(FACES, subsets, strict=True):
        data = base64_text(subset.data)
        rules.append(f"@font-face{{font-family:{face.family};font-style:{face.style};font-weight:{face.weight};"
                     f"font-display:swap;src:url(data:font/woff2;base64,{data}) format(\"woff2\")}}")
    return "\n".join(rules)
