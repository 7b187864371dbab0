"""What may reach the page: an allow-list HTML sanitiser (nh3, i.e. Ammonia) and a URL scheme check.

Raw HTML in Markdown is the author's, but a report is often assembled from pasted sources, so everything
the Markdown renders goes through one allow-list: no scripts, no event handlers, no iframes, objects or
forms, and links only to http, https, mailto, relative paths and #fragments.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

import nh3

from graphsite.patterns import lazy_pattern
from graphsite.urls import memoise_short

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
# Ids the page's markup uses itself (tests/builder/test_units.py reads them from builder/page.py and the change
# note's builder/changenote.py), and its
# reference entries' `ref-N`: a heading that slugs to one gets a suffix, raw HTML loses the attribute, so that
# every id stays unique and the page's script and backlinks find the page's own elements.
RESERVED_IDS = frozenset({"top", "toc", "toc-title", "toolbar", "cards", "rules", "rules-title", "ladder",
                          "ladder-title", "report", "intro", "references", "notes", "notes-title", "teardown",
                          "teardown-title", "footer", "hosted", "changes", "changes-title"})
_REFERENCE_ID = lazy_pattern(r"ref-\d+")
# Ids the renderer generates: reference entries, footnotes and their back-references.
_generated_id = lazy_pattern(r"(?:ref-\d+|fn\d+|fnref\d+(?::\d+)?|sec-\d+)")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
# Browsers drop ASCII tab and newline anywhere in a URL and trim C0 controls and spaces at both ends.
_IGNORED = re.compile(r"[\t\n\r]")


# MathML Core's presentation elements and SVG's shapes and text: a formula's or a diagram's words are the
# author's. Nothing that loads, links, animates or embeds HTML (annotation-xml, foreignObject, use, image, a
# link's href, set/animate); nh3 also drops any element whose namespace the HTML parser would not give it.
MATHML = frozenset({"math", "mi", "mn", "mo", "ms", "mspace", "mtext", "mrow", "mfrac", "msqrt", "mroot", "mstyle",
                    "merror", "mpadded", "mphantom", "msub", "msup", "msubsup", "munder", "mover", "munderover",
                    "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "semantics", "annotation"})
SVG = frozenset({"svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan",
                 "defs", "lineargradient", "radialgradient", "linearGradient", "radialGradient", "stop",
                 "marker", "desc"})
_MATHML_ATTRIBUTES = {"display", "mathvariant", "displaystyle", "scriptlevel", "stretchy", "fence", "separator",
                      "lspace", "rspace", "accent", "accentunder", "linethickness", "form", "largeop",
                      "movablelimits", "symmetric", "minsize", "maxsize", "width", "height", "depth", "voffset",
                      "encoding", "columnspan", "rowspan", "xmlns"}
_SVG_ATTRIBUTES = {"viewBox", "preserveAspectRatio", "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx",
                   "cy", "r", "rx", "ry", "d", "points", "dx", "dy", "fill", "fill-opacity", "fill-rule",
                   "stroke", "stroke-width", "stroke-linecap", "stroke-linejoin", "stroke-dasharray",
                   "stroke-opacity", "opacity", "transform", "text-anchor", "dominant-baseline", "font-size",
                   "font-family", "font-weight", "offset", "stop-color", "stop-opacity", "gradientUnits",
                   "gradientTransform", "markerWidth", "markerHeight", "refX", "refY", "orient", "marker-start",
                   "marker-end", "clip-rule", "xmlns"}
# `input` only as a task list's checkbox: type checkbox, always disabled (see _cleaner).
_TAGS = (set(nh3.ALLOWED_TAGS) - {"area", "map"}) | {"section", "input"} | MATHML | SVG
_ATTRIBUTES = {
    **{tag: set(values) for tag, values in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"id", "title", "lang", "dir", "aria-label", "aria-hidden", "role"},
    "a": {"href", "hreflang", "name"},
    "img": {"src", "alt", "width", "height", "align", "title", "loading"},
    "p": {"align"},
    "div": {"align"},
    "h1": {"align"}, "h2": {"align"}, "h3": {"align"},
    "ol": {"start", "type", "reversed"},
    "li": {"value"},
    "details": {"open"},
    "code": set(),
    "input": {"checked", "disabled"},
    **{tag: _MATHML_ATTRIBUTES for tag in MATHML},
    **{tag: _SVG_ATTRIBUTES for tag in SVG},
}
# Classes the renderer itself puts into section HTML; any other class from raw HTML is dropped.
_CLASSES = {
    "a": {"permalink", "xref", "footnote-backref", "neutralised"},
    "sup": {"cite", "footnote-ref"},
    "section": {"footnotes"},
    "p": {"excerpt"},
    "ol": {"footnotes-list", "contains-task-list"},
    "ul": {"contains-task-list"},
    "li": {"footnote-item", "task-list-item"},
    "input": {"task-list-item-checkbox"},
    "hr": {"footnotes-sep"},
    "td": {"al-left", "al-center", "al-right"},
    "th": {"al-left", "al-center", "al-right"},
    "code": {f"language-{name}" for name in (
        "bash", "sh", "shell", "console", "python", "py", "yaml", "yml", "json", "toml", "js", "javascript",
        "ts", "typescript", "html", "css", "rust", "go", "text", "sql", "php", "log", "diff", "ini",
        "dockerfile", "caddyfile", "markdown", "md", "xml", "c", "cpp", "java", "ruby", "solidity")},
}


@lru_cache(maxsize=1)
def _cleaner() -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=_TAGS,
        clean_content_tags={"script", "style"},
        attributes={tag: values - {"class"} for tag, values in _ATTRIBUTES.items()},
        url_schemes=set(SAFE_SCHEMES),
        allowed_classes=_CLASSES,
        strip_comments=True,
        attribute_filter=_keep_attribute,
        tag_attribute_values={"input": {"type": {"checkbox"}}},
        set_tag_attribute_values={"input": {"disabled": "disabled", "type": "checkbox"}},
    )


def _keep_attribute(element: str, attribute: str, value: str) -> str | None:
    """Return the attribute's value, or None for an id (or name) the page itself owns."""
    if attribute in ("id", "name") and (value in RESERVED_IDS or _REFERENCE_ID().fullmatch(value)):
        return None
    return value


