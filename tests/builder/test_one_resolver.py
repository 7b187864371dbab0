"""One fragment resolver for the build and `graphsite links`, and only the notes the page really has."""

from __future__ import annotations

from graphsite.builder.report import read_report
from graphsite.builder.targets import Targets


def test_a_link_to_a_footnote_the_page_lacks_is_warned(write_md):
    report = read_report(write_md("# T\n\nText[^a] and again[^a]. See [one](#fn1), [back](#fnref1:1), "
                                  "[nine](#fn9), [nine back](#fnref9).\n\n[^a]: The note.\n"))
    assert report.note_ids == ("fn1", "fnref1", "fnref1:1")
    missing = [w.message.split()[3] for w in report.warnings if w.code == "link-missing-fragment"]
    assert missing == ["#fn9", "#fnref9"]


def test_the_resolver_knows_the_page_and_nothing_more():
    targets = Targets(["type-inference", "fn1"])
    assert targets.resolve("Type-inference") == "type-inference"
    assert targets.resolve("Type%20Inference") == "type-inference"
    assert targets.resolve("top") == "top" and targets.resolve("ref-12") == "ref-12"
    assert targets.resolve("fn2") is None and targets.resolve("nowhere") is None
