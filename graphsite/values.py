"""`@frozen`: a frozen dataclass whose methods are shared functions, not code compiled when the class is made.

`@dataclass(frozen=True)` writes the source of `__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__` and
`__delattr__` for each class and compiles it as the module is imported: about 0.5 ms a class, paid at every
start-up, and a third of a small build's CPU time was the ~40 value classes on its path (issue 24). A `@frozen`
class is a real dataclass (`dataclasses.fields`, `replace`, `asdict` and mypy treat it as a frozen one) whose
methods are generic functions over its fields: the same arguments, defaults, default factories, errors,
equality, hash and repr as `@dataclass(frozen=True)` gives (tests/test_values.py holds the two side by side).
What its `__init__` does not do (call `__post_init__`, leave out a field of `init=False`) is refused with a
TypeError as the class is decorated, never skipped in silence.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

_MISSING = dataclasses.MISSING
_set = object.__setattr__
_REPLACED = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[T]) -> type[T]:
    """Return `cls` as a frozen dataclass (fields as `@dataclass(frozen=True)` reads them), its methods shared.
    Raise TypeError for a class with what its `__init__` would skip: a `__post_init__`, a field of `init=False`;
    and for one that writes a method @frozen puts in place (`@dataclass` would keep a `__repr__` that hides a
    secret, @frozen would not)."""
    if hasattr(cls, "__post_init__"):
        raise _refused(cls, "defines __post_init__ (here or in a base class), which @frozen's __init__ never calls")
    if own := [name for name in _REPLACED if name in cls.__dict__]:
        raise _refused(cls, f"writes {', '.join(own)}, which @frozen would replace")
    if not cls.__doc__:  # else dataclasses writes one from inspect.signature, which parses text with ast
        cls.__doc__ = f"{cls.__name__}({', '.join(cls.__dict__.get('__annotations__', {}))})"
    made: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False)  # compiles nothing
    fields = dataclasses.fields(made)
    if skipped := [f.name for f in fields if not f.init]:
        raise _refused(cls, f"has fields of init=False ({', '.join(skipped)}), which @frozen's __init__ never sets")
    compared = tuple(f.name for f in fields if f.compare)
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    shown = tuple(f.name for f in fields if f.repr)
    made.__init__ = _init(made, tuple(f for f in fields if f.init))
    made.__repr__ = _repr(shown)
    made.__eq__ = _eq(compared)
    made.__hash__ = _hash(hashed)
    made.__setattr__ = _frozen_setattr
    made.__delattr__ = _frozen_delattr
    return cls  # the same class object, made a dataclass in place


def _refused(cls: type, why: str) -> TypeError:
    return TypeError(f"@frozen {cls.__module__}.{cls.__qualname__}: {why}; make it a "
                     "@dataclasses.dataclass(frozen=True), or compute the value before the instance is made")


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    names = tuple(f.name for f in fields)
    defaults = {f.name: f.default for f in fields if f.default is not _MISSING}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not _MISSING}
    count, where = len(names), f"{cls.__qualname__}.__init__()"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > count:
            raise TypeError(f"{where} takes {count + 1} positional arguments but {len(args) + 1} were given")
        for name, argument in zip(names, args, strict=False):
            _set(self, name, argument)
        for name in names[len(args):]:
            if name in kwargs:
                _set(self, name, kwargs.pop(name))
            elif name in defaults:
                _set(self, name, defaults[name])
            elif name in factories:
                _set(self, name, factories[name]())
            else:
                raise TypeError(f"{where} missing 1 required argument: {name!r}")
        if kwargs:
            extra = next(iter(kwargs))
            raise TypeError(f"{where} got multiple values for argument {extra!r}" if extra in names
                            else f"{where} got an unexpected keyword argument {extra!r}")

    return __init__


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """Return a function giving an instance's values of `names` as a tuple (what dataclasses compare and hash)."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda instance: (one(instance),)
    return operator.attrgetter(*names)


def _eq(names: tuple[str, ...]) -> Callable[[Any, object], Any]:
    values = _values(names)

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return values(self) == values(other)

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
