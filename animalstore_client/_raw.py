"""What ``client.with_raw_response`` is made of: the client's methods, returning an ``APIResponse``.

Each view (``RawResponses`` and ``AsyncRawResponses``, beside the clients) holds its client. Its
methods are ``RawMethod`` descriptors, each made from the client's method: one mechanism, the
same for type checkers and at run time. Type checkers read from it the client method's
parameters, spelled once, with ``APIResponse[...]`` as the result. At run time, read from a
view, it gives a method that builds the operation's request with its recipe
(``_core/operations.py``, whose recipes take the client methods' parameters) and sends it with
the client, which returns the ``APIResponse``; read from the class, a function with the client
method's parameters, ``APIResponse[...]`` as its return type and a docstring, for ``help()``,
``inspect.signature`` and ``unittest.mock.create_autospec``.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import (
    Any,
    Concatenate,
    Generic,
    NoReturn,
    SupportsIndex,
    TypeVar,
    cast,
    get_type_hints,
    overload,
)

from typing_extensions import ParamSpec, deprecated

from animalstore_client._core import operations
from animalstore_client._core.response import APIResponse

__all__ = [
    "DeprecatedRawMethod",
    "RawMethod",
    "RawView",
    "cached_view",
    "deprecated_raw",
    "raw_async_method",
    "raw_method",
]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
V = TypeVar("V", bound="RawView")


class Uncopyable:
    """Refuses ``copy.copy`` and ``copy.deepcopy`` with one ``TypeError`` line.

    Refused outright, before ``copy`` reaches the instance's state: a shallow copy of a client
    would own its pool (closing it closed the original's), a deep one failed deep in ``copy``
    with deepcopy's memo, the key in it, in every traceback shown with its locals. Each class
    says in ``_refusal`` what to use instead, never a setting. Pickling is each class's own
    choice: a client pickles its settings (``_client``), a raw view refuses.
    """

    __slots__ = ()

    def _refusal(self) -> TypeError:
        return TypeError(f"{type(self).__name__} objects cannot be copied")

    def __copy__(self) -> NoReturn:
        """Refuse to be copied.

        Raises:
            TypeError: always; the message names the class and what to use instead, never a
                setting.
        """
        raise self._refusal()

    def __deepcopy__(self, memo: object) -> NoReturn:
        """Refuse to be copied: see ``__copy__``."""
        raise self._refusal()


class RawView(Uncopyable):
    """What both raw views hold: their client, whose closing they follow.

    Made by ``client.with_raw_response``, not by users. ``get_pet`` is deprecated on a view
    as on the client.

    Args:
        client: the ``Client`` or ``AsyncClient`` whose methods the view calls.
    """

    __slots__ = ("_client",)

    def __init__(self, client: Any) -> None:
        # `Client` or `AsyncClient` (their module imports this one): the view's methods are
        # made from theirs.
        self._client = client

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        """Pickle the view as its client's: unpickled, the new client's view."""
        return (getattr, (self._client, "with_raw_response"))

    def _refusal(self) -> TypeError:
        # The view, rather than the client behind it.
        return TypeError(
            f"{type(self).__name__} objects cannot be copied; read the "
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


class RawMethod(Generic[P, R]):
    """A client method as a raw view has it: the same parameters, an ``APIResponse`` returned.

    Read from a view, a method of it; read from the view's class, the function that
    ``help()``, ``inspect.signature`` and ``create_autospec`` read (the view's parameter left
    out, as the view's method has none). Both made on first read: a coroutine function for an
    ``AsyncClient``'s method.

    Args:
        method: the client's method (``Client.list_pets``); its operation's recipe has its
            name and takes its parameters.
    """

    __slots__ = ("_functions", "_method")

    def __init__(self, method: Callable[..., Any]) -> None:
        self._method = method
        self._functions: tuple[types.FunctionType, types.FunctionType] | None = None

    @property
    def __deprecated__(self) -> str | None:
        """The client method's deprecation message, if it has one (PEP 702's attribute)."""
        return getattr(self._method, "__deprecated__", None)

    @overload
    def __get__(self, view: None, owner: type[Any]) -> Callable[P, R]: ...
    @overload
    def __get__(self, view: RawView, owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, view: RawView | None, owner: type[Any]) -> Callable[P, R]:
        """Return the view's method, or read from the class, the function that shows it."""
        call, shown = self._functions or self._made()
        return shown if view is None else types.MethodType(call, view)

    def _made(self) -> tuple[types.FunctionType, types.FunctionType]:
        """Make the view's function and the one its class shows; keep them for later reads."""
        recipe = getattr(operations, self._method.__name__)
        if inspect.iscoroutinefunction(self._method):
            call = _async_call(recipe)
        else:
            call = _sync_call(recipe)
        # The same code under another signature: the view's parameter left out.
        shown = types.FunctionType(
            call.__code__, call.__globals__, call.__name__, None, call.__closure__
        )
        # The client's annotations are objects (no `from __future__ import annotations` there).
        hints = dict(self._method.__annotations__)
        hints["return"] = cast(Any, APIResponse)[hints["return"]]
        signature = inspect.signature(self._method).replace(return_annotation=hints["return"])
        parameters = list(signature.parameters.values())
        function: Any  # the attributes set below are not in FunctionType's stubs
        for function, own in ((call, parameters), (shown, parameters[1:])):
            function.__name__ = function.__qualname__ = self._method.__name__
            function.__module__ = self._method.__module__
            function.__doc__ = (
                f"``{self._method.__qualname__}``, returning its ``APIResponse``: status, "
                f"headers, ``.parse()``.\n\n{inspect.getdoc(self._method)}"
            )
            function.__annotations__ = hints
            function.__signature__ = signature.replace(parameters=own)
            if self.__deprecated__ is not None:
                function.__deprecated__ = self.__deprecated__
        self._functions = (call, shown)
        return call, shown


def _sync_call(recipe: Callable[..., operations.Operation[Any]]) -> types.FunctionType:
    def call(view: RawView, /, *args: Any, **kwargs: Any) -> Any:
        return view._client._request(recipe(*args, **kwargs), raw=True)

    return call  # type: ignore[return-value]  # a def is a FunctionType


def _async_call(recipe: Callable[..., operations.Operation[Any]]) -> types.FunctionType:
    async def call(view: RawView, /, *args: Any, **kwargs: Any) -> Any:
        return await view._client._request(recipe(*args, **kwargs), raw=True)

    return call  # type: ignore[return-value]  # a def is a FunctionType


class DeprecatedRawMethod(RawMethod[P, R]):
    """A deprecated client method on a raw view: type checkers flag its use there too.

    The client's method warns at run time, from its recipe, as the view calls it.
    """

    __slots__ = ()

    @overload
    def __get__(self, view: None, owner: type[Any]) -> Callable[P, R]: ...
    @overload
    # A string literal, not a constant: type checkers only read a literal (PEP 702). It is the
    # words the declaration makes (tests/contract/test_every_operation.py compares them).
    @deprecated(
        "get_pet() calls GET /pets/{petId}, which is deprecated and will be removed on "
        "5 December 2030; use list_pets() with a status filter instead",
        category=None,
    )
    def __get__(self, view: RawView, owner: type[Any]) -> Callable[P, R]: ...
    def __get__(self, view: RawView | None, owner: type[Any]) -> Callable[P, R]:
        """Return the view's method, or read from the class, the function that shows it."""
        return super().__get__(view, owner)


def raw_method(method: Callable[Concatenate[Any, P], T]) -> RawMethod[P, APIResponse[T]]:
    """Return the raw view's counterpart of a ``Client`` method."""
    return RawMethod(method)


def raw_async_method(
    method: Callable[Concatenate[Any, P], Awaitable[T]],
) -> RawMethod[P, Coroutine[Any, Any, APIResponse[T]]]:
    """Return the raw view's counterpart of an ``AsyncClient`` method."""
    return RawMethod(method)


def deprecated_raw(method: RawMethod[P, R]) -> DeprecatedRawMethod[P, R]:
    """Return ``method`` flagged as deprecated for type checkers, as the client's method is."""
    return DeprecatedRawMethod(method._method)
