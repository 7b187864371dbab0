"""`@frozen` beside `@dataclass(frozen=True)`: the same fields, construction, defaults, errors, equality, hash,
repr, immutability and `dataclasses` functions, for one class written both ways."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
from typing import Any

import pytest

from graphsite.values import frozen


def _factory() -> list[int]:
    return [1]


def _named(cls: type, name: str) -> type:
    """Return `cls` named `name`, the module-level name it is bound to (where pickle looks for it)."""
    cls.__name__ = cls.__qualname__ = name
    return cls


def _value(name: str) -> type:
    """Return a new class, not yet a dataclass, with a field of every kind: written once for both decorators, so
    the two sides cannot drift apart."""

    class Value:
        name: str
        count: int = 0
        tags: tuple[str, ...] = ()
        items: list[int] = dataclasses.field(default_factory=_factory)
        note: str = dataclasses.field(default="", compare=False)
        secret: str = dataclasses.field(default="", repr=False)

    return _named(Value, name)


def _hashable(name: str) -> type:
    class Value:
        name: str
        count: float = 0.0
        note: str = dataclasses.field(default="", compare=False)

    return _named(Value, name)


Ours = frozen(_value("Ours"))
Stdlib = dataclasses.dataclass(frozen=True)(_value("Stdlib"))
Hashable = frozen(_hashable("Hashable"))
StdlibHashable = dataclasses.dataclass(frozen=True)(_hashable("StdlibHashable"))


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}), (("a", 2), {}), (("a",), {"count": 3, "tags": ("x",)}), ((), {"name": "b", "note": "n"}),
    (("a", 1, ("t",), [2], "note", "s"), {}), (("a",), {"secret": "hidden"}),
]
BAD_CALLS: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
    ((), {}, "name"), (("a", 1, (), [], "", "", "extra"), {}, "positional"), (("a",), {"name": "b"}, "name"),
    (("a",), {"colour": "red"}, "colour"),
]


def _shown(instance: object, cls: type) -> str:
    return repr(instance).replace(cls.__qualname__, "X")


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_construction_repr_and_fields_match(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    ours, theirs = Ours(*args, **kwargs), Stdlib(*args, **kwargs)
    assert _shown(ours, Ours) == _shown(theirs, Stdlib)
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert [(f.name, f.default, f.compare, f.repr) for f in dataclasses.fields(Ours)] == \
        [(f.name, f.default, f.compare, f.repr) for f in dataclasses.fields(Stdlib)]
    assert dataclasses.is_dataclass(ours)
    assert _shown(dataclasses.replace(ours, count=9), Ours) == _shown(dataclasses.replace(theirs, count=9), Stdlib)


@pytest.mark.parametrize(("args", "kwargs", "named"), BAD_CALLS)
def test_wrong_arguments_fail_alike(args: tuple[Any, ...], kwargs: dict[str, Any], named: str) -> None:
    for cls in (Ours, Stdlib):
        with pytest.raises(TypeError, match=named):
            cls(*args, **kwargs)


def test_a_default_factory_runs_once_per_instance() -> None:
    first, second = Ours("a"), Ours("a")
    assert first.items == [1] and first.items is not second.items


def test_equality_and_hash_match() -> None:
    nan = float("nan")
    pairs = [(Hashable("a", 1.0, "x"), Hashable("a", 1.0, "y")), (Hashable("a", nan), Hashable("a", nan)),
             (Hashable("a"), Hashable("b"))]
    stdlib = [(StdlibHashable("a", 1.0, "x"), StdlibHashable("a", 1.0, "y")),
              (StdlibHashable("a", nan), StdlibHashable("a", nan)), (StdlibHashable("a"), StdlibHashable("b"))]
    assert [left == right for left, right in pairs] == [left == right for left, right in stdlib]
    assert [hash(left) == hash(right) for left, right in pairs] == [hash(left) == hash(right) for left, right in stdlib]
    same = Hashable("a", nan)
    assert same == same and hash(same) == hash(same)
    assert Hashable("a") != StdlibHashable("a") and Hashable("a") != ("a", 0.0, "")
    assert len({Hashable("a"), Hashable("a", note="other"), Hashable("b")}) == 2


def test_instances_are_frozen() -> None:
    ours = Ours("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.name = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del ours.name  # type: ignore[misc]
    assert ours.name == "a"


def test_copies_and_pickles_keep_the_values() -> None:
    ours = Ours("a", 2, ("t",), [3], "n", "s")
    for copied in (copy.copy(ours), copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert copied == ours and copied.note == "n" and copied.secret == "s"


def _with_post_init() -> type:
    class Checked:
        name: str

        def __post_init__(self) -> None:
            raise ValueError("never called by @frozen's __init__")

    return Checked


def _with_a_field_not_in_init() -> type:
    class Derived:
        name: str
        size: int = dataclasses.field(init=False, default=0)

    return Derived


def _inheriting_post_init() -> type:
    @dataclasses.dataclass(frozen=True)
    class Base:
        name: str

        def __post_init__(self) -> None:
            pass

    class Child(Base):
        count: int = 0

    return Child


def _with_its_own_repr() -> type:
    class Secret:
        token: str

        def __repr__(self) -> str:
            return "Secret(token=***)"

    return Secret


@pytest.mark.parametrize(("make", "named"), [(_with_post_init, "__post_init__"),
                                             (_with_a_field_not_in_init, "init=False"),
                                             (_inheriting_post_init, "__post_init__"),
                                             (_with_its_own_repr, "__repr__")])
def test_what_frozen_would_silently_skip_is_refused_when_the_class_is_made(make: Any, named: str) -> None:
    """@frozen's __init__ never calls __post_init__ and would leave a field of init=False unset: a class that has
    either is refused as it is decorated, not found wrong when an instance lacks what it should hold."""
    cls = make()
    where = re.escape(f"{__name__}.{cls.__qualname__}")
    with pytest.raises(TypeError, match=rf"^@frozen {where}: .*{named}.*dataclasses\.dataclass\(frozen=True\)"):
        frozen(cls)
    dataclasses.dataclass(frozen=True)(make())  # what it says to use instead takes the class as it is
