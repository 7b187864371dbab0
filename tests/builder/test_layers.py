"""The import rule between the builder and the citation checks: one direction only, the use case above both."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "graphsite"


def _imports(path: Path) -> set[str]:
    """Return every module `path` imports (at the top or inside a function)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_builder_never_imports_the_citation_checks():
    for path in sorted((PACKAGE / "builder").glob("*.py")):
        assert not any(name.startswith("graphsite.citations") for name in _imports(path)), path.name


def test_the_citation_checks_import_only_the_builders_report_model():
    for name in ("integrity.py",):
        builder = {i for i in _imports(PACKAGE / "citations" / name) if i.startswith("graphsite.builder")}
        assert builder <= {"graphsite.builder.model", "graphsite.builder.model.Finding",
                           "graphsite.builder.model.InlineCitation", "graphsite.builder.model.Reference"}, name


def test_the_configuration_and_the_codes_import_neither_part():
    assert not {i for i in _imports(PACKAGE / "codes.py") if i.startswith("graphsite")}
    assert not {i for i in _imports(PACKAGE / "urls.py") if i.startswith("graphsite")}  # the one URL normaliser
    parts = ("graphsite.citations", "graphsite.builder")
    assert not {i for i in _imports(PACKAGE / "config.py") if i.startswith(parts)}
