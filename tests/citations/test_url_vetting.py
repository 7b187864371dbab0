"""URL vetting is done once per distinct URL, and a host name is never parsed as an IP address first."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from graphsite import urls
from graphsite.usecases.build import checked_page


def test_each_distinct_url_is_vetted_once(tmp_path: Path) -> None:
    count = 30
    lines = ["# Cited often\n", "## 1. Claims\n"]
    lines += [f"Claim {n} holds [[{n}](https://example.org/doc/{n})], again [[{n}](https://example.org/doc/{n})].\n"
              for n in range(1, count + 1)]
    lines += ["\n## References\n"] + [f"{n}. Source {n}. https://example.org/doc/{n}\n" for n in range(1, count + 1)]
    source = tmp_path / "report.md"
    source.write_text("".join(lines), encoding="utf-8")
    urls.problem.cache_clear()
    page = checked_page(source, fonts="system")
    assert len(page.report.references) == count
    info = urls.problem.cache_info()
    assert info.misses == count, info  # vetted once each, though the page and the checks ask several times
    assert info.hits >= count


@pytest.mark.parametrize("host", ["127.0.0.1", "8.8.8.8", "10.0.0.1", "999.1.1.1", "1.2.3", "01.2.3.4", "::1",
                                  "[::1]", "[fe80::1]", "2001:db8::1", "example.org", "localhost", "1.2.3.4.5",
                                  "a1.2.3.4", "", ".", "0x7f.0.0.1"])
def test_the_address_test_agrees_with_ipaddress(host: str) -> None:
    try:
        expected: object = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        expected = None
    assert urls._ip(host) == expected


@pytest.mark.parametrize("url", ["http://127.0.0.1/", "https://10.1.2.3/x", "https://example.org/", "http://[::1]/",
                                 "https://192.168.1.1:8443/"])
def test_addresses_are_still_judged(url: str) -> None:
    assert (urls.problem(url) is None) == (url == "https://example.org/")
