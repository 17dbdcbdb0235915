"""``client.with_raw_response``: the client's methods, returning an ``APIResponse``.

Each view holds a raw copy of its client (see ``_BaseClient._raw_copy``), whose calls return
the ``APIResponse`` at run time. The views' attributes are descriptors typed from the client's
own methods, so a view always has the client's parameters, spelled once, with declared types
that editors and ``pyright --verifytypes`` can read.
"""

# No `from __future__ import annotations`: the views' `Final` annotations stay objects, which
# `typing.get_type_hints` can read once the classes name the package as their module.
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, Final, Generic, TypeVar, overload

from typing_extensions import ParamSpec, Self, deprecated

from animalstore_client._client import AsyncClient, Client
from animalstore_client._response import APIResponse

__all__ = ["AsyncRawResponses", "RawResponses"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


class _RawView:
    """What both raw views hold: a raw copy of their client, which follows its closing."""

    __slots__ = ("_raw",)

    def __init__(self, client: Client | AsyncClient) -> None:
        self._raw = client._raw_copy()


class _RawMethod(Generic[P, R]):
    """A client method as a raw view shows it: the same parameters, another return type."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, view: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, view: _RawView, owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, view: _RawView | None, owner: type[Any]) -> Any:
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
    def __get__(self, view: _RawView, owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, view: _RawView | None, owner: type[Any]) -> Any:
        return super().__get__(view, owner)


def _raw(method: Callable[Concatenate[Any, P], T]) -> _RawMethod[P, APIResponse[T]]:
    return _RawMethod(method.__name__)


def _raw_async(
    method: Callable[Concatenate[Any, P], Awaitable[T]],
) -> _RawMethod[P, Coroutine[Any, Any, APIResponse[T]]]:
    return _RawMethod(method.__name__)


def _deprecated(method: _RawMethod[P, R]) -> _DeprecatedRawMethod[P, R]:
    return _DeprecatedRawMethod(method._name)


class RawResponses(_RawView):
    """``client.with_raw_response``: the client's methods, returning an ``APIResponse``.

    Use it to read the status, headers or ``x-request-id``; call ``.parse()`` for the result.
    ``get_pet`` is deprecated here as on the client.

    Args:
        client: the client whose methods it calls (``client.with_raw_response`` makes one).
    """

    __slots__ = ()

    # `Final` declares the types, inferred from the client's methods: spelled out, each
    # signature would be written twice.
    list_pets: Final = _raw(Client.list_pets)
    create_pet: Final = _raw(Client.create_pet)
    get_pet: Final = _deprecated(_raw(Client.get_pet))  # type: ignore[deprecated]

    def __init__(self, client: Client) -> None:
        super().__init__(client)


class AsyncRawResponses(_RawView):
    """``client.with_raw_response``: the client's methods, returning an ``APIResponse``.

    Await a method, then read the status, headers or ``x-request-id``; ``.parse()`` is a
    plain call, not awaited, since the body has already been read. ``get_pet`` is deprecated
    here as on the client.

    Args:
        client: the client whose methods it calls (``client.with_raw_response`` makes one).
    """

    __slots__ = ()

    list_pets: Final = _raw_async(AsyncClient.list_pets)
    create_pet: Final = _raw_async(AsyncClient.create_pet)
    get_pet: Final = _deprecated(_raw_async(AsyncClient.get_pet))  # type: ignore[deprecated]

    def __init__(self, client: AsyncClient) -> None:
        super().__init__(client)
