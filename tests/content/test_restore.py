"""Nothing invented, nothing lost: the report body is the seed's line 38 with only whitespace and longer fences
added."""

from __future__ import annotations

import re

_FENCE_RUN = re.compile(r"`{3,}|~{3,}")


def normalise(text: str) -> str:
    """Return `text` with every whitespace run as one space and every 3+ backtick/tilde run as three backticks."""
    return " ".join(_FENCE_RUN.sub("```", text).split())


def _first_difference(a: str, b: str) -> int | None:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


def _diff_window(restored: str, seed: str, at: int, width: int = 120) -> str:
    start = max(0, at - width)
    return (
        f"first difference at normalised offset {at}:\n"
        f"  restored: …{restored[start:at]}⟦{restored[at:at + width]}⟧\n"
        f"  seed:     …{seed[start:at]}⟦{seed[at:at + width]}⟧"
    )


def test_normalise_collapses_whitespace_and_fence_length():
    assert normalise("a\n\n  b\t````py\nx\n````\n") == "a b ```py x ```"
    assert normalise("~~~\nx\n~~~~") == "``` x ```"
    assert normalise("`x` ``y``") == "`x` ``y``"


def test_first_difference_finds_edits_and_truncation():
    assert _first_difference("abc", "abc") is None
    assert _first_difference("abXc", "abc") == 2
    assert _first_difference("ab", "abc") == 2


def test_body_is_the_seed_markdown_with_only_whitespace_restored(body, seed_lines):
    restored, seed = normalise(body), normalise(seed_lines[37])
    at = _first_difference(restored, seed)
    assert at is None, _diff_window(restored, seed, at)


def test_body_has_its_line_breaks_back(body):
    # The restore must actually restore: a body left on one line would pass the comparison above.
    lines = body.splitlines()
    assert len(lines) > 800
    assert max(len(line) for line in lines) < 2500
