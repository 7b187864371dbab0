"""The CA bundles graphsite's link checker trusts, each read once a run: the configuration's check of
links.ca_bundle reads the file, and the link checker's TLS thread (citations/tls.py) takes the context it made.

Reading a bundle of about 150 authorities is 20 ms of CPU. A context is kept per version of its file (device,
inode, size, modification and change times): a file replaced or rewritten since is read again, and one that
cannot be read raises every time it is asked for (nothing is kept of a failure)."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl


def bundle_context(path: str) -> ssl.SSLContext:
    """Return a client TLS context that verifies against the PEM CA bundle at `path`, made once per version of the
    file; raise OSError (ssl.SSLError: a file that holds no certificate) or ValueError, as ssl does."""
    status = os.stat(path)
    return _context(path, (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns))


@lru_cache(maxsize=8)
def _context(path: str, _version: tuple[int, ...]) -> ssl.SSLContext:
    import ssl

    return ssl.create_default_context(cafile=path)
