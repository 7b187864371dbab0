"""HTTP probes for verify: one GET over the real network path, to a chosen address with the Host and SNI
of the fqdn, keeping the peer certificate the TLS handshake verified."""

from __future__ import annotations

import functools
import hashlib
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx

from graphsite.errors import ConfigError

# Why a request got no answer: `unreachable` (refused, reset, timed out, closed mid-handshake: nothing answers
# yet), `no-certificate` (the edge holds no certificate for the name yet: it shows one that chains to no trusted
# issuer, such as Traefik's default certificate while ACME runs, or refuses the handshake), `tls` (any other TLS
# failure: a name or a date that does not match), `invalid` (the request could not be made: host:abc).
Failure = Literal["", "unreachable", "no-certificate", "tls", "invalid"]
# OpenSSL's verify codes of a chain that ends at no trusted issuer (X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
# _DEPTH_ZERO_SELF_SIGNED_CERT, _SELF_SIGNED_CERT_IN_CHAIN, _UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
# _UNABLE_TO_VERIFY_LEAF_SIGNATURE)
_UNTRUSTED = frozenset({2, 18, 19, 20, 21})
# the alerts of a server that has no certificate for the name it was asked for
_NO_CERTIFICATE = frozenset({"TLSV1_ALERT_INTERNAL_ERROR", "TLSV1_UNRECOGNIZED_NAME"})


@dataclass(frozen=True)
class Probe:
    url: str
    status: int = 0
    location: str = ""
    body: bytes = field(default=b"", repr=False)
    cert: dict[str, Any] | None = None  # ssl.SSLSocket.getpeercert(): only present when the chain verified
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    failure: Failure = ""  # why there is no answer (set with `error`)


def tls_context(ca_bundle: str = "", *, setting: str = "verify.ca_bundle") -> ssl.SSLContext:
    """Return a verifying context: the configured CA bundle only, or the system's trust store; raise ConfigError
    naming `setting` when the bundle cannot be loaded. Made once per bundle as it is on disk (about 20 ms each:
    verify probes many times); a bundle whose content changed since is loaded again."""
    try:
        content = hashlib.sha256(Path(ca_bundle).read_bytes()).hexdigest() if ca_bundle else ""
        return _context(ca_bundle, content)
    except OSError as exc:  # ssl.SSLError is one: a file that holds no certificate
        reason = getattr(exc, "reason", None) or exc.strerror or str(exc)
        raise ConfigError(f"{setting}: cannot load {ca_bundle}: {reason}",
                          hint="point it at a PEM file of CA certificates, or leave it empty for the system trust") \
            from None


@functools.lru_cache(maxsize=8)
def _context(ca_bundle: str, _content: str) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_bundle or None)


class HttpEdge:
    """The edge port (publisher/ports.py) over real HTTP: `fetch` below."""

    def fetch(self, scheme: str, fqdn: str, address: str = "", *, ca_bundle: str = "", timeout: float = 5.0,
              auth: tuple[str, str] | None = None, headers: dict[str, str] | None = None,
              insecure: bool = False) -> Probe:
        return fetch(scheme, fqdn, address, ca_bundle=ca_bundle, timeout=timeout, auth=auth, headers=headers,
                     insecure=insecure)


def fetch(scheme: str, fqdn: str, address: str = "", *, ca_bundle: str = "", timeout: float = 5.0,
          auth: tuple[str, str] | None = None, headers: dict[str, str] | None = None,
          insecure: bool = False) -> Probe:
    """GET `<scheme>://<fqdn>/`, connecting to `address` (host:port) instead of resolving the name when given;
    `auth` sends Basic credentials, `headers` more request headers (Host is always the page's); `insecure`
    skips certificate verification (for teardown's proof only: it asks whether the page is served, not what)."""
    url, shown = f"{scheme}://{address or fqdn}/", f"{scheme}://{fqdn}/" + (f" via {address}" if address else "")
    extensions = {"sni_hostname": fqdn} if scheme == "https" else {}
    try:
        verify: ssl.SSLContext | bool = False if insecure else tls_context(ca_bundle)
        with httpx.Client(verify=verify, timeout=timeout, trust_env=False) as client, \
                client.stream("GET", url, headers={**(headers or {}), "Host": fqdn}, extensions=extensions,
                              auth=auth) as response:
            cert = None
            if scheme == "https":
                stream = response.extensions.get("network_stream")
                ssl_object = stream.get_extra_info("ssl_object") if stream else None
                cert = ssl_object.getpeercert() if ssl_object else None
            body = response.read()
            return Probe(url=shown, status=response.status_code, location=response.headers.get("location", ""),
                         body=body, cert=cert, headers=dict(response.headers))
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL: an address like host:abc in the config
        return Probe(url=shown, error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                     failure=failure(exc))


def failure(exc: BaseException) -> Failure:
    """Return why `exc`, an exception of httpx, left a request unanswered (see Failure)."""
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return "invalid"
    cause: BaseException | None = exc
    while cause is not None:  # httpx raises from httpcore, which raises from the ssl module's error
        if isinstance(cause, ssl.SSLCertVerificationError):
            return "no-certificate" if cause.verify_code in _UNTRUSTED else "tls"
        if isinstance(cause, ssl.SSLEOFError | ssl.SSLZeroReturnError | ssl.SSLSyscallError):
            return "unreachable"
        if isinstance(cause, ssl.SSLError):
            return "no-certificate" if cause.reason in _NO_CERTIFICATE else "tls"
        cause = cause.__cause__ or cause.__context__
    return "unreachable"
