"""The builder's one way to find HTML tags in text: three patterns, for three kinds of HTML.

- `RAW_TAG`: a tag as an author writes it in Markdown (opening or closing, any quoting, perhaps never ended:
  group 1 is `/` for a closing tag, group 2 the name, group 3 the attributes, group 4 the `>` or "");
- `CLEAN_TAG` and `CLEAN_IMG_SRC`: an opening tag as the sanitiser writes it (every value double-quoted, `"`,
  `<`, `>` escaped inside), so that `src="…"` or `id="…"` written as text is never taken for an attribute;
- `ANY_TAG`: any tag in sanitised HTML, to take it away and keep the text.

Every pattern is linear: no nested or overlapping quantifiers, and a scan stops at the next `<` or `>`.
"""

from __future__ import annotations

import re

RAW_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]{0,63})(?=[\s/>]|$)([^<>]*)(>?)")
CLEAN_TAG = re.compile(r'<[a-zA-Z][a-zA-Z0-9-]*(?:\s[^\s"\'>/=]+(?:="[^"]*")?)*\s*/?>')
# An <img>'s src: group 1 up to the value, group 2 the value (escaped), group 3 the rest of the tag.
CLEAN_IMG_SRC = re.compile(r'(<img\b[^>]*?\ssrc=")([^"]*)("[^>]*>)')
ANY_TAG = re.compile(r"<[^>]+>")
