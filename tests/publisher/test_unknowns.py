"""What graphsite cannot know is said as unknown, never taken for the convenient answer: a deployment that
says nothing of when it was made is not "old" (gc keeps it and says why)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from graphsite.usecases import gc as gc_module
from tests.publisher.fakes import Recorder
from tests.publisher.test_rules import NOW, _clients, _config


def test_gc_keeps_a_partial_deployment_it_cannot_date_and_says_so(tmp_path):
    """Before, a stamp without a time was 'older than any grace period': gc tore down a killed deploy's route
    file a moment after it was cut short inside its fqdn (this configuration's, but not yet dated)."""
    config = _config(tmp_path)
    clients = _clients(config)
    cut = Path(config.deploy.dynamic_dir) / ".blog.yml.ab12.tmp"
    cut.write_text("# graphsite: stamp=2 name=blog fqdn=blog.exam")
    report = gc_module.collect(gc_module.GcSettings.from_config(config), clients, Recorder(),
                               now=NOW + timedelta(days=30))
    assert [(c.name, c.outcome) for c in report.collected] == [("blog", "kept")] and report.ok
    assert "made at an unknown time" in report.collected[0].reason and "graphsite teardown blog" in \
        report.collected[0].reason
    assert cut.exists()
