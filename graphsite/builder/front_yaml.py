"""The front matter's YAML, read once: its values and the line of every node, kept in the user's cache.

Importing PyYAML (its modules and the regular expressions they compile) is about a tenth of the default report's
build, and its front matter is the same from one build to the next: a text read before is taken from the cache,
without importing PyYAML. Each file of the cache holds one text's result, named by the sha256 of that text, of
PyYAML's dist-info RECORD (the sha256 of each of its files), of the loader it gives (libyaml's or the pure-Python
one, which disagree on some texts) and of this format's version; it holds the sha256 of its marshal payload, then
the payload (one that does not match is not loaded: marshal can crash on damaged bytes). It is read only from
graphsite's private cache (`paths.private_cache`) and only if it is a regular file of this user's that no one
else can write (`paths.PrivateDir.read`). A result marshal cannot hold (a YAML date or time) is not kept: that
front matter is parsed at every build, as it was before. Invalid YAML is never kept: it raises at every build.
The newest `KEEP` files written are kept; each write removes the others (the cache never grows without bound).

A node is `[line, value]`: its line (0-based, in the YAML text), and the text of a scalar, the nodes of a
sequence or the `[key, value]` node pairs of a mapping, as PyYAML's constructor left them (merge keys applied).
A node an alias names twice is one list (a recursive alias, a recursive list), as in PyYAML's own tree.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

from graphsite.digests import sha256
from graphsite.errors import SourceError
from graphsite.paths import PrivateDir, installed_record, private_cache

Node = list[Any]  # [line, value]: see the module's docstring
_DIGEST = 32  # bytes: the sha256 of the payload that follows it in a cache file (`seal`)
KEEP = 256  # files: the newest written are kept, the others removed at each write (a few KB each)
_FORMAT = b"front-yaml v2"  # change it with the form of what is kept: files of another form are never read


def load_front_yaml(path: Path, text: str) -> tuple[Any, Node | None]:
    """Return the values of the YAML `text` (the front matter of `path`, between its fences) and its top node
    (None for an empty text); raise SourceError naming the line of invalid YAML."""
    installed = _installed_yaml()
    if installed is None:
        return _parse(path, text)
    key = sha256(b"\0".join([_FORMAT, *installed, text.encode("utf-8", "surrogatepass")])).hexdigest()
    with private_cache("yaml") as cache:
        found = _read(cache, f"{key}.marshal") if cache else None
        if found is not None:
            return found
        data, node = _parse(path, text)
        # data None (front matter of just `~`) is never kept: `_read` takes values only with their node
        if cache and data is not None and _loader() == installed[1]:  # a binding that did not load: not the key's
            with contextlib.suppress(ValueError, OSError):  # ValueError: a value marshal cannot hold (a date)
                cache.write(f"{key}.marshal", seal(marshal.dumps([data, node])))
                cache.prune(".marshal", KEEP)
    return data, node


def _installed_yaml() -> tuple[bytes, bytes] | None:
    """Return what identifies the installed PyYAML without importing it: its dist-info RECORD
    (`paths.installed_record`: the sha256 of each of its files, the compiled libyaml binding included) and the
    loader it gives (b"C" when that binding is there, else b"Python": the two disagree on some texts,
    `title:\tT`), or None when there is no one RECORD."""
    found = installed_record("yaml", "pyyaml")
    if found is None:
        return None
    package, record = found
    try:
        binding = any(name.startswith("_yaml.") and name.endswith(tuple(EXTENSION_SUFFIXES))
                      for name in os.listdir(package))
    except OSError:
        return None
    return record, b"C" if binding else b"Python"


def seal(payload: bytes) -> bytes:
    """Return `payload` as a cache file holds it: its sha256, then itself (`_read` loads only a payload that matches:
    marshal is not safe against damaged input, which can crash the interpreter rather than raise)."""
    return sha256(payload).digest() + payload


def _loader() -> bytes:
    """Return the loader the imported PyYAML gave (see `_installed_yaml`)."""
    import yaml

    return b"C" if hasattr(yaml, "CSafeLoader") else b"Python"


def _read(cache: PrivateDir, name: str) -> tuple[Any, Node | None] | None:
    """Return the result kept in the file `name` of `cache`, or None when there is none this module could have
    written."""
    raw = cache.read(name)
    if raw is None or raw[:_DIGEST] != sha256(raw[_DIGEST:]).digest():
        return None  # marshal.loads of damaged bytes can crash the interpreter: only what was written is loaded
    try:
        kept = marshal.loads(raw[_DIGEST:])
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(kept, list) and len(kept) == 2 and (kept[0] is None) == (kept[1] is None)
            and _only_values(kept[0]) and (kept[1] is None or _only_nodes(kept[1]))):  # values and a node, or neither
        return None
    return kept[0], kept[1]


# What PyYAML's safe loader builds (a date or a time is never kept): marshal can hold more (code, complex, frozenset)
_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})
_CONTAINERS = frozenset({list, dict, set, tuple})  # tuple: the pairs of !!omap and !!pairs


def _only_values(top: object) -> bool:
    """Return whether `top` holds only what PyYAML's safe loader builds (iteratively: a deep or recursive tree)."""
    seen: set[int] = set()
    pending: list[object] = [top]
    while pending:
        value = pending.pop()
        if type(value) in _SCALARS:
            continue
        if type(value) not in _CONTAINERS:
            return False
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list | set | tuple):
            pending.extend(value)
    return True


def _only_nodes(top: object) -> bool:
    """Return whether `top` is a node as `_tree` makes them: [line, text], or [line, [node, ...]], or
    [line, [[key node, value node], ...]] (iteratively, as `_only_values`)."""
    seen: set[int] = set()
    pending: list[Any] = [top]
    while pending:
        node = pending.pop()
        if not (type(node) is list and len(node) == 2 and type(node[0]) is int):
            return False
        if type(node[1]) is str or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node[1]) is not list:
            return False
        for item in node[1]:
            pair = type(item) is list and len(item) == 2 and type(item[0]) is list
            pending.extend(item if pair else [item])
    return True


def _parse(path: Path, text: str) -> tuple[Any, Node | None]:
    import yaml

    # the C loader is several times faster; the pure-Python one where PyYAML was built without libyaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 2 if mark is not None else 1  # +1 for 1-based, +1 for the opening ---
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SourceError(path, f"invalid YAML front matter: {problem}", line=line,
                          hint="fix the YAML between the two --- lines") from None
    except (ValueError, TypeError) as exc:  # a tagged or dated value YAML cannot build (date: 2024-02-30)
        raise SourceError(path, f"invalid YAML front matter: a value cannot be read ({exc})", line=1,
                          hint="fix the value between the two --- lines (quote it to keep it as text)") from None
    finally:
        loader.dispose()
    return data, _tree(node) if node is not None else None


def _tree(root: Any) -> Node:
    """Return PyYAML's node tree from `root` as nodes of this module (iteratively: a deep tree is no recursion)."""
    made: dict[int, Node] = {}
    pending: list[tuple[Any, Node]] = []

    def node(original: Any) -> Node:
        found = made.get(id(original))
        if found is None:
            found = made[id(original)] = [original.start_mark.line, original.value]
            if original.id != "scalar":
                pending.append((original, found))
        return found

    top = node(root)
    while pending:
        original, converted = pending.pop()
        if original.id == "mapping":
            converted[1] = [[node(key), node(value)] for key, value in original.value]
        else:
            converted[1] = [node(item) for item in original.value]
    return top