def is_reserved_id(value: str) -> bool:
    """Return whether `value` is an id the page or its renderer owns (raw HTML must not take it)."""
    return value in RESERVED_IDS or bool(_generated_id().fullmatch(value))


_CHECKBOX = lazy_pattern(r"<input\b[^>]*>")


def _named_checkbox(match: re.Match[str]) -> str:
    """Give a task list's checkbox an accessible name (axe: form elements must have labels)."""
    tag = match.group(0)
    if "aria-label=" in tag:
        return tag
    state = "done" if " checked" in tag else "not done"
    return tag[:-1] + f' aria-label="{state}">'


def clean_html(html: str) -> str:
    """Return `html` with everything outside the allow-list removed."""
    cleaned = _cleaner().clean(html)
    return _CHECKBOX().sub(_named_checkbox, cleaned) if "<input" in cleaned else cleaned


@memoise_short
def url_scheme(url: str) -> str:
    """Return the lower-case scheme of `url` as a browser would read it, or "" for a relative URL. Memoised:
    the page asks it of the same few URLs again and again (1,500 times for 60 URLs in the default report)."""
    normalised = _IGNORED.sub("", url).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f"
                                            "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d"
                                            "\x1e\x1f \x7f")
    match = _SCHEME.match(normalised)
    return match.group(1).lower() if match else ""


@memoise_short
def is_safe_url(url: str) -> bool:
    """Return whether a link to `url` may be clickable: http, https, mailto, relative or #fragment."""
    allowed = SAFE_SCHEMES | {""}
    # An entity could spell a scheme once decoded (`javascript&#58;`), so check both readings.
    return url_scheme(url) in allowed and url_scheme(html.unescape(url)) in allowed


def is_outbound(url: str) -> bool:
    """Return whether `url` leaves the page for the web (http or https)."""
    return url_scheme(url) in {"http", "https"}
