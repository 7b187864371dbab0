"""The vocabularies several layers share: citation finding codes and link-check states (no imports).

The configuration validates `[[citations.accept]]` codes and `links.fail_on` states against these, the
citation checks and the link checker produce them; keeping them here lets `config.py` stay below both.
"""

from __future__ import annotations

CITATION_PREFIX = "citation-"
CITATION_CODES = tuple(CITATION_PREFIX + c for c in (
    "dangling", "mismatch", "unused", "placeholder", "non-public", "malformed",
    "duplicate-number", "duplicate-url", "secret-in-url",
))
# ok, redirected: the link works. warn: it answers 2xx, but with a page that says it is not there (a soft 404),
# or a deep link was redirected to the site's home page: for the author to look at, not proof either way.
# blocked: the site refuses robots (a bot wall, a challenge): not proof that the link is dead. unavailable: the
# server says it is down for now (503). dead: it is not there. timeout: no whole answer in time. unverified: the
# page answers but its #fragment could not be looked for to the end (a page past links.max_page_mib, a body cut
# short). local: a relative link, which the one published page cannot serve. private: file: or a private
# address, never requested unless links.allow_private. skipped: a scheme not checked (mailto:, tel:, ftp:) or
# links.skip. unchecked: the run stopped (Ctrl-C, SIGTERM) before its turn.
LINK_STATES = ("ok", "redirected", "warn", "blocked", "unavailable", "dead", "timeout", "unverified", "local",
               "private", "skipped", "unchecked")