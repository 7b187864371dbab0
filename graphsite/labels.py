"""DNS labels and domain names: the one rule the builder (--subdomain), deploy and teardown all apply."""

from __future__ import annotations

import re

from graphsite.errors import ConfigError

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


def check_label(name: str, *, what: str = "--subdomain") -> str:
    """Return `name` lower-cased when it is a valid DNS label (RFC 1123), else raise ConfigError."""
    label = name.strip().lower()
    if not _LABEL.match(label):
        raise ConfigError(
            f"{what}: {name!r} is not a valid DNS label",
            hint="use 1-63 characters a-z, 0-9 and '-', not starting or ending with '-'",
        )
    if label[2:4] == "--":
        raise ConfigError(f"{what}: {name!r} has '--' in positions 3-4 (reserved for IDNA)",
                          hint="choose another name")
    return label


def check_domain(domain: str) -> str:
    """Return `domain` lower-cased when every label of it is valid, else raise ConfigError."""
    labels = domain.strip().lower().rstrip(".").split(".")
    if len(labels) < 2:
        raise ConfigError(f"site.domain: expected a domain name, got {domain!r}")
    for label in labels:
        check_label(label, what="site.domain")
    return ".".join(labels)
