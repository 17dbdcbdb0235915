"""``repr()`` that never raises, whatever state an object's constructor stopped in.

A traceback formatted with captured locals (``unittest --locals``, ``pytest --showlocals``,
rich, Sentry) calls ``repr`` on the ``self`` of a constructor that raised; an
``AttributeError`` from a half-built object would then hide the error that matters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

__all__ = ["tolerant_repr"]

C = TypeVar("C", bound=type)


def tolerant_repr(cls: C) -> C:
    """Class decorator: ``repr`` (and a ``__str__`` of the class's own) never raise.

    Apply it outermost, over ``@frozen``/``@define``, which build a new class. An attrs class
    defined with ``repr=False`` and no ``__repr__`` of its own gets the repr attrs would have
    written (``Pet(id=1, name='Rex', ...)``, the fields with ``repr=False`` left out), made
    here from its fields: attrs compiles a repr for each class as the module is imported,
    about a tenth of a millisecond each.

    Args:
        cls: the class.

    Returns:
        The same class; on an exception, its ``repr``/``str`` give ``<Name (incomplete)>``.
    """
    # setattr: type checkers refuse assigning to a method, which is the point here.
    # Looked up on the class: an unbound method, which takes the instance.
    own_repr: Callable[[object], str] = getattr(cls, "__repr__")  # noqa: B009
    if own_repr is object.__repr__ and attrs.has(cls):
        own_repr = _fields_repr
    setattr(cls, "__repr__", _tolerant(own_repr))  # noqa: B010
    if "__str__" in vars(cls):
        setattr(cls, "__str__", _tolerant(vars(cls)["__str__"]))  # noqa: B010
    return cls


def _fields_repr(self: Any) -> str:
    shown = ", ".join(
        f"{field.name}={getattr(self, field.name)!r}"
        for field in attrs.fields(type(self))
        if field.repr
    )
    # As attrs names the class: a class defined in a function without its "<locals>" path.
    return f"{type(self).__qualname__.rpartition('>.')[2]}({shown})"


def _tolerant(method: Callable[[object], str]) -> Callable[[object], str]:
    @functools.wraps(method)
    def tolerant(self: object) -> str:
        try:
            return method(self)
        except Exception:
            return f"<{type(self).__name__} (incomplete)>"

    return tolerant
