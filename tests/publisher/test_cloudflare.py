"""The Cloudflare adapter's errors, against a real socket where nothing listens (no lab needed)."""

import socket

import pytest

from graphsite.errors import ConfigError
from graphsite.publisher.cloudflare import Dns, DnsError

SECRET = "gs-test-secret-token-unreachable"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_an_unreachable_api_names_the_url_and_never_the_token(production, monkeypatch):
    base = f"http://127.0.0.1:{_closed_port()}/client/v4"
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", SECRET)
    config = production.replace("dns", api_base_url=base, zone_id="0" * 32, retries=0, timeout=2.0)
    dns = Dns(config)
    try:
        with pytest.raises(DnsError) as info:
            dns.records("gs-x.hhdevs.space")
    finally:
        dns.close()
    assert f"cannot reach {base} (APIConnectionError)" in info.value.message
    assert "dns.api_base_url" in info.value.message and SECRET not in info.value.message


def test_no_token_is_a_config_error(production, monkeypatch):
    monkeypatch.delenv("CLOUDFLARE_API_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="no Cloudflare API token"):
        Dns(production)
