"""What ``client.with_raw_response`` is made of: the client's methods, returning an ``APIResponse``.

Each view (``RawResponses`` and ``AsyncRawResponses``, beside the clients) holds a raw copy of
its client (see ``_BaseClient._raw_copy``), whose calls return the ``APIResponse`` at run time.
The views' attributes are descriptors typed from the client's own methods, so a view always
has the client's parameters, spelled once, with declared types that editors and
``pyright --verifytypes`` can read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, Generic, Protocol, TypeVar, overload

from typing_extensions import ParamSpec, Self, deprecated

from animalstore_client._core.response import APIResponse

__all__ = ["RawView", "deprecated_raw", "raw_async_method", "raw_method"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


class _Client(Protocol):
    def _raw_copy(self) -> Any: ...


C = TypeVar("C", bound=_Client)


class RawView(Generic[C]):
    """What both raw views hold: a raw copy of their client, which follows its closing.

    Made by ``client.with_raw_response``, not by users. ``get_pet`` is deprecated on a view
    as on the client.

    Args:
        client: the client whose methods the view calls.
    """

    __slots__ = ("_raw",)

    def __init__(self, client: C) -> None:
        self._raw = client._raw_copy()


class _RawMethod(Generic[P, R]):
    """A client method as a raw view shows it: the same parameters, another return type."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, view: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, view: RawView[Any], owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, view: RawView[Any] | None, owner: type[Any]) -> Any:
        return self if view is None else getattr(view._raw, self._name)


class _DeprecatedRawMethod(_RawMethod[P, R]):
    """A deprecated client method on a raw view: type checkers flag its use there too."""

    __slots__ = ()

    @overload
    def __get__(self, view: None, owner: type[Any]) -> Self: ...
    @overload
    # A string literal, not a constant: type checkers only read a literal (PEP 702).
    @deprecated(
        "get_pet() calls GET /pets/{petId}, which is deprecated and will be removed on "
        "5 December 2030; use list_pets() with a status filter instead"
    )
    def __get__(self, view: RawView[Any], owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, view: RawView[Any] | None, owner: type[Any]) -> Any:
        return super().__get__(view, owner)


def raw_method(method: Callable[Concatenate[Any, P], T]) -> _RawMethod[P, APIResponse[T]]:
    """Return the raw view's counterpart of a ``Client`` method."""
    return _RawMethod(method.__name__)


def raw_async_method(
    method: Callable[Concatenate[Any, P], Awaitable[T]],
) -> _RawMethod[P, Coroutine[Any, Any, APIResponse[T]]]:
    """Return the raw view's counterpart of an ``AsyncClient`` method."""
    return _RawMethod(method.__name__)


def deprecated_raw(method: _RawMethod[P, R]) -> _DeprecatedRawMethod[P, R]:
    """Return ``method`` flagged as deprecated, as the client's ``get_pet`` is."""
    return _DeprecatedRawMethod(method._name)
