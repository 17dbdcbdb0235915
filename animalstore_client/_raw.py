"""What ``client.with_raw_response`` is made of: the client's methods, returning an ``APIResponse``.

Each view (``RawResponses`` and ``AsyncRawResponses``, beside the clients) holds a raw copy of
its client (see ``_BaseClient._raw_copy``), whose calls return the ``APIResponse`` at run time.
A view's method is made from the client's own: for type checkers a descriptor typed from it,
so a view always has the client's parameters, spelled once, with declared types that editors
and ``pyright --verifytypes`` can read; at run time a function that calls the raw copy, with
the client method's signature and ``APIResponse[...]`` as its return type (a coroutine
function on ``AsyncRawResponses``), for ``help()`` and ``inspect.signature``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    NoReturn,
    Protocol,
    SupportsIndex,
    TypeVar,
    cast,
    get_type_hints,
    overload,
)

from typing_extensions import ParamSpec, deprecated

from animalstore_client._core.response import APIResponse

__all__ = ["RawView", "cached_view", "deprecated_raw", "raw_async_method", "raw_method"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
V = TypeVar("V", bound="RawView")


class _Client(Protocol):
    """What a raw view needs of its client: ``Client`` or ``AsyncClient``."""

    def _raw_copy(self) -> Any: ...


class Uncopyable:
    """Refuses ``copy.copy``, ``copy.deepcopy`` and pickling with one ``TypeError`` line.

    Refused outright, before ``copy`` or ``pickle`` reaches the instance's state: a shallow
    copy of a client would own its pool (closing it closed the original's), a deep one failed
    deep in ``copy`` with deepcopy's memo, the key in it, in every traceback shown with its
    locals. ``pickle`` refuses too, so that a deep copy stays what pickling makes. Each class
    says in ``_refusal`` what to use instead, never a setting.
    """

    __slots__ = ()

    def _refusal(self) -> TypeError:
        return TypeError(f"{type(self).__name__} objects cannot be copied or pickled")

    def __copy__(self) -> NoReturn:
        """Refuse: see ``__reduce_ex__``."""
        raise self._refusal()

    def __deepcopy__(self, memo: object) -> NoReturn:
        """Refuse: see ``__reduce_ex__``."""
        raise self._refusal()

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        """Refuse to be copied (``copy.copy``, ``copy.deepcopy``) or pickled.

        Raises:
            TypeError: always; the message names the class and what to use instead, never a
                setting.
        """
        raise self._refusal()


class RawView(Uncopyable):
    """What both raw views hold: a raw copy of their client, which follows its closing.

    Made by ``client.with_raw_response``, not by users. ``get_pet`` is deprecated on a view
    as on the client.

    Args:
        client: the client whose methods the view calls.
    """

    __slots__ = ("_raw",)

    def __init__(self, client: _Client) -> None:
        self._raw = client._raw_copy()

    def _refusal(self) -> TypeError:
        # The view, rather than the hidden client behind it.
        return TypeError(
            f"{type(self).__name__} objects cannot be copied or pickled; read the "
            "with_raw_response of the client to call (one of client.with_options() has its own)"
        )


class cached_view(Generic[V]):
    """A client's ``with_raw_response``: ``functools.cached_property``, readable from the class.

    Read from a client, it makes the client's view on first read and keeps it in the client's
    ``__dict__``, where later reads find it first: one view per client. Read from the class, it
    is the view's class, not the descriptor, so that
    ``unittest.mock.create_autospec(Client, instance=True).with_raw_response`` has the view's
    methods, with their signatures (autospec reads each attribute from the class; a
    ``cached_property`` read there is itself, which has none of them).

    Args:
        make: the client's method that makes its view; its return annotation is the view's
            class.

    Attributes:
        func: ``make``.
    """

    def __init__(self, make: Callable[[Any], V]) -> None:
        self.func = make
        self.__doc__ = make.__doc__

    @overload
    def __get__(self, client: None, owner: type[Any]) -> type[V]: ...
    @overload
    def __get__(self, client: object, owner: type[Any] | None = None) -> V: ...
    def __get__(self, client: object, owner: type[Any] | None = None) -> V | type[V]:
        """Return the client's view, made on first read; read from the class, its class."""
        if client is None:
            view_class: type[V] = get_type_hints(self.func)["return"]
            return view_class
        view = self.func(client)
        vars(client)[self.func.__name__] = view
        return view


if TYPE_CHECKING:

    class _RawMethod(Generic[P, R]):
        """A client method as a raw view shows it: the same parameters, another return type.

        For type checkers only: at run time a view's method is a function (see ``_as_raw``).
        """

        @overload
        def __get__(self, view: None, owner: type[Any]) -> Callable[Concatenate[Any, P], R]: ...
        @overload
        def __get__(self, view: RawView, owner: type[Any]) -> Callable[P, R]: ...
        def __get__(self, view: RawView | None, owner: type[Any]) -> Any: ...

    class _DeprecatedRawMethod(_RawMethod[P, R]):
        """A deprecated client method on a raw view: type checkers flag its use there too."""

        @overload
        def __get__(self, view: None, owner: type[Any]) -> Callable[Concatenate[Any, P], R]: ...
        @overload
        # A string literal, not a constant: type checkers only read a literal (PEP 702).
        @deprecated(
            "get_pet() calls GET /pets/{petId}, which is deprecated and will be removed on "
            "5 December 2030; use list_pets() with a status filter instead"
        )
        def __get__(self, view: RawView, owner: type[Any]) -> Callable[P, R]: ...
        def __get__(self, view: RawView | None, owner: type[Any]) -> Any: ...


def raw_method(method: Callable[Concatenate[Any, P], T]) -> _RawMethod[P, APIResponse[T]]:
    """Return the raw view's counterpart of a ``Client`` method."""
    name = method.__name__

    def call(view: RawView, /, *args: Any, **kwargs: Any) -> Any:
        return getattr(view._raw, name)(*args, **kwargs)

    return cast("_RawMethod[P, APIResponse[T]]", _as_raw(call, method))


def raw_async_method(
    method: Callable[Concatenate[Any, P], Awaitable[T]],
) -> _RawMethod[P, Coroutine[Any, Any, APIResponse[T]]]:
    """Return the raw view's counterpart of an ``AsyncClient`` method."""
    name = method.__name__

    async def call(view: RawView, /, *args: Any, **kwargs: Any) -> Any:
        return await getattr(view._raw, name)(*args, **kwargs)

    return cast("_RawMethod[P, Coroutine[Any, Any, APIResponse[T]]]", _as_raw(call, method))


def _as_raw(call: Callable[..., Any], method: Callable[..., Any]) -> object:
    """Give ``call`` the name, signature and types of ``method``, returning an ``APIResponse``.

    Returns:
        ``call``, which its caller declares as the descriptor type checkers read.
    """
    # The client's annotations are objects (no `from __future__ import annotations` there).
    hints = dict(method.__annotations__)
    hints["return"] = cast(Any, APIResponse)[hints["return"]]
    signature = inspect.signature(method)
    call.__name__ = call.__qualname__ = method.__name__
    call.__module__ = method.__module__
    call.__doc__ = (
        f"``{method.__qualname__}``, returning its ``APIResponse``: status, headers, "
        f"``.parse()``.\n\n{inspect.getdoc(method)}"
    )
    call.__annotations__ = hints
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        return_annotation=hints["return"]
    )
    if hasattr(method, "__deprecated__"):
        call.__deprecated__ = method.__deprecated__  # type: ignore[attr-defined]
    return call


def deprecated_raw(method: _RawMethod[P, R]) -> _DeprecatedRawMethod[P, R]:
    """Return ``method`` flagged as deprecated for type checkers, as the client's ``get_pet`` is.

    At run time ``method`` itself: the client's method warns, as the view calls it.
    """
    return cast("_DeprecatedRawMethod[P, R]", method)
