"""How fast `graphsite links` reads a page for its `#fragment` targets (citations/pages.py, AnchorScanner), beside
the standard library's incremental html.parser doing the same job, on the pages that used to stall a check:
a big inline script, a big comment, a huge start tag, and an ordinary long page. Both are fed the same chunks.

Run:  .venv/bin/python benchmarks/page_scan.py [--runs 5] [--chunk 65536] [--megabytes 4]

The time is the median of the runs, in this process (the scanner runs inside the checker's event loop, so the
time is also how long every other link waits). Printed, never asserted. Target (the scanner's design): linear in
the page whatever the chunks, and faster than html.parser on every page.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from html.parser import HTMLParser

from graphsite.citations.pages import AnchorScanner


class Peer(HTMLParser):
    """html.parser collecting what AnchorScanner collects: every id, and the name of <a>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.names: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value and (key == "id" or (key == "name" and tag == "a")):
                self.names.add(value)


def pages(megabytes: int) -> dict[str, bytes]:
    """Return each page of the table, about `megabytes` MB each, with a target before and after its bulk."""
    size = megabytes * 1_000_000
    line = b"var a = '<b id=hidden>'; if (x < y && y > z) { s = \"-- not the end --\"; }\n"
    bulk = line * (size // len(line))
    ordinary = b"".join(b"<h2 id='s%d'>Section %d</h2><p class=x>Some <a href='#s%d'>text</a> here.</p>\n"
                        % (n, n, n) for n in range(size // 80))
    head, tail = b"<!doctype html><meta charset=utf-8><p id=before>", b"<p id=after>end</p>"
    return {"inline script": head + b"<script>" + bulk + b"</script>" + tail,
            "comment": head + b"<!--" + bulk.replace(b"-->", b"- >") + b"-->" + tail,
            "huge start tag": head + b"<div " + b"data-x='y' " * (size // 11) + b"id=deep>" + tail,
            "ordinary page": head + ordinary + tail}


def ours(data: bytes, chunk: int) -> set[str]:
    scanner = AnchorScanner([])
    for start in range(0, len(data), chunk):
        scanner.feed(data[start:start + chunk])
    scanner.close()
    return scanner.names


def peer(data: bytes, chunk: int) -> set[str]:
    parser = Peer()
    for start in range(0, len(data), chunk):
        parser.feed(data[start:start + chunk].decode("utf-8"))  # ASCII pages: no character is split
    parser.close()
    return parser.names


def median_time(read: Callable[[bytes, int], set[str]], data: bytes, chunk: int, runs: int) -> tuple[float, set]:
    times, names = [], set()
    for _ in range(runs):
        start = time.perf_counter()
        names = read(data, chunk)
        times.append(time.perf_counter() - start)
    return statistics.median(times), names


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=_positive, default=5)
    parser.add_argument("--chunk", type=_positive, default=65536, help="bytes per feed (the checker reads 64 KiB)")
    parser.add_argument("--megabytes", type=_positive, default=4)
    args = parser.parse_args()
    print(f"{'page':<16} {'MB':>5} {'graphsite':>10} {'html.parser':>12} {'ratio':>7}  targets found")
    for name, data in pages(args.megabytes).items():
        mine, found = median_time(ours, data, args.chunk, args.runs)
        theirs, peer_found = median_time(peer, data, args.chunk, args.runs)
        agree = "same" if found == peer_found else f"differ: {sorted(found ^ peer_found)[:4]}"
        print(f"{name:<16} {len(data) / 1e6:>5.1f} {mine:>9.3f}s {theirs:>11.3f}s {mine / theirs:>6.2f}x  "
              f"{len(found)} ({agree})")


if __name__ == "__main__":
    main()
