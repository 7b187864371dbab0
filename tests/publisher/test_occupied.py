"""A part of a deployment that is there but whose stamp cannot be read (a route file edited by hand) is never
removed: teardown keeps it, saying so. The real use cases on the in-memory fakes (tests/publisher/fakes.py) and
real route files in a temporary directory."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml

from graphsite.commands import present
from graphsite.config import Config
from graphsite.publisher.clients import Clients
from graphsite.publisher.outcomes import KEPT, REMOVED
from graphsite.usecases.teardown import TeardownSettings, teardown
from tests.publisher.fakes import Recorder
from tests.publisher.test_rules import NOW, _clients, _config, _deploy, _state

NAME, FQDN = "live-1", "live-1.example.com"


def _live(tmp_path: Path) -> tuple[Config, Clients]:
    """A deployment made an hour ago that expires in a week: past deploy.gc_grace, far from its expiry."""
    config = _config(tmp_path)
    clients = _clients(config)
    _deploy(config, clients, NAME, ttl=timedelta(days=7), now=NOW - timedelta(hours=1))
    return config, clients


def _add_a_middleware(route: Path) -> None:
    """What an operator does by hand: a rate limit defined in the route file and put on its router; the stamp on
    the first line stays, the document is no longer graphsite's shape."""
    text = route.read_text()
    first, document = text.splitlines(keepends=True)[0], yaml.safe_load(text)
    document["http"].setdefault("middlewares", {})["ratelimit"] = {"rateLimit": {"average": 100, "burst": 50}}
    router = document["http"]["routers"][f"{NAME}-websecure"]
    router["middlewares"] = [*router.get("middlewares", []), "ratelimit"]
    route.write_text(first + yaml.safe_dump(document, sort_keys=False))


def test_teardown_of_a_name_whose_route_was_edited_removes_the_rest_and_says_it_kept_the_file(tmp_path, capsys):
    config, clients = _live(tmp_path)
    route = Path(config.deploy.dynamic_dir) / f"{NAME}.yml"
    _add_a_middleware(route)
    report = teardown(TeardownSettings.from_config(config), NAME, clients, Recorder())
    outcomes = {(o.resource, o.outcome) for o in report.outcomes}
    assert ("route", KEPT) in outcomes and ("service", REMOVED) in outcomes and ("record", REMOVED) in outcomes
    kept = next(o for o in report.outcomes if o.resource == "route")
    assert kept.name == str(route) and "graphsite's shape" in kept.detail and "rm" in kept.detail, kept.detail
    assert route.exists() and _state(clients, config)[:3] == ((), (), ())
    present.teardown(report, as_json=False)
    err = capsys.readouterr().err
    assert f"kept route {route}" in err, err

