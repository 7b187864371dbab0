"""The import rules of docs/ARCHITECTURE.md, read from the code itself (every import, including the lazy ones
inside functions): the parts in layers (commands above the use cases, the use cases above the builder, the
citations and the publisher), no cycle between parts, the shared modules depend on no part, every use case in
graphsite/usecases/ and called by its command, the lab outside the product and reached by none of it, and
each third-party client imported only by its adapter. The package is parsed once for all of them, and every
allow-list is exact: a path in it that does not exist, or no longer does what the list says, fails the suite
instead of passing for ever."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "graphsite"
# The shared modules at the root of the package: every part may use them; they use no part.
SHARED = {"config", "errors", "output", "paths", "labels", "atomic", "signals", "urls", "codes", "values", "patterns",
          "trust", "digests",
          "__init__", "__main__"}
# Each external client, and the only modules allowed to import it (the lab is tooling with its own clients).
ADAPTERS = {
    "docker": {"publisher/swarm.py"},
    "requests": {"publisher/swarm.py"},  # the Docker SDK's transport: its errors are translated there
    # The link checker speaks HTTP/1.1 itself (citations/http.py says why not httpx).
    "httpx": {"publisher/cloudflare.py", "publisher/probe.py"},
}
# The layers, top down: a part imports only parts of a lower layer (the shared modules are below them all).
# The citations read the builder's report model, so they stand one layer above it.
LAYERS = {"cli": 5, "commands": 4, "usecases": 3, "citations": 2, "builder": 1, "publisher": 1}
# Each command and the one use case it calls (`new` writes a starter file and has none; present.py presents).
COMMANDS = {
    "commands/build.py": "usecases/build.py",
    "commands/links.py": "usecases/links.py",
    "commands/serve.py": "usecases/preview.py",
    "commands/config.py": "usecases/configdoc.py",
    "commands/deploy.py": "usecases/deploy/__init__.py",
    "commands/verify.py": "usecases/verify.py",
    "commands/listing.py": "usecases/inventory.py",
    "commands/teardown.py": "usecases/teardown.py",
    "commands/gc.py": "usecases/gc.py",
    "commands/diff.py": "usecases/diff.py",
    "commands/history.py": "usecases/history.py",
    "commands/rollback.py": "usecases/rollback.py",
    "commands/doctor.py": "usecases/doctor/__init__.py",
}
NOT_COMMANDS = {"commands/__init__.py", "commands/present.py", "commands/new.py", "commands/options.py",
                "commands/words.py"}


@pytest.fixture(scope="module")
def imports() -> dict[str, set[str]]:
    """Return every module of the package (its path below graphsite/) with the names it imports."""
    return {str(path.relative_to(PACKAGE)): _imports(path) for path in PACKAGE.rglob("*.py")}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _part(relative: str) -> str:
    """Return the part a module belongs to: its subpackage, or the shared root module's name."""
    head = relative.split("/")[0]
    return head.removesuffix(".py")


def _part_of_import(name: str) -> str | None:
    if not name.startswith("graphsite."):
        return None
    head = name.split(".")[1]
    return head if (PACKAGE / head).is_dir() or (PACKAGE / f"{head}.py").is_file() else None


def _edges(imports: dict[str, set[str]]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for relative, names in imports.items():
        source = _part(relative)
        for name in names:
            target = _part_of_import(name)
            if target and target != source:
                edges.setdefault(source, set()).add(target)
    return edges


def test_no_cycle_between_parts(imports):
    edges = _edges(imports)

    def reaches(start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            node = stack.pop()
            for nxt in edges.get(node, ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return False

    cycles = sorted(f"{a} <-> {b}" for a in edges for b in edges[a] if a < b and reaches(b, a))
    cycles += sorted(f"{b} <-> {a}" for a in edges for b in edges[a] if b < a and reaches(b, a)
                     and f"{b} <-> {a}" not in cycles)
    assert not cycles, f"parts that import each other (directly or around a loop): {cycles}"


def test_shared_modules_use_no_part(imports):
    parts = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    wrong = {f"{source} -> {target}" for source, targets in _edges(imports).items() if source in SHARED
             for target in targets if target in parts}
    assert not wrong, f"shared modules must not reach up into a part: {sorted(wrong)}"


def test_parts_import_only_lower_layers(imports):
    wrong = sorted(f"{source} -> {target}" for source, targets in _edges(imports).items() if source in LAYERS
                   for target in targets if target in LAYERS and LAYERS[target] >= LAYERS[source])
    assert not wrong, f"a part imports one of its own layer or above (see docs/ARCHITECTURE.md): {wrong}"
    assert set(LAYERS) - {"cli"} <= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def test_every_use_case_is_in_usecases_and_called_by_its_command(imports):
    use_cases = {relative for relative in imports if relative.startswith("usecases/") and relative.count("/") == 1
                 and relative != "usecases/__init__.py"}
    use_cases |= {f"usecases/{p.name}/__init__.py" for p in (PACKAGE / "usecases").iterdir() if p.is_dir()
                  and (p / "__init__.py").is_file()}
    assert use_cases == set(COMMANDS.values()), "graphsite/usecases/ and COMMANDS disagree"
    commands = {relative for relative in imports if relative.startswith("commands/")}
    assert commands == set(COMMANDS) | NOT_COMMANDS, "graphsite/commands/ and COMMANDS disagree"
    for command, use_case in COMMANDS.items():
        module = "graphsite." + use_case.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        assert module in imports[command], f"{command} does not call {module}"


def test_production_code_never_imports_the_lab(imports):
    wrong = sorted(relative for relative, names in imports.items()
                   if any(name == "graphsite_lab" or name.startswith("graphsite_lab.") for name in names))
    assert not wrong, f"the lab is tooling outside the product; imported by: {wrong}"
    assert not (PACKAGE / "lab").exists() and (ROOT / "graphsite_lab" / "__init__.py").is_file()


def test_the_wheel_is_the_product_alone():
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["graphsite"] and "exclude" not in wheel, wheel


def test_every_allow_listed_module_exists(imports):
    listed = ({f"{name}.py" for name in SHARED} | {path for paths in ADAPTERS.values() for path in paths}
              | set(COMMANDS) | set(COMMANDS.values()) | NOT_COMMANDS)
    assert not listed - set(imports), f"allow-listed but not in graphsite/: {sorted(listed - set(imports))}"


@pytest.mark.parametrize("client", sorted(ADAPTERS))
def test_each_client_is_imported_only_by_its_adapter(imports, client):
    users = {relative for relative, names in imports.items()
             if any(name == client or name.startswith(client + ".") for name in names)}
    assert users <= ADAPTERS[client], f"{client} imported outside its adapter: {sorted(users - ADAPTERS[client])}"
    assert users == ADAPTERS[client], f"allowed to import {client} but do not: {sorted(ADAPTERS[client] - users)}"


def test_the_rules_can_fail(tmp_path):
    """The checks read real import statements, lazy ones included."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from graphsite_lab import stack\n    import httpx\n")
    assert {"graphsite_lab", "graphsite_lab.stack", "httpx"} <= _imports(module)
