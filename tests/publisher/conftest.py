"""Fixtures of the publisher tests: a fixed plan for golden files, and the lab (see lab_support.py)."""

from __future__ import annotations

import dataclasses
import os
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from graphsite.config import Config, load_config
from graphsite.errors import ConfigError

GOLDEN = Path(__file__).parent / "golden"
NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)
HTML = "<!doctype html><html><head><title>Graph engineering</title></head><body>live graph-eng-0a1b2c</body></html>"


def _golden(name: str, text: str) -> str:
    """Return the golden file `name`; with GRAPHSITE_UPDATE_GOLDEN=1, first rewrite it with `text`."""
    path = GOLDEN / name
    if os.environ.get("GRAPHSITE_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


@pytest.fixture
def golden():
    return _golden


@pytest.fixture
def sample():
    """A small page and the moment plans are made at."""
    return HTML, NOW


@pytest.fixture
def production() -> Config:
    return Config()


@pytest.fixture
def fixed_plan(production):
    import hashlib

    from graphsite.publisher.plan import make_plan

    sha = hashlib.sha256(HTML.encode()).hexdigest()
    return make_plan(production, "graph-eng-0a1b2c", html=HTML, sha256=sha, title="Graph engineering",
                     content="config", now=NOW, ttl=timedelta(days=7))


# --- the lab ---------------------------------------------------------------------------------------------------



@dataclasses.dataclass
class PubLab:
    """The lab as the publisher tests use it: the lab's configuration with a prefix unique to this session,
    the CLI run in-process, the fake Cloudflare's control API, and a record of every output (token check)."""

    config_path: Path
    prefix: str
    outputs: list = dataclasses.field(default_factory=list)

    @property
    def env(self) -> dict:
        return {"GRAPHSITE_CONFIG": str(self.config_path), "GRAPHSITE_SITE_PREFIX": self.prefix,
                "CLOUDFLARE_API_TOKEN": None, "NO_COLOR": "1"}

    @property
    def config(self) -> Config:
        return load_config(self.config_path, environ={"GRAPHSITE_SITE_PREFIX": self.prefix})

    def run(self, *args: str, env: dict | None = None):
        """Run `graphsite ARGS` in-process; keep stdout and stderr apart (result.stdout / result.stderr)."""
        from graphsite.cli import main

        result = CliRunner().invoke(main, list(args), env={**self.env, **(env or {})}, catch_exceptions=False)
        self.outputs.append(result.stdout + result.stderr)
        return result

    def name(self) -> str:
        return f"{self.prefix}-{secrets.token_hex(3)}"

    @property
    def control_url(self) -> str:
        return self.config.dns.api_base_url.removesuffix("/client/v4")

    def control(self, method: str, path: str, **body) -> object:
        response = httpx.request(method, f"{self.control_url}/__lab/{path}", json=body or None, timeout=10)
        response.raise_for_status()
        return response.json()

    def api(self, method: str, path: str, **body) -> httpx.Response:
        """Call the fake Cloudflare API itself, as another tool on the zone would."""
        config = self.config
        return httpx.request(method, f"{config.dns.api_base_url}/zones/{config.dns.zone_id}/{path}",
                             json=body or None, headers={"Authorization": f"Bearer {config.token()}"}, timeout=10)

    def clients(self):
        from graphsite.publisher.clients import Clients

        return Clients.connect(self.config)

    def cleanup(self) -> None:
        """Tear down everything named with this session's prefix, in every system."""
        from graphsite.publisher.inventory import deployments
        from graphsite.publisher.teardown import teardown

        config, clients = self.config, self.clients()
        try:
            for entry in deployments(config, clients):
                if entry.subdomain.startswith(self.prefix + "-"):
                    teardown(config, entry.subdomain, clients)
            for record in _named(clients, self.prefix, config):
                clients.dns.delete(record.id)
        finally:
            clients.close()


def _named(clients, prefix: str, config: Config) -> list:
    """Records a test made by hand (a CNAME, a foreign A) under this session's prefix."""
    found = clients.dns._client.dns.records.list(zone_id=config.dns.zone_id, per_page=100)
    from graphsite.publisher.cloudflare import _record

    return [r for r in map(_record, found) if r.name.startswith(prefix + "-")]


def _lab_config_path(request) -> Path | None:
    explicit = os.environ.get("GRAPHSITE_TEST_LAB_CONFIG")
    if explicit:
        return Path(explicit)
    try:
        lab = request.getfixturevalue("lab")
    except pytest.FixtureLookupError:
        lab = None
    if lab is not None:
        for attribute in ("config_path", "path"):
            if getattr(lab, attribute, None):
                return Path(getattr(lab, attribute))
    default = Path(__file__).resolve().parents[2] / ".lab" / "graphsite.toml"
    return default if default.is_file() else None


@pytest.fixture(scope="session")
def publab(request) -> PubLab:
    path = _lab_config_path(request)
    problem = None if path else "no lab configuration (.lab/graphsite.toml)"
    if path:
        try:
            config = load_config(path, environ={})
            httpx.get(config.dns.api_base_url.removesuffix("/client/v4") + "/__lab/health", timeout=3)
        except (httpx.HTTPError, OSError, ConfigError) as exc:  # the lab is down: say so in one line
            problem = f"the lab does not answer ({type(exc).__name__}: {exc})"
    if problem:
        if os.environ.get("GRAPHSITE_LAB_REQUIRED") == "1":
            pytest.fail(f"{problem}; the lab is required here (GRAPHSITE_LAB_REQUIRED=1)")
        pytest.skip(f"{problem}: start it with `make lab`")
    lab = PubLab(config_path=path, prefix=f"gstest{secrets.token_hex(2)}")
    lab.cleanup()
    yield lab
    lab.cleanup()
    token = lab.config.token()
    assert not any(token in text for text in lab.outputs), "the Cloudflare token appeared in an output"
