"""Subdomain names: drawn from a cryptographic source, validated as DNS labels short enough for Swarm's config
names, never reused."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from graphsite.errors import ConfigError
from graphsite.labels import check_label

_DRAWS = 20
_TOKEN_HEX = 6  # the random part of a drawn name: <prefix>-<6 hex>
SWARM_CONFIG_NAME_MAX = 64  # Swarm refuses a config name longer than this
# A deployment's longest config name is its Caddyfile's, NAME-caddyfile-<12 hex of its sha256> (it has one in both
# content modes): that, not DNS's 63, sets how long a name may be.
_CADDYFILE_SUFFIX = len("-caddyfile-") + 12
LONGEST_NAME = SWARM_CONFIG_NAME_MAX - _CADDYFILE_SUFFIX
_WHY = (f"Swarm refuses config names over {SWARM_CONFIG_NAME_MAX} characters, and a deployment's Caddyfile is the "
        "config NAME-caddyfile-<12 hex>")


def fqdn(subdomain: str, domain: str) -> str:
    return f"{subdomain}.{domain}"


def check_length(name: str) -> str:
    """Return `name` when its configs' names fit Swarm's limit, else raise ConfigError saying the limit, the
    longest name and this one's length."""
    if len(name) > LONGEST_NAME:
        raise ConfigError(f"--subdomain: {name!r} has {len(name)} characters, more than the {LONGEST_NAME} a "
                          f"deployment name may have: {_WHY} ({len(name) + _CADDYFILE_SUFFIX} characters for this "
                          "name)",
                          hint=f"choose a name of at most {LONGEST_NAME} characters (a valid DNS label may have 63, "
                               "but Swarm's limit is the shorter), or use --random-subdomain")
    return name


def draw_name(prefix: str, is_taken: Callable[[str], bool], *, token: Callable[[int], str] = secrets.token_hex) -> str:
    """Return `<prefix>-<6 hex>` that `is_taken` does not claim, drawing again on a collision."""
    check_label(f"{prefix}-{'0' * _TOKEN_HEX}", what="site.prefix")
    longest = LONGEST_NAME - 1 - _TOKEN_HEX
    if len(prefix) > longest:
        raise ConfigError(f"site.prefix: {prefix!r} has {len(prefix)} characters, so its names "
                          f"(PREFIX-<{_TOKEN_HEX} hex>) would have {len(prefix) + 1 + _TOKEN_HEX}, more than the "
                          f"{LONGEST_NAME} a deployment name may have: {_WHY}",
                          hint=f"use a prefix of at most {longest} characters")
    for _ in range(_DRAWS):
        name = f"{prefix}-{token(_TOKEN_HEX // 2)}"
        if not is_taken(name):
            return name
    raise ConfigError(f"site.prefix: {_DRAWS} random names under {prefix!r} were all taken",
                      hint="tear down old deployments (graphsite gc) or choose another prefix")
