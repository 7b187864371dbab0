"""What graphsite 0.1 made is adopted only beside a proven resource: a 0.1 route file, config or page directory
names no domain, so it belongs to a name only when a resource of that name proves it is this configuration's
(its service); alone it is another graphsite's, listed as foreign and never touched. The inventory is read
from a real route directory and a Swarm stand-in (no lab needed)."""

from __future__ import annotations

from graphsite.publisher import route
from graphsite.publisher.clients import Clients
from graphsite.publisher.deployment import STAMP, Claim, Stamp
from graphsite.publisher.swarm import Service
from graphsite.usecases.inventory import SurveySettings, survey
from tests.publisher.fakes import FakeDns

CREATED = "2026-07-01T12:00:00Z"


class _Swarm:
    """The Swarm as survey reads it: services and config stamps."""

    def __init__(self, services: list[Service], configs: dict[str, Stamp]) -> None:
        self._services, self._configs = services, configs

    def services(self) -> list[Service]:
        return self._services

    def labelled_configs(self, subdomain: str | None = None) -> dict[str, dict[str, str]]:
        # the labels each stamp was written with: graphsite 0.1's (version 1) carried no stamp version
        return {n: {k: v for k, v in s.labels().items() if s.version > 1 or k != STAMP}
                for n, s in self._configs.items() if subdomain is None or s.name == subdomain}


def test_a_0_1_route_and_config_are_adopted_beside_a_proven_service_and_foreign_alone(tmp_path, production):
    config = production.replace("deploy", dynamic_dir=str(tmp_path / "dynamic"), bind_root=str(tmp_path / "srv"))
    config = config.replace("site", domain="example.org")
    (tmp_path / "dynamic").mkdir()
    for name in ("gs-a", "gs-b"):  # route files as 0.1 wrote them: name, created, expires; no domain, no id
        document = route.route_document(route.RouteSettings.from_config(config), name, f"{name}.example.org")
        (tmp_path / "dynamic" / f"{name}.yml").write_text(
            f"# graphsite: name={name} created={CREATED} expires=\n{route.dump(document)}")
    older = {f"{n}-page-{n[-1] * 12}": Stamp(n, created=CREATED, version=1) for n in ("gs-a", "gs-b")}
    proven = Stamp("gs-a", "gs-a.example.org", "0a1b2c3d", CREATED)
    swarm = _Swarm([Service("id-a", "gs-a", proven.labels(), 1, (), 1)], older)
    inventory = survey(SurveySettings.from_config(config), Clients(dns=FakeDns(), swarm=swarm), dns=False)
    adopted = inventory.holdings["gs-a"]
    assert adopted.route == tmp_path / "dynamic" / "gs-a.yml" and adopted.configs == ("gs-a-page-aaaaaaaaaaaa",)
    assert "gs-b" not in inventory.holdings
    assert sorted((f.kind, f.name, f.claim) for f in inventory.foreign) == [
        ("config", "gs-b-page-bbbbbbbbbbbb", Claim.OLDER),
        ("route", str(tmp_path / "dynamic" / "gs-b.yml"), Claim.OLDER)]
