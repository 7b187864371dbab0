"""Fixtures of the publisher tests: a fixed plan for golden files, and the lab (see lab_support.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from graphsite.config import Config, load_config
from graphsite.errors import GraphsiteError

GOLDEN = Path(__file__).parent / "golden"
# cluster/ needs a lab of three nodes: tests/lab/test_cluster.py runs it inside a private three-node lab of its own.
collect_ignore = [] if os.environ.get("GRAPHSITE_CLUSTER") == "1" else ["cluster"]
NOW = datetime(2026, 7, 1, 12, 0, 0, tzinfo=UTC)
HTML = "<!doctype html><html><head><title>Graph engineering</title></head><body>live graph-eng-0a1b2c</body></html>"


def _golden(name: str, text: str) -> str:
    """Return the golden file `name`; with GRAPHSITE_UPDATE_GOLDEN=1, rewrite it with `text` and skip (a test
    that compares a file with what it just wrote would pass whatever the code does)."""
    path = GOLDEN / name
    if os.environ.get("GRAPHSITE_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
        pytest.skip(f"rewrote {path.name}: review the diff; a rewrite proves nothing")
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
                     content="config", now=NOW, ttl=timedelta(days=7), deployment_id="0a1b2c3d")


V01 = Path(__file__).parent / "fixtures" / "v01-deployment.json"


def _older_deployment(config: Config, name: str, created: datetime, expires: datetime) -> dict:
    """Return what graphsite 0.1.0 made for fixtures/v01-deployment.json's page deployed as `name` under `config`
    (its site, deploy and dns settings) at `created` until `expires`; `@CONFIG_ID@` stays: Docker gives the id."""
    from graphsite.publisher.deployment import iso

    values = {"NAME": name, "FQDN": f"{name}.{config.site.domain}", "CREATED": iso(created),
              "EXPIRES": iso(expires), "IMAGE": config.deploy.image, "NETWORK": config.deploy.network,
              "ENDPOINT_MODE": config.deploy.endpoint_mode, "RECORD_CONTENT": config.dns.record_content}
    text = V01.read_text(encoding="utf-8")
    for token, value in values.items():  # every token is a JSON string's whole text or a part of it
        text = text.replace(f"@{token}@", json.dumps(value)[1:-1])
    return json.loads(text)


@pytest.fixture
def v01():
    """Return a function giving the resources graphsite 0.1.0 made for one page (see fixtures/README.md)."""
    return _older_deployment


@pytest.fixture
def private_cf(tmp_path, monkeypatch, production):
    """A fake Cloudflare of this test's own (the lab's server, in a thread, on a free port) and a Config that
    uses it: faults injected here reach no one else. Yields (config, control client)."""
    import threading

    from graphsite_lab.cfserver import serve
    from graphsite_lab.client import LabCloudflare

    token, zone_id = secrets.token_urlsafe(24), "0123456789abcdef0123456789abcdef"
    (tmp_path / "cf-token").write_text(token + "\n")
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", token)
    server = serve(tmp_path, 0, "lab.graphsite.test", zone_id)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    config = production.replace("site", domain="lab.graphsite.test").replace(
        "dns", api_base_url=f"http://127.0.0.1:{port}/client/v4", zone_id=zone_id, record_content="127.0.0.1",
        retries=1)
    yield config, LabCloudflare(f"http://127.0.0.1:{port}")
    server.shutdown()
    server.server_close()


# --- the lab ---------------------------------------------------------------------------------------------------



SESSION_FAMILY = "gstest"  # every session's prefix: gstest<4 hex>


@dataclasses.dataclass
class PubLab:
    """The lab as the publisher tests use it: the lab's configuration with a prefix unique to this session,
    the CLI run in-process, the fake Cloudflare's control client, and a record of every output (token check)."""

    config_path: Path
    prefix: str
    cloudflare: object  # graphsite_lab.client.LabCloudflare
    outputs: list = dataclasses.field(default_factory=list)
    names: list = dataclasses.field(default_factory=list)  # every name handed out, torn down after its test

    @property
    def env(self) -> dict:
        return {"GRAPHSITE_CONFIG": str(self.config_path), "GRAPHSITE_SITE_PREFIX": self.prefix,
                "CLOUDFLARE_API_TOKEN": None, "NO_COLOR": "1"}

    @property
    def config(self) -> Config:
        return load_config(self.config_path, environ={"GRAPHSITE_SITE_PREFIX": self.prefix})

    def run(self, *args: str, env: dict | None = None, input: str | None = None):
        """Run `graphsite ARGS` in-process, `input` on its stdin; keep stdout and stderr apart (result.stdout /
        result.stderr)."""
        from graphsite.cli import main

        result = CliRunner().invoke(main, list(args), env={**self.env, **(env or {})}, input=input,
                                    catch_exceptions=False)
        self.outputs.append(result.stdout + result.stderr)
        return result

    def name(self) -> str:
        name = f"{self.prefix}-{secrets.token_hex(3)}"
        self.names.append(name)
        return name

    def tear_down(self, names: list[str]) -> list[str]:
        """Tear down whatever `names` still hold; return what could not be removed."""
        from graphsite.usecases.inventory import SurveySettings, survey
        from graphsite.usecases.teardown import TeardownSettings, teardown
        from tests.publisher.fakes import Recorder

        config, clients, failures = self.config, self.clients(), []
        try:
            held = survey(SurveySettings.from_config(config), clients).holdings
            for name in names:
                if name in held:
                    try:
                        report = teardown(TeardownSettings.from_config(config), name, clients, Recorder())
                        if report.left:
                            failures.append(f"{name}: left {report.left}")
                    except GraphsiteError as exc:
                        failures.append(f"{name}: {exc.message}")
        finally:
            clients.close()
        return failures

    def api(self, method: str, path: str, **body) -> httpx.Response:
        """Call the fake Cloudflare API itself, as another tool on the zone would."""
        config = self.config
        return httpx.request(method, f"{config.dns.api_base_url}/zones/{config.dns.zone_id}/{path}",
                             json=body or None, headers={"Authorization": f"Bearer {config.token()}"}, timeout=10)

    def clients(self):
        from graphsite.publisher.clients import Clients

        return Clients.connect(self.config)

    def cleanup(self, *, stale_sessions: bool = False) -> None:
        """Tear down everything named with this session's prefix, in every system; with `stale_sessions`,
        also what an earlier session that was killed before its cleanup left (created over 20 minutes ago)."""
        from graphsite.usecases.inventory import SurveySettings, survey
        from graphsite.usecases.teardown import TeardownSettings, teardown
        from tests.publisher.fakes import Recorder

        config, clients = self.config, self.clients()
        now = datetime.now(UTC)

        def mine(name: str, created: str = "") -> bool:
            if name.startswith(self.prefix + "-"):
                return True
            # an unknown age is not an old one: another worker's deploy in flight may not have stamped it yet
            old = bool(created) and now - datetime.fromisoformat(created) > timedelta(minutes=20)
            return stale_sessions and name.startswith(SESSION_FAMILY) and old

        failures = []
        try:
            for name, held in survey(SurveySettings.from_config(config), clients).holdings.items():
                if mine(name, held.created):
                    try:  # one name that will not go must not keep the others (and the records below) behind
                        report = teardown(TeardownSettings.from_config(config), name, clients, Recorder())
                        if not report.clean:
                            failures.append(f"{name}: left {report.left}, {report.page}")
                    except GraphsiteError as exc:
                        failures.append(f"{name}: {exc.message}")
            for record in self.cloudflare.records():  # also what a test made by hand (a CNAME, a foreign A)
                if mine(record["name"], record.get("created_on") or ""):
                    clients.dns.delete(record["id"])
        finally:
            clients.close()
        assert not failures, f"cleanup could not tear down: {failures}"


@pytest.fixture(autouse=True)
def _tear_down_the_test_s_names(request):
    """Every name a lab test drew is torn down when the test ends, pass or fail: one failure never leaves
    resources for the next test to trip on."""
    if "publab" not in request.fixturenames:
        yield
        return
    handle = request.getfixturevalue("publab")
    start = len(handle.names)
    yield
    failures = handle.tear_down(handle.names[start:])
    assert not failures, f"could not tear down after the test: {failures}"


@pytest.fixture(scope="session")
def publab(lab) -> PubLab:
    """The shared `lab` (tests/conftest.py: skipped without it, failed when GRAPHSITE_LAB_REQUIRED=1)."""
    handle = PubLab(config_path=lab.config_path, prefix=f"{SESSION_FAMILY}{secrets.token_hex(2)}",
                    cloudflare=lab.cloudflare)
    handle.cleanup(stale_sessions=True)
    yield handle
    try:
        token = lab.token()
        assert token and not any(token in text for text in handle.outputs), "the Cloudflare token was in an output"
    finally:
        handle.cleanup()
