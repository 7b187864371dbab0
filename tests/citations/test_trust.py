"""links.ca_bundle is read once a run (graphsite/trust.py), and again whenever its content changes: the context
is known by the sha256 of the file's bytes, not by its size and times, which a rewrite can keep."""

from __future__ import annotations

import os
import ssl
from pathlib import Path

import pytest
import trustme

from graphsite.trust import bundle_context


def _pem(authority: trustme.CA, size: int) -> bytes:
    """Return the authority's certificate as PEM, after a line of text (which PEM readers skip) padding it to
    `size` bytes: two bundles of one size."""
    pem = authority.cert_pem.bytes()
    return b"# " + b"x" * (size - len(pem) - 3) + b"\n" + pem


def _trusted(context: ssl.SSLContext) -> list[bytes]:
    return context.get_ca_certs(binary_form=True)


def _der(authority: trustme.CA) -> bytes:
    return ssl.PEM_cert_to_DER_cert(authority.cert_pem.bytes().decode("ascii"))


def test_a_bundle_rewritten_with_its_size_and_times_kept_is_read_again(tmp_path: Path) -> None:
    first, second = trustme.CA(), trustme.CA()
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(_pem(first, 2000))
    before = os.stat(bundle)
    context = bundle_context(str(bundle))
    assert _trusted(context) == [_der(first)]
    assert bundle_context(str(bundle)) is context  # read once

    with bundle.open("r+b") as handle:  # the same file (inode), the same size, then its times put back
        handle.write(_pem(second, 2000))
    os.utime(bundle, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = bundle_context(str(bundle))
    assert _trusted(again) == [_der(second)]

    os.utime(bundle, ns=(before.st_atime_ns + 10**9, before.st_mtime_ns + 10**9))  # touched: the same trust
    assert bundle_context(str(bundle)) is again

    bundle.write_bytes(first.cert_pem.bytes())  # another size: read again, and the old content is known again
    assert _trusted(bundle_context(str(bundle))) == [_der(first)]


def test_a_bundle_that_cannot_be_read_raises_every_time(tmp_path: Path) -> None:
    """Nothing is kept of a failure: a bundle fixed since is taken at the next call."""
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(b"no certificate here\n")
    for _ in range(2):
        with pytest.raises(ssl.SSLError):
            bundle_context(str(bundle))
    authority = trustme.CA()
    bundle.write_bytes(authority.cert_pem.bytes())
    assert _trusted(bundle_context(str(bundle))) == [_der(authority)]
    with pytest.raises(FileNotFoundError):
        bundle_context(str(tmp_path / "gone.pem"))
