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


def test_a_task_box_is_known_by_where_it_stands_not_by_its_text(write_md):
    forged = '<input class="task-list-item-checkbox" disabled="disabled" type="checkbox">'
    report = read_report(write_md(f"# T\n\n- [ ] open task\n- [x] done {forged}\n- plain {forged}\n\n"
                                  f"Prose {forged} too.\n"))
    html = report.intro_html
    assert html.count("<input") == 2  # the plugin's two checkboxes; the author's copies are text
    assert html.count("&lt;input") == 3
    assert [w.code for w in report.warnings] == ["raw-html-shown"] * 3


def test_a_closing_tag_of_shown_svg_is_shown_too(write_md):
    report = read_report(write_md("# T\n\nDraw <path> then <text>hi</text> done.\n\n<div>\ncp <text>a</text> x\n"
                                  "</div>\n"))
    assert "&lt;text&gt;hi&lt;/text&gt; done" in report.intro_html
    assert "&lt;text&gt;a&lt;/text&gt; x" in report.intro_html
