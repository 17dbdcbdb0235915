"""Types shared across the public API: the ``NOT_GIVEN`` sentinel and ``PetStatusLiteral``.

``None`` is a meaningful value for some arguments (``timeout=None`` means no limit, as in
httpx), so "the caller did not pass this" needs a value of its own that type checkers can tell
apart from ``None``.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = ["NOT_GIVEN", "NotGiven", "PetStatusLiteral"]

PetStatusLiteral: TypeAlias = Literal["available", "pending", "sold"]
"""The values of ``PetStatus`` as string literals, for annotating ``status`` arguments.

Type checkers reject any other string where it is expected, and editors complete the values.
It lists what ``status`` arguments accept; what the API returns may hold a status this version
of the SDK does not know, so ``Pet.status`` stays ``PetStatus | str | None``.
"""


class NotGiven:
    """The type of ``NOT_GIVEN``, the default of arguments for which ``None`` means something.

    Example::

        client.with_options(timeout=None)   # no limit
        client.with_options()               # timeout=NOT_GIVEN: keep the client's

    There is one instance; it is falsy, and it survives ``pickle`` and ``copy`` as itself.
    """

    __slots__ = ()
    _instance: NotGiven | None = None

    def __new__(cls) -> NotGiven:
        """Return the one instance."""
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __reduce__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()
"""Marks an argument the caller did not pass (see ``NotGiven``)."""
