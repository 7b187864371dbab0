"""verify's probes: the TLS context of a CA bundle, made once per bundle as it is on disk."""

from __future__ import annotations

import pytest
import trustme

from graphsite.errors import ConfigError
from graphsite.publisher.probe import tls_context


def test_a_bundle_is_loaded_once_and_again_when_it_is_rewritten(tmp_path):
    path = tmp_path / "ca.pem"
    first, second = trustme.CA(), trustme.CA()
    first.cert_pem.write_to_path(str(path))
    context = tls_context(str(path))
    assert tls_context(str(path)) is context  # about 20 ms saved on every probe of a verify
    second.cert_pem.write_to_path(str(path))  # the lab rewrites its CA at one path
    again = tls_context(str(path))
    assert again is not context
    assert again.get_ca_certs(binary_form=True) != context.get_ca_certs(binary_form=True)


def test_a_bundle_that_cannot_load_names_the_setting(tmp_path):
    (tmp_path / "empty.pem").write_text("no certificate here\n")
    for path in (tmp_path / "empty.pem", tmp_path / "missing.pem"):
        with pytest.raises(ConfigError, match=f"dns.ca_bundle: cannot load {path}"):
            tls_context(str(path), setting="dns.ca_bundle")
