"""A real HTTPS server on 127.0.0.1 for the tests that read pages over TLS (probe, diff's live page)."""

from __future__ import annotations

import contextlib
import http.server
import ssl
import threading
from collections.abc import Iterator

import trustme


@contextlib.contextmanager
def serve_https(handler: type[http.server.BaseHTTPRequestHandler], certificate: trustme.LeafCert) -> Iterator[str]:
    """Yield host:port of a threaded HTTPS server answering with `handler` and showing `certificate`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certificate.configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
