"""The lock files answer pyproject.toml: every dependency (and every extra `make test` installs) is pinned, at a
version its specifier allows, with hashes; a dependency added without `make lock` fails here, not on a fresh
machine."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DEV_EXTRAS = ("test", "lab", "lint")  # what the Makefile's dev lock holds
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", re.M)


def pins(name: str) -> dict[str, Version]:
    """Return {canonical name: version} of the lock file `requirements/name`, proving each pin has a hash."""
    text = (REPO / "requirements" / name).read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    for entry in entries:
        if _PIN.match(entry):
            assert "--hash=sha256:" in entry, f"{name}: {entry.splitlines()[0]} has no hash"
    return {canonicalize_name(m.group(1)): Version(m.group(2)) for m in _PIN.finditer(text)}


def _check(requirements: list[str], locked: dict[str, Version], lock: str) -> None:
    for line in requirements:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{lock}: {requirement.name} is not locked: run `make lock`"
        assert requirement.specifier.contains(locked[name], prereleases=True), \
            f"{lock}: {requirement.name}=={locked[name]} does not satisfy {requirement.specifier}: run `make lock`"


def test_the_build_lock_holds_every_dependency() -> None:
    _check(PROJECT["dependencies"], pins("build.txt"), "build.txt")


@pytest.mark.parametrize("extra", DEV_EXTRAS)
def test_the_dev_lock_holds_every_dependency_and_the_extras(extra: str) -> None:
    locked = pins("dev.txt")
    _check(PROJECT["dependencies"], locked, "dev.txt")
    _check(PROJECT["optional-dependencies"][extra], locked, "dev.txt")


def test_both_locks_agree_and_build_holds_no_test_tool() -> None:
    build, dev = pins("build.txt"), pins("dev.txt")
    assert {name: version for name, version in build.items() if dev.get(name) != version} == {}
    assert not {"pytest", "playwright", "mypy", "ruff", "cloudflare"} & set(build)


def test_the_build_backend_and_installers_are_locked() -> None:
    assert {"hatchling", "editables"} <= set(pins("build.txt"))
    assert {"uv", "pip"} <= set(pins("installers.txt"))
