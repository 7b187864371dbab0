"""HTTP probes for verify: one GET over the real network path, to a chosen address with the Host and SNI
of the fqdn, keeping the peer certificate the TLS handshake verified."""

from __future__ import annotations

import functools
import hashlib
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from graphsite.errors import ConfigError


@dataclass(frozen=True)
class Probe:
    url: str
    status: int = 0
    location: str = ""
    body: bytes = field(default=b"", repr=False)
    cert: dict | None = None  # ssl.SSLSocket.getpeercert(): only present when the chain verified
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)


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
              insecure: bool = False) -> Probe:
        return fetch(scheme, fqdn, address, ca_bundle=ca_bundle, timeout=timeout, insecure=insecure)


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
        return Probe(url=shown, error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
