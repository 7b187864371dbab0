"""The front matter's YAML is read once: a text read before comes from the user's cache with the values and lines
PyYAML gives (errors included), without importing PyYAML (tests/test_import_budget.py); a cache file anyone else
could have written, or one that does not hold what graphsite writes, is never read."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphsite.builder.front_yaml import seal
from graphsite.builder.source import parse_source
from graphsite.errors import SourceError
from tests.conftest import aged_cache

from .conftest import DEFAULT_REPORT, FIXTURES

DOCUMENTS = {
    "default report": DEFAULT_REPORT.read_text(encoding="utf-8"),
    "every part": (FIXTURES / "every-part.md").read_text(encoding="utf-8"),
    "aliases and merge keys": "---\ntitle: &t A title\nheadline: *t\nbase: &b {who: Ann, where: here}\n"
                              "counter_frame:\n  <<: *b\n  quote: q\n  date: '2020-04-07T12:00:00'\n---\n\nBody.\n",
    "a recursive alias": "---\ntitle: T\nrules: &r\n  - a\n  - *r\n---\n\nBody.\n",
    "a key twice": "---\ntitle: T\nfloors:\n  - label: a\n    label: b\n---\n\nBody.\n",
    "a wrong type": "---\ntitle: T\nfloors:\n  - label: [1, 2]\n---\n\nBody.\n",
    "unused keys": "---\ntitle: T\n1: one\nextra:\n  deep: [1, 2.5, true, null]\n---\n\nBody.\n",
    "a YAML date (not kept)": "---\ntitle: T\ndate: 2020-04-07\n---\n\nBody.\n",
    "null": "---\ntitle:\n---\n\nBody.\n",
    "a set, pairs and bytes": "---\ntitle: T\nextra:\n  s: !!set {a, b}\n  o: !!omap [{a: 1}, {b: 2}]\n"
                              "  p: !!pairs [{a: 1}]\n  bin: !!binary aGk=\n---\n\nBody.\n",
}


def _read(text: str) -> object:
    """Return what the builder makes of `text`: its front matter, warnings and body, or the error it raises."""
    try:
        source = parse_source(Path("report.md"), text.encode("utf-8"))
    except SourceError as exc:
        return ("error", str(exc), exc.hint)
    return source.front, source.warnings, source.body, source.body_line


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "graphsite" / "yaml"


@pytest.mark.parametrize("name", DOCUMENTS)
def test_a_text_read_again_comes_from_the_cache_unchanged(cache: Path, name: str) -> None:
    text = DOCUMENTS[name]
    parsed = _read(text)
    kept = list(cache.iterdir())
    assert len(kept) == (0 if "not kept" in name else 1)
    assert _read(text) == parsed  # from the cache file
    if kept:  # the second reading used the file: one that says otherwise changes the outcome
        kept[0].write_bytes(seal(marshal.dumps([{"title": "planted"}, [0, [[[0, "title"], [0, "planted"]]]]])))
        assert _read(text) != parsed


def _plant(cache: Path, text: str, payload: bytes, mode: int) -> None:
    _read(text)
    (kept,) = cache.iterdir()
    kept.write_bytes(payload)
    os.chmod(kept, mode)


def test_a_cache_file_others_can_write_is_not_read(cache: Path) -> None:
    text = DOCUMENTS["aliases and merge keys"]
    expected = _read(text)
    planted = seal(marshal.dumps([{"title": "planted"}, [0, [[[0, "title"], [0, "planted"]]]]]))
    _plant(cache, text, planted, 0o666)
    assert _read(text) == expected


@pytest.mark.parametrize("payload", [b"", b"\x00not marshal", marshal.dumps("a string"), marshal.dumps([1, 2, 3]),
                                     marshal.dumps([{}, ["line", []]]), marshal.dumps([{"title": "planted"}, None])])
def test_a_cache_file_graphsite_did_not_write_is_not_read(cache: Path, payload: bytes) -> None:
    text = DOCUMENTS["unused keys"]
    expected = _read(text)
    _plant(cache, text, seal(payload), 0o600)
    assert _read(text) == expected


def test_a_damaged_cache_file_is_not_loaded(cache: Path) -> None:
    """marshal.loads of damaged bytes can crash the interpreter (these segfault CPython 3.11.7): a file whose
    payload does not match the sha256 before it is never loaded, and is written again. In a process of its own, so
    that a crash fails this test."""
    text = DOCUMENTS["unused keys"]
    _read(text)
    (kept,) = cache.iterdir()
    kept.write_bytes(bytes(32) + b"\xa8\x01\0\0\0{r\0\0\0\0N0")
    program = ("import sys; from pathlib import Path; from graphsite.builder.source import parse_source; "
               "print(parse_source(Path('report.md'), sys.stdin.buffer.read()).front)")
    run = subprocess.run([sys.executable, "-c", program], input=text.encode(), capture_output=True, env=os.environ,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.decode().strip() == str(_read(text)[0])  # type: ignore[index]
    assert kept.read_bytes()[32:] != b"\xa8\x01\0\0\0{r\0\0\0\0N0"  # rewritten


def test_a_relative_home_means_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative HOME would put the cache under whatever directory the build runs in: none is used."""
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "relative/home")
    monkeypatch.chdir(tmp_path)
    text = DOCUMENTS["unused keys"]
    assert _read(text) == _read(text)
    assert list(tmp_path.iterdir()) == []


