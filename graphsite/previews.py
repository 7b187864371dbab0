"""The name of a pull request's preview: `pr-<number>-<repository>`, made into one DNS label. The CI recipes in
docs/ci/ run `python -m graphsite.previews NUMBER REPOSITORY` and deploy under the name it prints."""

from __future__ import annotations

import re
import sys

from graphsite.errors import ConfigError
from graphsite.labels import check_label

_NOT_LABEL = re.compile(r"[^a-z0-9]+")
MAX_LABEL = 63


def preview_name(number: int | str, repository: str) -> str:
    """Return `pr-<number>-<repository>` as a DNS label: the repository's name (after its last `/`, as GitLab's
    `group/sub/project` and GitHub's `owner/repo` give it) lower-cased, every run of other characters one `-`,
    cut so the label fits 63 characters; raise ConfigError for a number that is not a positive integer."""
    text = str(number).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18 or int(text) < 1:  # int("²") would raise
        raise ConfigError(f"pull request number: expected a positive integer, got {number!r}")
    head = f"pr-{int(text)}"
    repo = _NOT_LABEL.sub("-", repository.rsplit("/", 1)[-1].lower()).strip("-")
    name = f"{head}-{repo}"[:MAX_LABEL].rstrip("-") if repo else head
    return check_label(name, what="preview name")  # the rule deploy applies: never a name it would refuse


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m graphsite.previews NUMBER REPOSITORY", file=sys.stderr)
        return 2
    try:
        print(preview_name(argv[0], argv[1]))
    except ConfigError as exc:
        print(f"Error: {exc.format_message()}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
