"""One read of each resource per run: what a use case decides on is what it read once, so that two reads of one
resource cannot disagree within a run. Counted on the in-memory fakes of the ports (every call is recorded in
`faults.calls`); a second read fails the test, unless it is one the use case needs (after a write, to prove it
landed), which the test names."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import MARKER, Stamp
from graphsite.usecases.inventory import SurveySettings, survey
from tests.publisher.fakes import FakeBinds, FakeDns, FakeRoutes, FakeSwarm, fake_world

STAMP = Stamp("site-1", "site-1.example.com", "0a1b2c3d", "2026-07-01T12:00:00Z", "2026-07-08T12:00:00Z")


def _fakes(clients: Clients) -> tuple[FakeSwarm, FakeDns, FakeRoutes, FakeBinds]:
    swarm, dns, routes, binds = clients.swarm, clients.dns, clients.routes, clients.binds
    assert isinstance(swarm, FakeSwarm) and isinstance(dns, FakeDns)
    assert isinstance(routes, FakeRoutes) and isinstance(binds, FakeBinds)
    return swarm, dns, routes, binds


def _twice(calls: list[str]) -> dict[str, int]:
    """Return the calls made more than once, with their count."""
    return {method: n for method, n in Counter(calls).items() if n > 1}


def test_a_survey_reads_each_temporary_once_for_whose_it_is_and_when_it_was_made(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm, dns, routes, binds = _fakes(clients)
    dynamic, srv = Path(config.deploy.dynamic_dir), Path(config.deploy.bind_root)
    route_left = dynamic / ".site-1.yml.ab12cd34.tmp"
    routes.files[route_left] = STAMP.route_comment() + "http: {}\n"
    directory_left = srv / ".site-1.x9y8.tmp"
    binds.dirs[directory_left] = {MARKER: STAMP.marker().encode()}
    for name in (None, "site-1"):  # list, and list NAME (teardown's and deploy's survey)
        for fake in (swarm, dns, routes, binds):
            fake.faults.calls.clear()
        held = survey(SurveySettings.from_config(config), clients, name=name).holdings["site-1"]
        assert held.temporaries == (route_left,) and held.temporary_dirs == (directory_left,)
        # both leftovers are dated by the stamp the one look found (gc collects them past the grace period)
        assert list(held.stamps) == [STAMP, STAMP] and held.created == STAMP.created
        assert routes.faults.calls.count("temporaries") == 1 and binds.faults.calls.count("temporaries") == 1
        assert not {"text", "stamp", "document"} & set(routes.faults.calls), routes.faults.calls
        assert "stamp" not in binds.faults.calls, binds.faults.calls
        assert [_twice(f.faults.calls) for f in (swarm, dns, routes, binds)] == [{}, {}, {}, {}]
