"""Task-list items (`- [ ] to do`, `- [x] done`): the rule of mdit_py_plugins.tasklists, as it installs it by
default (disabled checkboxes, no label), written here so that no build imports the plugin: it imports uuid, and
with it platform, about 3 % of the default report's build (issue 24). The tokens are the plugin's own, token for
token (tests/builder/test_task_lists.py holds them against the plugin's, on chosen texts and on generated ones).

The plugin is a port of markdown-it-task-lists (ISC License, Copyright (c) 2016, Revin Guillen) by Wolmar Nyberg
Åkerström (MIT License)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from markdown_it.token import Token

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore

# What a task-list item starts with, as it is written in the source: a text holding none of these has none.
_BOXES = ("[ ]", "[x]", "[X]")
_WHITESPACE = " \t\n\v\f\r"  # GFM's whitespace characters (spec 0.29-gfm), one of which follows the box
_DISABLED = 'disabled="disabled"'


def install_tasklists(md: MarkdownIt) -> None:
    """Install the task-list rule where the plugin puts it (after `inline`); it looks at the tokens only of a
    text that can hold a task-list item."""
    md.core.ruler.after("inline", "github-tasklists", _tasklists)


def _tasklists(state: StateCore) -> None:
    if not any(box in state.src for box in _BOXES):
        return
    tokens = state.tokens
    for i in range(2, len(tokens) - 1):
        if _is_todo_item(tokens, i):
            _todoify(tokens[i])
            tokens[i - 2].attrSet("class", "task-list-item")
            tokens[_parent(tokens, i - 2)].attrSet("class", "contains-task-list")


def _parent(tokens: list[Token], index: int) -> int:
    """Return the index of the list that holds the item at `index` (-1, the last token, for none: as the plugin)."""
    level = tokens[index].level - 1
    for i in range(1, index + 1):
        if tokens[index - i].level == level:
            return index - i
    return -1


def _is_todo_item(tokens: list[Token], index: int) -> bool:
    content = tokens[index].content
    return (tokens[index].type == "inline" and tokens[index - 1].type == "paragraph_open"
            and tokens[index - 2].type == "list_item_open"
            and content[:3] in _BOXES and len(content) > 3 and content[3] in _WHITESPACE)


def _todoify(token: Token) -> None:
    assert token.children is not None  # an inline token's children are made by the `inline` rule before this one
    token.children.insert(0, _checkbox(token.content))
    token.children[1].content = token.children[1].content[3:]
    token.content = token.content[3:]


def _checkbox(content: str) -> Token:
    checkbox = Token("html_inline", "", 0)
    if content.startswith("[ ] "):
        checkbox.content = f'<input class="task-list-item-checkbox" {_DISABLED} type="checkbox">'
    elif content.startswith(("[x] ", "[X] ")):
        checkbox.content = f'<input class="task-list-item-checkbox" checked="checked" {_DISABLED} type="checkbox">'
    return checkbox  # a box followed by another whitespace than a space: an empty checkbox token, as the plugin's
