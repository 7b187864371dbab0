"""Subdomain names: drawn from a cryptographic source, validated as DNS labels, never reused."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from graphsite.errors import ConfigError
from graphsite.labels import check_label

_DRAWS = 20


def fqdn(subdomain: str, domain: str) -> str:
    return f"{subdomain}.{domain}"


def draw_name(prefix: str, is_taken: Callable[[str], bool], *, token: Callable[[int], str] = secrets.token_hex) -> str:
    """Return `<prefix>-<6 hex>` that `is_taken` does not claim, drawing again on a collision."""
    check_label(f"{prefix}-000000", what="site.prefix")
    for _ in range(_DRAWS):
        name = f"{prefix}-{token(3)}"
        if not is_taken(name):
            return name
    raise ConfigError(f"site.prefix: {_DRAWS} random names under {prefix!r} were all taken",
                      hint="tear down old deployments (graphsite gc) or choose another prefix")
