"""Bot walls' challenges: the one table of signatures that tells a challenge from a real answer, in any status.

A challenge page (a CAPTCHA, a JavaScript proof of work) is what a browser's user clicks through and a robot
cannot: the link may well work, so the verdict is `blocked`, never `ok` (a challenge answered 200 or 202) nor
`dead` (one answered 403, 405 or 503). Pure: the checker gives the headers and the first bytes of the body.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    """A vendor's challenge, told by a header (name, and the values that mark a challenge) or by bytes near the
    start of the body."""

    vendor: str
    header: str = ""  # lower case
    values: tuple[str, ...] = ()  # lower case; the header's value must be one of them
    marker: bytes = b""


SIGNATURES = (
    Signature("Cloudflare", header="cf-mitigated", values=("challenge",)),
    Signature("Cloudflare", marker=b"<title>Just a moment"),
    Signature("Cloudflare", marker=b"challenge-platform"),
    Signature("Cloudflare", marker=b"cf_chl_opt"),
    Signature("Cloudflare", marker=b"cf-browser-verification"),
    Signature("Cloudflare", marker=b"Attention Required! | Cloudflare"),
    Signature("AWS WAF", header="x-amzn-waf-action", values=("captcha", "challenge")),
    Signature("AWS WAF", marker=b"AwsWafIntegration"),
    Signature("Akamai", marker=b"sec-if-cpt-container"),
    Signature("Akamai", marker=b"/_sec/cp_challenge/"),
    Signature("Akamai", marker=b"Access Denied</title>"),
    Signature("Anubis", marker=b"anubis_challenge"),
    Signature("DataDome", marker=b"captcha-delivery.com"),
    Signature("Vercel", header="x-vercel-mitigated", values=("challenge",)),
    Signature("Vercel", marker=b"Vercel Security Checkpoint"),
    Signature("Imperva", marker=b"_Incapsula_Resource"),
    Signature("PerimeterX", marker=b"px-captcha"),
    Signature("Sucuri", marker=b"Sucuri WebSite Firewall"),
)
_HEADERS = tuple(s for s in SIGNATURES if s.header)
_MARKERS = tuple(s for s in SIGNATURES if s.marker)


def challenge_by(headers: Mapping[str, str], body_start: bytes = b"") -> str:
    """Return the vendor whose challenge this answer is (by its headers, then its body's start), or ""."""
    for signature in _HEADERS:
        value = headers.get(signature.header)
        if value is not None and value.strip().lower() in signature.values:
            return signature.vendor
    if body_start:
        for signature in _MARKERS:
            if signature.marker in body_start:
                return signature.vendor
    return ""
