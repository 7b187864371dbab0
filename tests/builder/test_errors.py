"""Bad input: one clear error naming file, line and field; exit status 1; no traceback; nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup


def _fails(result, out: Path) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert not (out / "index.html").exists(), "a failed build must write nothing"
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_missing_file(run_cli, tmp_path):
    out = tmp_path / "site"
    line = _fails(run_cli("build", str(tmp_path / "nope.md"), "--out", str(out)), out)
    assert "nope.md" in line and "not found" in line


def test_directory_instead_of_file(run_cli, tmp_path):
    out = tmp_path / "site"
    line = _fails(run_cli("build", str(tmp_path), "--out", str(out)), out)
    assert "directory" in line


@pytest.mark.parametrize("content", ["", "   \n\n\t\n"])
def test_empty_file(run_cli, write_md, tmp_path, content):
    source, out = write_md(content), tmp_path / "site"
    line = _fails(run_cli("build", str(source), "--out", str(out)), out)
    assert str(source) in line and "empty" in line


def test_invalid_utf8_names_the_byte_offset(run_cli, write_md, tmp_path):
    raw = b"# Title\n\nsome text\n" + b"caf\xe9 au lait\n"
    source, out = write_md(raw), tmp_path / "site"
    line = _fails(run_cli("build", str(source), "--out", str(out)), out)
    offset = raw.index(b"\xe9")
    assert f"byte offset {offset}" in line
    assert f"{source}:4:" in line  # the line of the bad byte
    assert "UTF-8" in line


def test_broken_yaml_names_the_line(run_cli, write_md, tmp_path):
    source = write_md("---\ntitle: ok\nbadge: [unclosed\nkicker: x\n---\n# Body\n")
    out = tmp_path / "site"
    line = _fails(run_cli("build", str(source), "--out", str(out)), out)
    assert "invalid YAML front matter" in line
    reported = int(line.split(f"{source}:")[1].split(":")[0])
    assert reported in {3, 4, 5}, line  # the bracket opens on line 3; PyYAML notices at 4 or 5


@pytest.mark.parametrize("front, field, line_number", [
    ("title: [a, b]\n", "title", 2),
    ("title: ok\nfloors: 3\n", "floors", 3),
    ("rules:\n  a: 1\n", "rules", 2),
    ("floors:\n  - label: X\n    year: 2023\n    title: {nested: map}\n", "floors[0].title", 5),
    ("counter_frame: just a string\n", "counter_frame", 2),
    ("floors:\n  - label: X\n    critique: {a: b}\n", "floors[0].critique", 4),
])
def test_wrong_field_type_names_field_and_line(run_cli, write_md, tmp_path, front, field, line_number):
    source, out = write_md(f"---\n{front}---\n# Body\n"), tmp_path / "site"
    line = _fails(run_cli("build", str(source), "--out", str(out)), out)
    assert f"`{field}`" in line, line
    assert f"{source}:{line_number}:" in line, line


@pytest.mark.parametrize("front, field, line_number", [
    ("title: a\nbadge: b\ntitle: c\n", "front matter: the key `title`", 4),
    ("floors:\n  - label: a\n    year: 2023\n    label: b\n", "`floors[0]`: the key `label`", 5),
])
def test_a_duplicated_key_is_an_error_not_a_silent_overwrite(run_cli, write_md, tmp_path, front, field, line_number):
    source, out = write_md(f"---\n{front}---\n# Body\n"), tmp_path / "site"
    line = _fails(run_cli("build", str(source), "--out", str(out)), out)
    assert f"{source}:{line_number}:" in line and field in line and "appears twice" in line, line


def test_front_matter_that_is_never_closed(run_cli, write_md, tmp_path):
    source, out = write_md("---\ntitle: My report\nbadge: draft\n\n# My report\n\nText.\n"), tmp_path / "site"
    line = _fails(run_cli("build", str(source), "--out", str(out)), out)
    assert f"{source}:1:" in line and "never closed" in line, line


def test_an_unwritable_target_leaves_nothing_behind(run_cli, write_md, tmp_path):
    source, out = write_md("# T\n\nText.\n"), tmp_path / "site"
    (out / "index.html").mkdir(parents=True)  # the page cannot replace a directory
    result = run_cli("build", str(source), "--out", str(out))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"{out / 'index.html'}: cannot write the page" in result.stderr
    assert [p.name for p in out.iterdir()] == ["index.html"], "no temporary file is left in --out"


@pytest.mark.parametrize("name", ["Bad_Name!", "-graph", "a" * 64, "ab--cdef"])
def test_invalid_subdomain(run_cli, write_md, tmp_path, name):
    source, out = write_md("# T\n"), tmp_path / "site"
    line = _fails(run_cli("build", str(source), "--out", str(out), "--subdomain", name), out)
    assert "--subdomain" in line and repr(name) in line


@pytest.mark.parametrize("markdown, words", [
    # markdown-it's demo opens with `---` and prose: a thematic break, not YAML to reject.
    ("---\n__Advertisement__\n\n- a\n\n---\n\n# Title\n", "Advertisement"),
    # Only a field the page shows (`title:`, `floors:` …) makes an unclosed `---` front matter.
    ("---\nNote: this report is a draft.\n\n# Title\n", "Note: this report is a draft."),
])
def test_a_rule_at_the_top_is_not_front_matter(run_cli, write_md, tmp_path, markdown, words):
    source, out = write_md(markdown), tmp_path / "site"
    result = run_cli("build", str(source), "--out", str(out))
    assert result.exit_code == 0, result.output
    page = BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert words in page.find("main").get_text()


def test_partial_cards_still_build(run_cli, write_md, tmp_path):
    source = write_md("---\nfloors:\n  - title: Only a title\ncounter_frame:\n  quote: q\n---\n# T\n")
    out = tmp_path / "site"
    result = run_cli("build", str(source), "--out", str(out))
    assert result.exit_code == 0, result.output
    cards = BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), "html.parser").select("#cards article")
    assert [card.find(class_="card-title").get_text() for card in cards[:1]] == ["Only a title"]
    assert [tag["class"] for tag in cards[0].find_all(True)] == [["card-title"]], "no empty label, year, definition"
    assert cards[1].blockquote.get_text() == "q" and cards[1].find(class_="card-who") is None


@pytest.mark.parametrize("value", ["2024-02-30", '!!int "abc"'])
def test_a_front_matter_value_yaml_cannot_build_is_a_one_line_error(tmp_path, value):
    from graphsite.builder.source import read_source
    from graphsite.errors import SourceError

    path = tmp_path / "r.md"
    path.write_text(f"---\ntitle: T\ndate: {value}\n---\n\n# T\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"r.md:1: invalid YAML front matter: a value cannot be read"):
        read_source(path)
