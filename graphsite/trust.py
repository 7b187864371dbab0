"""The CA bundles graphsite's link checker trusts, each read once a run: the configuration's check of
links.ca_bundle reads the file, and the link checker's TLS thread (citations/tls.py) takes the context it made.

Reading a bundle of about 150 authorities is 20 ms of CPU. A context is kept per content of its file (the sha256
of its bytes, 0.15 ms for such a bundle, hashed at every call): a file rewritten since is read again, whatever its
size and times say (a rewrite within one tick of a coarse clock keeps them all), and one only touched is not. A
context is kept only when the file still holds what was hashed once ssl has read it, and one that cannot be read
raises every time it is asked for (nothing is kept of a failure)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

KEEP = 8  # contexts: the newest made are kept (a run uses one)
_contexts: dict[bytes, ssl.SSLContext] = {}  # by the sha256 of the bundle they were made from, oldest first
_lock = threading.Lock()  # the configuration's check and the link check's TLS thread may ask at once


def bundle_context(path: str) -> ssl.SSLContext:
    """Return a client TLS context that verifies against the PEM CA bundle at `path`, made once per content of the
    file; raise OSError (ssl.SSLError: a file that holds no certificate) or ValueError, as ssl does."""
    digest = _digest(path)
    with _lock:
        found = _contexts.get(digest)
    if found is not None:
        return found
    import ssl

    context = ssl.create_default_context(cafile=path)
    if _digest(path) == digest:  # what ssl read is what was hashed (else the next call reads it again)
        with _lock:
            _contexts[digest] = context
            for old in list(_contexts)[:-KEEP]:
                del _contexts[old]
    return context


def _digest(path: str) -> bytes:
    import hashlib

    with open(path, "rb") as bundle:
        return hashlib.sha256(bundle.read()).digest()