def test_the_cache_knows_which_pyyaml_and_which_loader(tmp_path: Path) -> None:
    """libyaml's loader and the pure-Python one disagree on some texts (`title:\\tT`), and two environments with
    the same PyYAML version may share one cache: the key names PyYAML's RECORD and the loader it gives."""
    import shutil
    import subprocess
    import sys

    import yaml

    site = Path(yaml.__file__).parents[1]
    (record,) = site.glob("[pP]y[yY][aA][mM][lL]-*.dist-info")
    copy = tmp_path / "site"
    shutil.copytree(site / "yaml", copy / "yaml", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(record, copy / record.name)
    cache = tmp_path / "cache"
    build = ("from pathlib import Path; from graphsite.builder.source import parse_source; "
             "parse_source(Path('report.md'), b'---\\ntitle: T\\n---\\n\\nBody.\\n')")

    def kept() -> set[str]:
        env = {**os.environ, "PYTHONPATH": str(copy), "XDG_CACHE_HOME": str(cache)}
        subprocess.run([sys.executable, "-c", build], env=env, check=True)
        return {path.name for path in (cache / "graphsite" / "yaml").iterdir()}

    first = kept()
    with (copy / record.name / "RECORD").open("a") as handle:
        handle.write("yaml/another.py,sha256=x,1\n")  # another build of the same version
    second = kept()
    (binding,) = (copy / "yaml").glob("_yaml.*")
    binding.unlink()  # the same RECORD, but only the pure-Python loader
    (copy / record.name / "RECORD").write_bytes((record / "RECORD").read_bytes())
    third = kept()
    assert len(first) == 1 and len(second) == 2 and len(third) == 3


@pytest.mark.parametrize("text", ["~", "null"])
def test_yaml_of_just_null_is_not_kept(cache: Path, text: str) -> None:
    """Values None with a node is never read back (`_read` takes values only with their node): not written."""
    from graphsite.builder.front_yaml import load_front_yaml

    assert load_front_yaml(Path("report.md"), text) == (None, [0, text])
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("plant", ["a code object", "a complex number", "a frozenset", "a float as a node's text",
                                   "a node without a line"])
def test_a_cache_file_holding_what_yaml_never_builds_is_not_read(cache: Path, plant: str) -> None:
    """marshal holds more than PyYAML's safe loader builds (code objects among them): every value and node of a
    kept file is checked, not only its outer shape."""
    text = DOCUMENTS["unused keys"]
    expected = _read(text)
    (kept,) = cache.iterdir()
    data, node = marshal.loads(kept.read_bytes()[32:])
    data["title"] = "planted"
    title_value = node[1][0][1]  # [[key node, value node], ...]: the title's value
    title_value[1] = "planted"
    planted = {"a code object": compile("1", "x", "eval"), "a complex number": 1j, "a frozenset": frozenset({1})}
    if plant in planted:
        data["extra"]["deep"][0] = planted[plant]
    elif plant == "a float as a node's text":
        title_value[1] = 2.5
    else:
        node[1][1][0][0] = None
    kept.write_bytes(seal(marshal.dumps([data, node])))
    os.chmod(kept, 0o600)
    assert _read(text) == expected


def test_the_cache_keeps_only_the_newest_files(cache: Path) -> None:
    """The cache does not grow without bound: a write removes the oldest files beyond the newest KEEP."""
    from graphsite.builder.front_yaml import KEEP

    _read(DOCUMENTS["unused keys"])
    other = aged_cache(cache, ".marshal", KEEP)
    _read(DOCUMENTS["a key twice"])
    kept = {path.name for path in cache.iterdir()}
    assert len(kept) == KEEP + 1 and other.name in kept
    assert f"{0:064x}.marshal" not in kept and f"{1:064x}.marshal" not in kept and f"{2:064x}.marshal" in kept
