"""Task lists, graphsite's own rule (builder/tasklists.py) in place of mdit_py_plugins.tasklists, whose import
brings uuid and platform: the tokens are the plugin's own, token for token, as the plugin installs itself by
default, on chosen texts and on texts made of the pieces a task list is written with."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from graphsite.builder.tasklists import install_tasklists

TEXTS = [
    "- [ ] to do\n- [x] done\n- [X] done too\n",
    "1. [ ] first\n2. [x] second\n",
    "- [x] only done\n",
    "- [X] only upper\n",
    "> - [ ] quoted\n>   - [x] nested\n",
    "- not a task\n- [ ]\n- [ ]no space\n- [y] other\n",
    "- [ ]\ttab\n- [x]\vvertical tab\n- [ ]  two spaces\n",
    "- [ ] *emphasis* and `code`\n- [x] [a link](https://example.org/)\n",
    "A paragraph with [ ] and [x] in it.\n",
    "- item\n\n  [ ] a second paragraph\n",
    "| a |\n|---|\n| - [ ] b |\n",
    "no box at all\n",
]


def _plugin() -> MarkdownIt:
    from mdit_py_plugins.tasklists import tasklists_plugin

    return MarkdownIt("commonmark").enable("table").use(tasklists_plugin)


def _own() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").use(install_tasklists)


def _same(text: str) -> None:
    assert _own().render(text) == _plugin().render(text)
    assert [t.as_dict() for t in _own().parse(text)] == [t.as_dict() for t in _plugin().parse(text)]


@pytest.mark.parametrize("text", TEXTS)
def test_the_tokens_are_the_plugin_s_own(text: str) -> None:
    _same(text)


# a line as a task list is written, well or badly: an indent, a list marker (or a quote), a box, what follows it
_LINE = st.tuples(st.sampled_from(["", "  ", "   ", "    ", "\t", "> "]),
                  st.sampled_from(["- ", "* ", "1. ", "2) ", "> - ", "", "-"]),
                  st.sampled_from(["[ ]", "[x]", "[X]", "[y]", "[]", "[ ", "\\[ ]", "[x ]", ""]),
                  st.sampled_from([" ", "  ", "\t", "\v", "\f", "", "\r", " \t"]),
                  st.sampled_from(["", "a", "to do", "*b* c", "`c`", "[l](u)", "<span>x</span>", "[^1]", "[ ] again",
                                   "| t |"])).map("".join)
_TEXT = st.lists(st.tuples(_LINE, st.sampled_from(["\n", "\n\n", "\n|---|\n", "\n\n[^1]: n\n"])),
                 min_size=1, max_size=8).map(lambda lines: "".join(line + end for line, end in lines))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_TEXT)
def test_generated_texts_give_the_plugin_s_tokens(text: str) -> None:
    _same(text)


def test_a_text_with_a_task_list_gets_its_checkboxes() -> None:
    html = _own().render(TEXTS[0])
    assert html.count('class="task-list-item-checkbox"') == 3 and html.count('checked="checked"') == 2
    assert html.count('class="task-list-item"') == 3 and html.count('class="contains-task-list"') == 1
