"""DNS labels and domain names: the one rule the builder (--subdomain), deploy and teardown all apply."""

from __future__ import annotations

import re

from graphsite.errors import ConfigError

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_RULE = "use 1-63 characters a-z, 0-9 and '-', not starting or ending with '-'"
IDNA_PREFIX = "xn--"
_IDNA_HINT = ("give the xn-- form of the name you mean (xn--bcher-kva for bücher; given the name itself, graphsite "
              "prints its xn-- form), or a name without xn--")


def is_label(name: str) -> bool:
    """Return whether `name` has the shape of a DNS label as graphsite writes one (lower case, RFC 1123): what a
    subdomain's own files are named after, so a file named otherwise is never one of them."""
    return bool(_LABEL.match(name)) and name.isascii() and "\n" not in name


def check_label(name: str, *, what: str = "--subdomain") -> str:
    """Return `name` lower-cased when it is a valid DNS label (RFC 1123; an `xn--` label only when it is valid
    IDNA), else raise ConfigError."""
    label = name.strip().lower()
    if not label.isascii():
        raise _not_ascii(name, label, what)
    if not _LABEL.match(label):
        raise ConfigError(f"{what}: {name!r} is not a valid DNS label", hint=_RULE)
    if label.startswith(IDNA_PREFIX):
        _check_a_label(name, label, what)
    elif label[2:4] == "--":
        raise ConfigError(f"{what}: {name!r} has '--' in positions 3-4, which DNS reserves for encodings "
                          f"(only {IDNA_PREFIX} labels, IDNA, may have it)", hint="choose another name")
    return label


def _check_a_label(name: str, label: str, what: str) -> None:
    """Refuse an `xn--` label that is not the IDNA form of a valid name: it must decode, be a name IDNA allows,
    and encode back to itself."""
    invalid = f"{what}: {name!r} starts with {IDNA_PREFIX} but is not valid IDNA"
    import idna  # only an xn-- label needs IDNA's tables (2 ms of every start-up otherwise)

    punycode = label.removeprefix(IDNA_PREFIX)
    try:
        decoded = punycode.encode("ascii").decode("punycode")
    except UnicodeError:
        raise ConfigError(f"{invalid}: {punycode!r} is not Punycode (it decodes to nothing)",
                          hint=_IDNA_HINT) from None
    try:
        encoded = idna.alabel(decoded).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise ConfigError(f"{invalid}: it decodes to {decoded!r}, which IDNA does not allow ({exc})",
                          hint=_IDNA_HINT) from None
    if encoded != label:
        raise ConfigError(f"{invalid}: it decodes to {decoded!r}, whose IDNA form is {encoded!r}",
                          hint=f"use {encoded!r}")


def _not_ascii(name: str, label: str, what: str) -> ConfigError:
    """Return the refusal of a name written in Unicode, naming its IDNA (xn--) form when it has one."""
    import idna

    message = f"{what}: {name!r} is not ASCII: a DNS label is written in its IDNA form (xn--…)"
    try:
        encoded = idna.encode(label, uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        return ConfigError(f"{message}, and this name has none", hint=_RULE)
    if not _LABEL.match(encoded):  # several labels (a dot), or longer than 63 characters once encoded
        return ConfigError(f"{message}, and its IDNA form {encoded!r} is not one DNS label", hint=_RULE)
    return ConfigError(message, hint=f"use {encoded!r}, the IDNA form of {label!r}")


def check_domain(domain: str) -> str:
    """Return `domain` lower-cased when every label of it is valid, else raise ConfigError."""
    labels = domain.strip().lower().rstrip(".").split(".")
    if len(labels) < 2:
        raise ConfigError(f"site.domain: expected a domain name, got {domain!r}")
    for label in labels:
        check_label(label, what="site.domain")
    return ".".join(labels)


def subdomain_of(name: str, domain: str, *, what: str = "NAME") -> str:
    """Return the deployment name NAME gives: NAME is the subdomain itself or its fqdn under `domain` (any case,
    a trailing dot allowed). The one reading of a name that every command taking one applies."""
    text, domain = name.strip().lower().rstrip("."), domain.strip().lower().rstrip(".")
    if "." not in text:
        return check_label(name, what=what)
    where, suffix = f"the configured domain {domain} (site.domain)", "." + domain
    if text == domain:
        raise ConfigError(f"{what}: {name!r} is {where} itself, not a deployment under it",
                          hint=f"name the deployment: SUBDOMAIN or SUBDOMAIN.{domain}")
    if not text.endswith(suffix):
        raise ConfigError(f"{what}: {name!r} is not under {where}",
                          hint=f"give the subdomain alone or SUBDOMAIN.{domain}; for another domain, set site.domain "
                               "(graphsite.toml, or GRAPHSITE_SITE_DOMAIN)")
    label = text.removesuffix(suffix)
    if "." in label:
        raise ConfigError(f"{what}: {name!r} is more than one label under {where}: a deployment is one label, "
                          f"SUBDOMAIN.{domain}", hint=f"give the subdomain alone or SUBDOMAIN.{domain}")
    return check_label(label, what=f"{what} {name.strip()!r}")
