"""One rule of ownership for what names no domain (deployment.adopted): an older graphsite's complete stamp, or a
temporary a kill cut short before its domain, is this configuration's only beside a resource of its name that
proves it; alone it is shown and never touched. The same rule in deploy's refusal, the temporary route files,
the temporary page directories and the survey."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphsite.errors import DeployError
from graphsite.publisher import route
from graphsite.publisher.deployment import Claim, Stamp, iso
from graphsite.usecases.inventory import SurveySettings, survey
from graphsite.usecases.teardown import TeardownSettings, teardown
from tests.publisher.fakes import Recorder, fake_world
from tests.publisher.test_deploy_rules import NOW, _deploy, _fakes, _source
from tests.publisher.test_rules import _clients, _config
from tests.publisher.test_rules import _deploy as _made

V1_ROUTE = "# graphsite: name={name} created=2026-06-01T00:00:00Z expires=\n"
V1_MARKER = "made by graphsite deploy: name={name} created=2026-06-01T00:00:00Z expires=\n"
V1_LABELS = {"graphsite.subdomain": "site-1", "graphsite.created": "2026-06-01T00:00:00Z", "graphsite.expires": ""}


def _v1_route(config, name: str) -> str:
    document = route.route_document(route.RouteSettings.from_config(config), name, f"{name}.{config.site.domain}")
    return V1_ROUTE.format(name=name) + route.dump(document)


def test_deploy_refuses_an_older_route_that_nothing_of_its_name_proves(tmp_path):
    config, clients = fake_world(tmp_path)
    swarm, dns, routes, binds, _ = _fakes(clients)
    path = tmp_path / "dynamic" / "site-1.yml"
    routes.files[path] = _v1_route(config, "site-1")
    directory = tmp_path / "srv" / "site-1"
    binds.dirs[directory] = {".graphsite": V1_MARKER.format(name="site-1").encode(), "index.html": b"theirs"}
    swarm.add_config("site-1-page-0123456789ab", V1_LABELS)
    with pytest.raises(DeployError, match=r"site-1.yml exists and is not a route of this configuration: its stamp "
                                          r"names no domain \(older graphsite\)") as refused:
        _deploy(config, clients, _source(tmp_path))
    assert routes.files[path] == _v1_route(config, "site-1") and swarm.created == dns.created == []
    # before, the hint said "choose another subdomain" alone, though neither deploy nor teardown removes it
    hint = refused.value.hint
    assert hint is not None and "\n" not in hint and "neither deploy nor teardown removes it" in hint
    assert all(step in hint for step in (f"`rm {path}`", f"`rm -r {directory}`",
                                         "`docker config rm site-1-page-0123456789ab`")), hint


def test_deploy_takes_over_an_older_route_beside_a_record_that_proves_the_name(tmp_path):
    config, clients = fake_world(tmp_path)
    _, dns, routes, _, _ = _fakes(clients)
    path = tmp_path / "dynamic" / "site-1.yml"
    routes.files[path] = _v1_route(config, "site-1")
    dns.add("site-1.example.com", Stamp("site-1", "site-1.example.com", "0a1b2c3d", iso(NOW)).record_comment())
    _deploy(config, clients, _source(tmp_path))
    assert routes.files[path].startswith("# graphsite: stamp=2 name=site-1 fqdn=site-1.example.com ")


def test_deploy_refuses_an_older_page_directory_that_nothing_of_its_name_proves(tmp_path):
    config, clients = fake_world(tmp_path)
    binds = _fakes(clients)[3]
    directory = tmp_path / "srv" / "site-1"
    binds.dirs[directory] = {".graphsite": V1_MARKER.format(name="site-1").encode(), "index.html": b"theirs"}
    with pytest.raises(DeployError, match="site-1 exists and is not this configuration's: its stamp names no domain"):
        _deploy(config, clients, _source(tmp_path), content="bind")
    assert binds.dirs[directory]["index.html"] == b"theirs"


@pytest.mark.parametrize("proven", [False, True], ids=["alone", "beside-a-proven-deployment"])
def test_an_older_or_unfinished_temporary_is_removed_only_beside_a_proven_resource(tmp_path, proven):
    config = _config(tmp_path)
    clients = _clients(config)
    if proven:
        _made(config, clients, "blog")
    dynamic, srv = Path(config.deploy.dynamic_dir), Path(config.deploy.bind_root)
    older_route = dynamic / ".blog.yml.x1y2x1y2.tmp"
    older_route.write_text(V1_ROUTE.format(name="blog"))
    cut_route = dynamic / ".blog.yml.z9z9z9z9.tmp"
    cut_route.write_text("# graphsite: stamp=2 name=blog ")  # killed before its fqdn
    older_dir = srv / ".blog.x9x9x9x9.tmp"
    older_dir.mkdir(parents=True)
    (older_dir / ".graphsite").write_text(V1_MARKER.format(name="blog"))
    seen = survey(SurveySettings.from_config(config), clients)
    foreign = {(f.kind, f.name, f.claim) for f in seen.foreign}
    kept = {("temporary route", str(older_route), Claim.OLDER), ("temporary route", str(cut_route), Claim.UNFINISHED),
            ("temporary directory", str(older_dir), Claim.OLDER)}
    assert foreign == (set() if proven else kept)
    teardown(TeardownSettings.from_config(config), "blog", clients, Recorder())
    assert [p.exists() for p in (older_route, cut_route, older_dir)] == [not proven] * 3


def test_labels_of_a_stamp_version_this_release_does_not_know_prove_nothing():
    labels = {"graphsite.subdomain": "s1", "graphsite.created": "2026-07-01T12:00:00Z", "graphsite.stamp": "9"}
    stamp = Stamp.from_labels(labels)
    assert stamp is not None and stamp.claim("s1", "example.com") == Claim.UNPROVEN
    version_1 = Stamp.from_labels({k: v for k, v in labels.items() if k != "graphsite.stamp"})
    assert version_1 is not None and version_1.claim("s1", "example.com") == Claim.OLDER


@pytest.mark.parametrize("proven", [False, True], ids=["alone", "beside-a-proven-record"])
def test_a_config_mode_deploy_removes_an_older_page_directory_and_config_only_when_proven(tmp_path, proven):
    """Before, a config-mode deploy checked the page directory only in bind mode, then removed any directory and
    relabelled or removed any config whose stamp was 0.1's, unproven: another configuration's 0.1 deployment of
    the name lost its page. The proof is taken once, before the run makes anything (its own configs prove
    nothing)."""
    config, clients = fake_world(tmp_path)
    swarm, dns, _, binds, _ = _fakes(clients)
    directory = tmp_path / "srv" / "site-1"
    binds.dirs[directory] = {".graphsite": V1_MARKER.format(name="site-1").encode(), "index.html": b"theirs"}
    swarm.add_config("site-1-page-0123456789ab", V1_LABELS)
    if proven:
        dns.add("site-1.example.com", Stamp("site-1", "site-1.example.com", "0a1b2c3d", iso(NOW)).record_comment())
    _deploy(config, clients, _source(tmp_path))
    assert (directory in binds.dirs, "site-1-page-0123456789ab" in swarm.config_labels) == (not proven,) * 2
    if not proven:
        assert binds.dirs[directory]["index.html"] == b"theirs"
        assert swarm.config_labels["site-1-page-0123456789ab"] == V1_LABELS  # not relabelled either


def test_a_deploy_removes_a_killed_run_s_unfinished_temporaries_only_when_the_name_was_proven_before(tmp_path):
    """Before, deploy's route and page steps removed every temporary of the name, the unfinished ones (which
    name no domain: another configuration's write in flight on a shared directory, for all it knows) too."""
    config, clients = fake_world(tmp_path)
    _, _, routes, binds, _ = _fakes(clients)
    cut_route = tmp_path / "dynamic" / ".site-1.yml.z9z9z9z9.tmp"
    routes.files[cut_route] = "# graphsite: stamp=2 name=site-1 fqdn=site-1.exam"
    cut_dir = tmp_path / "srv" / ".site-1.x9x9x9x9.tmp"
    binds.dirs[cut_dir] = {}  # no marker yet
    _deploy(config, clients, _source(tmp_path), content="bind", verify=False)  # the fake edge serves configs
    assert cut_route in routes.files and cut_dir in binds.dirs
    _deploy(config, clients, _source(tmp_path, "Another paragraph."), content="bind", verify=False)  # proven now
    assert cut_route not in routes.files and cut_dir not in binds.dirs


def test_a_config_not_named_after_the_deployment_proves_nothing_to_deploy_as_to_the_survey(tmp_path):
    """Before, deploy took any config labelled subdomain=NAME for proof, while the survey judges a config under
    its own name: a config `evil` stamped for site-1 let deploy take over a 0.1 route that list showed foreign."""
    config, clients = fake_world(tmp_path)
    swarm, _, routes, _, _ = _fakes(clients)
    path = tmp_path / "dynamic" / "site-1.yml"
    routes.files[path] = _v1_route(config, "site-1")
    swarm.add_config("evil", Stamp("site-1", "site-1.example.com", "0a1b2c3d", iso(NOW)).labels())
    assert "site-1" not in survey(SurveySettings.from_config(config), clients, name="site-1").proven
    with pytest.raises(DeployError, match=r"site-1.yml exists and is not a route of this configuration"):
        _deploy(config, clients, _source(tmp_path))
    assert routes.files[path] == _v1_route(config, "site-1")
    swarm.add_config("site-1-page-0123456789ab", Stamp("site-1", "site-1.example.com", "0a1b2c3d",
                                                        iso(NOW)).labels())
    assert "site-1" in survey(SurveySettings.from_config(config), clients, name="site-1").proven  # named so
