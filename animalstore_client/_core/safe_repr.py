"""``repr()`` that never raises, whatever state an object's constructor stopped in.

A traceback formatted with captured locals (``unittest --locals``, ``pytest --showlocals``,
rich, Sentry) calls ``repr`` on the ``self`` of a constructor that raised; an
``AttributeError`` from a half-built object would then hide the error that matters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

__all__ = ["tolerant_repr"]

C = TypeVar("C", bound=type)


def tolerant_repr(cls: C) -> C:
    """Class decorator: ``repr`` (and a ``__str__`` of the class's own) never raise.

    Apply it outermost, over ``@frozen``/``@define``, which build a new class.

    Args:
        cls: the class.

    Returns:
        The same class; on an exception, its ``repr``/``str`` give ``<Name (incomplete)>``.
    """
    # setattr: type checkers refuse assigning to a method, which is the point here.
    # Looked up on the class: an unbound method, which takes the instance.
    own_repr: Callable[[object], str] = getattr(cls, "__repr__")  # noqa: B009
    setattr(cls, "__repr__", _tolerant(own_repr))  # noqa: B010
    if "__str__" in vars(cls):
        setattr(cls, "__str__", _tolerant(vars(cls)["__str__"]))  # noqa: B010
    return cls


def _tolerant(method: Callable[[object], str]) -> Callable[[object], str]:
    @functools.wraps(method)
    def tolerant(self: object) -> str:
        try:
            return method(self)
        except Exception:
            return f"<{type(self).__name__} (incomplete)>"

    return tolerant
