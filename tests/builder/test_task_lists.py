"""Task lists, whose plugin is imported only for a text that can hold a task-list item (builder/markdown.py): the
tokens are the plugin's own, item for item, as if it were always installed."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from graphsite.builder.markdown import _tasklists_where_written

TEXTS = [
    "- [ ] to do\n- [x] done\n- [X] done too\n",
    "1. [ ] first\n2. [x] second\n",
    "- [x] only done\n",
    "- [X] only upper\n",
    "> - [ ] quoted\n>   - [x] nested\n",
    "- not a task\n- [ ]\n- [ ]no space\n- [y] other\n",
    "A paragraph with [ ] and [x] in it.\n",
    "- item\n\n  [ ] a second paragraph\n",
    "no box at all\n",
]


def _eager() -> MarkdownIt:
    from mdit_py_plugins.tasklists import tasklists_plugin

    return MarkdownIt("commonmark").use(tasklists_plugin)


@pytest.mark.parametrize("text", TEXTS)
def test_the_tokens_are_the_plugin_s_own(text: str) -> None:
    lazy = MarkdownIt("commonmark").use(_tasklists_where_written)
    assert lazy.render(text) == _eager().render(text)
    assert [t.as_dict() for t in lazy.parse(text)] == [t.as_dict() for t in _eager().parse(text)]


def test_a_text_with_a_task_list_gets_its_checkboxes() -> None:
    html = MarkdownIt("commonmark").use(_tasklists_where_written).render(TEXTS[0])
    assert html.count('class="task-list-item-checkbox"') == 3 and html.count('checked="checked"') == 2
