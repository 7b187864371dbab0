"""SHA-256 and BLAKE2b without importing hashlib: a plain build hashes a few hundred KB, and hashlib's import
(OpenSSL's libcrypto, loaded and linked) is about 3% of the whole build of a short document, more than the hashing.

`sha256` is CPython's own (the same digest as OpenSSL's, about six times slower: keep it to what must be SHA-256,
the CSP's hashes, a page's identity, a cache key that must not change); `blake2b` is CPython's own and as fast as
OpenSSL's SHA-256, for a new cache key. Each falls back to hashlib's where the interpreter lacks the module.
`base64_text` writes bytes the way the page carries them: a CSP hash, a `data:` URL."""

from __future__ import annotations

import binascii
from typing import TYPE_CHECKING

__all__ = ["base64_text", "blake2b", "sha256"]

if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12 on
        except ImportError:
            from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b


def base64_text(data: bytes) -> str:
    """Return `data` in standard base64, padded, on one line (binascii's, without the base64 module's import)."""
    return binascii.b2a_base64(data, newline=False).decode("ascii")
