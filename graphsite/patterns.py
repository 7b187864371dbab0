"""Regular expressions compiled when a build first uses them, not when their module is imported.

Python's `re` compiles a pattern in Python code: the 55 patterns of the builder's modules were about 7 % of the
instructions of a 3-line document's build (valgrind), most of them for what a plain document never has (raw
HTML, images, Jekyll leftovers, dates, TeX prices). `lazy_pattern` gives a function returning the compiled
pattern, compiled at its first call and kept (issue 24: no regular expression compiled at import that a build
does not use).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, partial
from typing import AnyStr


def lazy_pattern(pattern: AnyStr, flags: int = 0) -> Callable[[], re.Pattern[AnyStr]]:
    """Return a function giving `pattern` compiled with `flags`, compiled once, at the first call."""
    return cache(partial(re.compile, pattern, flags))
