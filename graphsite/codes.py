"""The vocabularies several layers share (no imports of graphsite): exit statuses, check statuses, citation
finding codes and link-check states.

The configuration validates `[[citations.accept]]` codes and `links.fail_on` states against these, the
citation checks and the link checker produce them, the commands end with these statuses; keeping them here lets
`config.py` stay below all of them.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class Exit(IntEnum):
    """Every exit status of every `graphsite` command (README, "Exit status"). A signal adds `stopped_by`."""

    OK = 0  # done, and everything checked is good
    FAILED = 1  # not done, or not all good: an error, a FAIL check, a dead link, a finding under --strict, a leftover
    USAGE = 2  # the command line is wrong (a bad flag or argument); for `links` also its configuration or report,
    #            so that 1 there always means a link failed
    SIGNAL = 128  # 128 + the signal's number: see stopped_by


def stopped_by(signum: int) -> int:
    """Return the exit status of a run a signal stopped: 128 + its number (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
    return Exit.SIGNAL + signum


class CheckStatus(StrEnum):
    """The verdict of one check of `verify`, `deploy` or `doctor`."""

    PASS = "PASS"
    WARN = "WARN"  # doctor only: works, but the operator should look
    FAIL = "FAIL"
    SKIP = "SKIP"  # not checked, and the evidence says why: never counted as a pass


CITATION_PREFIX = "citation-"
CITATION_CODES = tuple(CITATION_PREFIX + c for c in (
    "dangling", "mismatch", "unused", "placeholder", "non-public", "malformed",
    "duplicate-number", "duplicate-url", "secret-in-url",
))


class LinkState(StrEnum):
    """The verdict of one link of `graphsite links`."""

    OK = "ok"  # ok, redirected: the link works
    REDIRECTED = "redirected"
    # warn: it answers 2xx, but with a page that says it is not there (a soft 404), or a deep link was redirected
    # to the site's home page: for the author to look at, not proof either way.
    WARN = "warn"
    BLOCKED = "blocked"  # the site refuses robots (a bot wall, a challenge): not proof that the link is dead
    UNAVAILABLE = "unavailable"  # the server says it is down for now (503)
    DEAD = "dead"  # it is not there
    TIMEOUT = "timeout"  # no whole answer in time
    # the page answers but its #fragment could not be looked for to the end (a page past links.max_page_mib, a
    # body cut short)
    UNVERIFIED = "unverified"
    LOCAL = "local"  # a relative link, which the one published page cannot serve
    PRIVATE = "private"  # file: or a private address, never requested unless links.allow_private
    SKIPPED = "skipped"  # a scheme not checked (mailto:, tel:, ftp:) or links.skip
    UNCHECKED = "unchecked"  # the run stopped (Ctrl-C, SIGTERM) before its turn


LINK_STATES = tuple(state.value for state in LinkState)
