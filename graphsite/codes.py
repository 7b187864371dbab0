"""The vocabularies several layers share: citation finding codes and link-check states (no imports).

The configuration validates `[[citations.accept]]` codes and `links.fail_on` states against these, the
citation checks and the link checker produce them; keeping them here lets `config.py` stay below both.
"""

from __future__ import annotations

CITATION_PREFIX = "citation-"
CITATION_CODES = tuple(CITATION_PREFIX + c for c in (
    "dangling", "mismatch", "unused", "placeholder", "non-public", "malformed",
    "duplicate-number", "duplicate-url",
))
LINK_STATES = ("ok", "redirected", "blocked", "dead", "timeout", "skipped")
