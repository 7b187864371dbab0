"""Bot walls' challenges: the one table of signatures that tells a challenge from a real answer, in any status.

A challenge page (a CAPTCHA, a JavaScript proof of work) is what a browser's user clicks through and a robot
cannot: the link may well work, so the verdict is `blocked`, never `ok` (a challenge answered 200 or 202) nor
`dead` (one answered 403, 405 or 503). Pure: the checker gives the headers and the first bytes of the body.
"""

from __future__ import annotations

from collections.abc import Mapping

from graphsite.values import frozen


@frozen
class Signature:
    """A vendor's challenge, told by a header (name, and the values that mark a challenge) or by bytes near the
    start of the body."""

    vendor: str
    header: str = ""  # lower case
    values: tuple[str, ...] = ()  # lower case; the header's value must be one of them
    marker: bytes = b""
    refusal_only: bool = False  # the marker is also in the vendor's ordinary pages: it counts in a refusal only


SIGNATURES = (
    Signature("Cloudflare", header="cf-mitigated", values=("challenge",)),
    Signature("Cloudflare", marker=b"<title>Just a moment"),
    # Cloudflare injects /cdn-cgi/challenge-platform/ scripts into ordinary pages (bot fight mode), Imperva its
    # _Incapsula_Resource script, and sites embed AWS WAF's JavaScript SDK: in a 200 or a 404 they say nothing.
    Signature("Cloudflare", marker=b"challenge-platform", refusal_only=True),
    Signature("Cloudflare", marker=b"cf_chl_opt"),
    Signature("Cloudflare", marker=b"cf-browser-verification"),
    Signature("Cloudflare", marker=b"Attention Required! | Cloudflare"),
    Signature("AWS WAF", header="x-amzn-waf-action", values=("captcha", "challenge")),
    Signature("AWS WAF", marker=b"AwsWafIntegration", refusal_only=True),
    Signature("Akamai", marker=b"sec-if-cpt-container"),
    Signature("Akamai", marker=b"/_sec/cp_challenge/"),
    Signature("Akamai", marker=b"Access Denied</title>", refusal_only=True),
    Signature("Anubis", marker=b"anubis_challenge"),
    Signature("DataDome", marker=b"captcha-delivery.com"),
    Signature("Vercel", header="x-vercel-mitigated", values=("challenge",)),
    Signature("Vercel", marker=b"Vercel Security Checkpoint"),
    Signature("Imperva", marker=b"_Incapsula_Resource", refusal_only=True),
    Signature("PerimeterX", marker=b"px-captcha"),
    Signature("Sucuri", marker=b"Sucuri WebSite Firewall"),
)
_HEADERS = tuple(s for s in SIGNATURES if s.header)
_MARKERS = tuple(s for s in SIGNATURES if s.marker)
_ANY_STATUS = tuple(s for s in _MARKERS if not s.refusal_only)
# The statuses a bot wall refuses with: there, a marker that ordinary pages may also hold is a challenge.
REFUSALS = frozenset({401, 403, 405, 429, 503, 999})


def challenge_by(status: int, headers: Mapping[str, str], body_start: bytes = b"") -> str:
    """Return the vendor whose challenge this answer is (by its headers, then its body's start), or ""."""
    for signature in _HEADERS:
        value = headers.get(signature.header)
        if value is not None and value.strip().lower() in signature.values:
            return signature.vendor
    if body_start:
        # Each marker is looked for in up to 32 KiB (about 7 µs each): one that cannot count is not looked for.
        for signature in _MARKERS if status in REFUSALS else _ANY_STATUS:
            if signature.marker in body_start:
                return signature.vendor
    return ""
