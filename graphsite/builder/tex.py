"""TeX between dollars (`$…$` inline, `$$…$$` display) → MathML at build time: no script on the page.

The dollars are read by Pandoc's rule (mdit-py-plugins' dollarmath): an opening `$` is not followed by a space,
a closing one is not preceded by a space nor followed by a digit, so "it costs $5 and $10" stays text; and
`$…$` that opens with a number and holds a word ("$10, or US$ 20") is a price, left as text. The TeX
is converted by latex2mathml, imported only when a document holds math, and kept inside the formula as its
`<annotation encoding="application/x-tex">` (screen readers and copy-paste get the source back). TeX the
converter refuses is shown as code, with a warning naming its line.
"""

from __future__ import annotations

import html
import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from graphsite.builder.model import Finding
from graphsite.patterns import lazy_pattern

MATH_INVALID = "math-invalid"
# "$10, or US$ 20": a price, then prose words, then a dollar. TeX opening with a digit and holding a word of
# two letters or more (not a `\command`) is text, as written.
_price = lazy_pattern(r"^\d[\d.,]*\s.*(?<![\\a-zA-Z])[a-zA-Z]{2,}", re.DOTALL)
_TYPES = {"math_inline": "inline", "math_inline_double": "block", "math_block": "block"}


def install_math(md: MarkdownIt) -> None:
    """Teach `md` the dollar syntax; each formula renders from the MathML that `convert_math` stored."""
    dollarmath_plugin(md, allow_labels=False, allow_space=False, allow_digits=False, double_inline=True)
    for kind in _TYPES:
        md.add_render_rule(kind, _render)


def _render(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    shown = token.meta.get("mathml")
    if shown is None:  # not converted (parse() converts every formula): show the TeX as written
        shown = f"<code>{html.escape(token.content.strip())}</code>"
    return f"{shown}\n" if token.type == "math_block" else shown


def convert_math(tokens: list[Token], body_line: int) -> list[Finding]:
    """Store every formula's MathML in its token's meta; return a warning for each TeX that cannot convert."""
    found: list[Finding] = []
    for token in tokens:
        line = (token.map[0] if token.map else 0) + body_line
        if token.type in _TYPES:
            _convert(token, line, found)
        breaks = 0
        for child in token.children or ():
            breaks += child.type in {"softbreak", "hardbreak"}
            if child.type == "math_inline" and _price().match(child.content):
                child.type, child.content = "text", f"${child.content}$"
            elif child.type in _TYPES:
                _convert(child, line + breaks, found)
    return found


def _convert(token: Token, line: int, found: list[Finding]) -> None:
    from latex2mathml.converter import convert  # only a document with math pays for the import

    tex = token.content.strip()
    display = _TYPES[token.type]
    try:
        mathml = convert(tex, display=display)
    except Exception as exc:  # noqa: BLE001 (the converter raises many kinds for TeX it cannot read)
        found.append(Finding(MATH_INVALID, f"the formula ${tex[:40]}$ cannot be converted to MathML "
                             f"({type(exc).__name__}); it is shown as TeX", line=line))
        return
    token.meta["mathml"] = _annotated(mathml, tex, display)


def _annotated(mathml: str, tex: str, display: str) -> str:
    """Return the converter's `<math>` with its content in `<semantics>` and the TeX as the annotation."""
    start = mathml.index(">") + 1
    end = mathml.rindex("</math>")
    inner = mathml[start:end]
    return (f'<math display="{display}"><semantics><mrow>{inner}</mrow>'
            f'<annotation encoding="application/x-tex">{html.escape(tex, quote=False)}</annotation>'
            "</semantics></math>")
