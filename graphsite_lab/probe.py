"""Reach a page through the lab's edge the way a browser would: TCP to 127.0.0.1:<port>, TLS with the SNI of
the fqdn verified against the lab CA, HTTP with the fqdn as Host. Used by `status` and the lab's tests."""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Fetched:
    status: int
    headers: dict[str, str]
    body: bytes
    certificate: dict[str, Any] = field(default_factory=dict)


def fetch(fqdn: str, port: int, *, ca: Path | None, path: str = "/", timeout: float = 10, insecure: bool = False,
          auth: tuple[str, str] | None = None) -> Fetched:
    """GET `path` of `fqdn` through 127.0.0.1:`port`: https when `ca` is given (verified) or `insecure` is set
    (TLS without verification: to see what the edge answers a host it has no certificate for), else plain
    http; `auth` sends Basic credentials.

    A connection the edge closes or resets without any answer (during the TLS handshake too) is asked once
    more, on a new connection: the lab's edge reloads its whole configuration whenever a route file changes, and
    may close a connection it is accepting at that moment (docs/lab.md, "Limits"). Tests that count failed
    requests do not come here."""
    try:
        return _fetch_once(fqdn, port, ca=ca, path=path, timeout=timeout, insecure=insecure, auth=auth)
    except (ConnectionResetError, ssl.SSLEOFError):  # RemoteDisconnected is one; a handshake cut short the other
        time.sleep(0.2)
        return _fetch_once(fqdn, port, ca=ca, path=path, timeout=timeout, insecure=insecure, auth=auth)


def _fetch_once(fqdn: str, port: int, *, ca: Path | None, path: str, timeout: float, insecure: bool,
                auth: tuple[str, str] | None) -> Fetched:
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    certificate: dict[str, Any] = {}
    if ca is not None or insecure:
        context = ssl.create_default_context(cafile=str(ca) if ca else None)
        if insecure:
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        raw = context.wrap_socket(raw, server_hostname=fqdn)
        certificate = raw.getpeercert() or {}
    connection = http.client.HTTPConnection(fqdn, port, timeout=timeout)
    connection.sock = raw
    try:
        headers = {"Host": fqdn, "User-Agent": "graphsite-lab"}
        if auth:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return Fetched(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read(),
                       certificate)
    finally:
        connection.close()
