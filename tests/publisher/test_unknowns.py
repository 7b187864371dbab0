"""What graphsite cannot know is said as unknown, never taken for the convenient answer: a temporary route file
cut short inside its fqdn names no domain yet (not "this configuration's so far"), and a deployment that says
nothing of when it was made is not "old" (gc keeps it and says why)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from graphsite.publisher.deployment import Claim, Stamp, iso
from graphsite.publisher.route import temporary_claim
from graphsite.usecases import gc as gc_module
from graphsite.usecases.inventory import Holding, SurveySettings, survey
from tests.publisher.fakes import Recorder
from tests.publisher.test_rules import NOW, _clients, _config

START = "# graphsite: stamp=2 name=blog "


@pytest.mark.parametrize("head, domain, owner", [
    (f"{START}fqdn=blog.exam", "example.com", Claim.UNFINISHED),  # a prefix of both: it names neither
    (f"{START}fqdn=blog.exam", "example.org", Claim.UNFINISHED),
    (f"{START}fqdn=blog.example.com", "example.com", Claim.UNFINISHED),  # example.com.au may follow
    (f"{START}fqdn=blog.example.com ", "example.com", Claim.OURS),  # the space after it: written whole
    (f"{START}fqdn=blog.example.com ", "example.org", Claim.OTHER),
    (f"{START}fqdn=blog.exo", "example.com", Claim.OTHER),  # parted from this configuration's already
])
def test_a_temporary_cut_inside_its_fqdn_names_no_domain_until_the_fqdn_is_whole(head, domain, owner):
    """Before, a first line cut inside its fqdn was OURS by prefix: `fqdn=blog.exam` was example.com's and
    example.org's at once, and either configuration's deploy or gc removed the other's in-flight write."""
    assert temporary_claim(head, "blog", domain) == owner


def test_a_temporary_cut_inside_its_fqdn_is_no_ones_without_proof_and_gc_keeps_it(tmp_path):
    for domain in ("example.com", "example.org"):
        config = _config(tmp_path, domain)
        clients = _clients(config)
        cut = Path(config.deploy.dynamic_dir) / ".blog.yml.ab12ab12.tmp"
        cut.write_text(f"{START}fqdn=blog.exam")
        inventory = survey(SurveySettings.from_config(config), clients)
        assert inventory.holdings == {}, domain
        assert [(f.kind, f.name, f.claim) for f in inventory.foreign] == [
            ("temporary route", str(cut), Claim.UNFINISHED)], domain
        report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(),
                                   now=NOW + timedelta(days=30))
        assert report.collected == () and report.ok and cut.exists(), domain


def test_gc_keeps_a_partial_deployment_it_cannot_date_and_says_so():
    """Before, a holding without a time was 'older than any grace period'."""
    held = Holding("blog", "blog.example.com", temporaries=(Path("/dynamic/.blog.yml.ab12ab12.tmp"),))
    now = NOW + timedelta(days=30)
    assert gc_module.reason(held, now, 900.0) == ""
    kept = gc_module.undated(held, now)
    assert "made at an unknown time" in kept and "graphsite teardown blog" in kept


def test_gc_collects_a_leftover_temporary_route_its_whole_stamp_dates(tmp_path):
    """Before, the stamps of temporary page directories dated a holding but not those of temporary route files:
    a killed write's `.blog.yml.ab12ab12.tmp` carrying a whole stamp was kept forever as 'made at an unknown time'."""
    config = _config(tmp_path)
    clients = _clients(config)
    stamp = Stamp("blog", "blog.example.com", "0a1b2c3d", iso(NOW))
    left = Path(config.deploy.dynamic_dir) / ".blog.yml.ab12ab12.tmp"
    left.write_text(stamp.route_comment() + "http:\n  routers:\n")
    settings = gc_module.GcSettings.from_config(config)
    report = gc_module.collect(settings, clients, Recorder(), now=NOW + timedelta(days=30), dry_run=True)
    assert [(c.name, c.outcome) for c in report.collected] == [("blog", "would tear down")], report.collected
    report = gc_module.collect(settings, clients, Recorder(), now=NOW + timedelta(days=30))
    assert [(c.name, c.outcome) for c in report.collected] == [("blog", "tore down")], report.collected
    assert not left.exists()


def test_list_json_gives_an_unknown_age_as_null_as_the_table_says_unknown():
    """Before, `list --json` gave "age": "" where the table says unknown."""
    from graphsite.commands.present import _held_json

    undated = Holding("blog", "blog.example.com", temporaries=(Path("/dynamic/.blog.yml.ab12ab12.tmp"),))
    assert _held_json(undated, NOW)["age"] is None and _held_json(undated, NOW)["created"] is None
    dated = Holding("blog", "blog.example.com", stamps=(Stamp("blog", "blog.example.com", "0a1b2c3d", iso(NOW)),))
    assert _held_json(dated, NOW + timedelta(days=2))["age"] == "2d"
