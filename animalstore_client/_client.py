"""``Client`` and ``AsyncClient``, which differ only in how they send and sleep.

Configuration and ``with_options`` are shared in a base class; each subclass only sends
requests and sleeps between attempts, the one way its I/O model allows, and has its own small
raw-response view.

Each method is one line: check the arguments and build the request recipe (``_operations``),
then drive a ``Call`` (``_call``), which owns retries, parsing and errors.
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from functools import cached_property
from typing import Any, Generic, TypeVar, cast

import httpx
from typing_extensions import ParamSpec, Self, deprecated

from animalstore_client import _operations as ops
from animalstore_client._call import Call
from animalstore_client._config import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    ClientOptions,
    Environment,
    resolve_options,
)
from animalstore_client._http_clients import DefaultAsyncHttpxClient, DefaultHttpxClient
from animalstore_client._logging import configure_from_env
from animalstore_client._models import Pet, PetStatus
from animalstore_client._response import APIResponse
from animalstore_client._types import NOT_GIVEN, NotGiven

__all__ = ["AsyncClient", "Client"]

T = TypeVar("T")
P = ParamSpec("P")
HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)


class _BaseClient(Generic[HttpT]):
    """What ``Client`` and ``AsyncClient`` share: everything but sending and sleeping."""

    _http_class: type[HttpT]
    _new_pool: Callable[[], HttpT]

    def __init__(
        self,
        api_key: str | None = None,
        *,
        environment: Environment | str | None = None,
        base_url: str | httpx.URL | None = None,
        timeout: float | httpx.Timeout | NotGiven | None = NOT_GIVEN,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: HttpT | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        """Configure a client; nothing is sent until a method is called.

        Args:
            api_key: the API key; ``None`` reads ``ANIMALSTORE_API_KEY``.
            environment: ``"production"`` or ``"staging"`` (or an ``Environment``).
            base_url: the API's address, ending in ``/v1``; cannot be combined with
                ``environment``. The address is, first match wins: ``base_url``,
                ``environment``, ``ANIMALSTORE_BASE_URL``, production.
            timeout: per attempt, in seconds for every phase, ``None`` for no limit, or an
                ``httpx.Timeout``. Omitted: ``http_client``'s own timeout when one is given,
                else 5 s to connect and 30 s for the rest (``DEFAULT_TIMEOUT``).
            max_retries: how many times a failed attempt may be retried (0 turns retries off).
            http_client: an ``httpx`` client to send with (for proxies, TLS or transports); it
                is not closed by ``close()``.
            default_headers: extra headers sent on every request; not ``Authorization``
                (the key goes in ``api_key``).

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: no API key, a key with whitespace or control characters, an invalid
                URL or one with credentials, an unknown environment, both ``environment`` and
                ``base_url``, a negative ``max_retries``, or ``Authorization`` in
                ``default_headers``.
        """
        if http_client is not None and not isinstance(http_client, self._http_class):
            raise TypeError(
                f"http_client must be an {self._http_class.__module__}."
                f"{self._http_class.__qualname__}, got {type(http_client).__name__}"
            )
        if isinstance(timeout, NotGiven):
            timeout = DEFAULT_TIMEOUT if http_client is None else http_client.timeout
        self._options: ClientOptions = resolve_options(
            api_key,
            environment=environment,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
        )
        configure_from_env(os.environ)
        self._owns_http = http_client is None
        self._http: HttpT = self._new_pool() if http_client is None else http_client
        self._closed = False
        # Set on the hidden copy behind `with_raw_response`: the client it answers for, whose
        # closing it follows, even when neither owns the pool.
        self._raw_of: _BaseClient[HttpT] | None = None

    @property
    def base_url(self) -> str:
        """The API's address, with a trailing slash."""
        return self._options.base_url

    @property
    def timeout(self) -> httpx.Timeout:
        """The timeout applied to each attempt (phases of ``None`` have no limit)."""
        return self._options.timeout

    @property
    def max_retries(self) -> int:
        """How many times a failed attempt may be retried."""
        return self._options.max_retries

    def with_options(
        self,
        *,
        timeout: float | httpx.Timeout | NotGiven | None = NOT_GIVEN,
        max_retries: int | NotGiven = NOT_GIVEN,
    ) -> Self:
        """Return a copy with other settings that shares this client's connection pool.

        Closing the copy does not close the pool; closing this client does.

        Args:
            timeout: the copy's timeout, as for the constructor (``None``: no limit); omitted,
                this client's.
            max_retries: the copy's retry budget; omitted, this client's.

        Returns:
            The new client.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: an argument is out of range.
        """
        options = self._options
        return type(self)(
            options.api_key,
            base_url=options.base_url,
            timeout=options.timeout if isinstance(timeout, NotGiven) else timeout,
            max_retries=options.max_retries if isinstance(max_retries, NotGiven) else max_retries,
            http_client=self._http,
            default_headers=options.default_headers,
        )

    def _raw_copy(self) -> Self:
        copy = self.with_options()
        copy._raw_of = self
        return copy

    def _start(self, operation: ops.Operation[T]) -> Call[T]:
        client = self._raw_of or self
        if client._closed or self._http.is_closed:
            raise RuntimeError(f"this {type(client).__name__} is closed; create a new one")
        raw = self._raw_of is not None
        return Call(operation, self._options, self._http.build_request, raw=raw)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, "
            f"max_retries={self.max_retries}, timeout={self.timeout!r})"
        )


def _returning_raw(method: Callable[P, T]) -> Callable[P, APIResponse[T]]:
    # `method` belongs to a raw copy of the client (see `_raw_copy`), which returns the
    # APIResponse at run time; this only tells the type checker so.
    return cast("Callable[P, APIResponse[T]]", method)


def _returning_raw_async(
    method: Callable[P, Awaitable[T]],
) -> Callable[P, Coroutine[Any, Any, APIResponse[T]]]:
    return cast("Callable[P, Coroutine[Any, Any, APIResponse[T]]]", method)


class RawResponses:
    """``client.with_raw_response``: the client's methods, returning an ``APIResponse``.

    Use it to read the status, headers or ``x-request-id``; call ``.parse()`` for the result.
    """

    def __init__(self, client: Client) -> None:
        raw = client._raw_copy()
        self.list_pets = _returning_raw(raw.list_pets)
        self.create_pet = _returning_raw(raw.create_pet)
        self.get_pet = _returning_raw(raw.get_pet)  # type: ignore[deprecated]


class AsyncRawResponses:
    """``client.with_raw_response``: the client's methods, returning an ``APIResponse``.

    Await a method, then read the status, headers or ``x-request-id``; ``.parse()`` is a
    plain call, not awaited, since the body has already been read.
    """

    def __init__(self, client: AsyncClient) -> None:
        raw = client._raw_copy()
        self.list_pets = _returning_raw_async(raw.list_pets)
        self.create_pet = _returning_raw_async(raw.create_pet)
        self.get_pet = _returning_raw_async(raw.get_pet)  # type: ignore[deprecated]


_closing: set[Any] = set()


def _close_soon(transport: httpx.AsyncBaseTransport) -> None:
    """Close the pool of a dropped AsyncClient, if its event loop still runs.

    Not a ``__del__``: it runs when the pool itself is unreachable, and only schedules the
    close on a running loop. With no loop running, closing could only fail noisily ("event
    loop is closed"), so it is left to the process's end.
    """
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    task = loop.create_task(transport.aclose())
    _closing.add(task)  # the loop keeps only a weak reference to its tasks
    task.add_done_callback(_closing.discard)


class Client(_BaseClient[httpx.Client]):
    """A synchronous client for the animal store API; safe to share across threads.

    Example::

        with Client(api_key="...") as client:
            pet = client.create_pet(name="Rex", category_id=3)
            pets = client.list_pets(status="available", limit=10)
    """

    _http_class = httpx.Client

    @staticmethod
    def _new_pool() -> httpx.Client:
        http = DefaultHttpxClient()
        # Closed when nothing uses it any more (this client and its copies all dropped
        # without close()), so a forgotten client leaves no socket behind.
        weakref.finalize(http, http._transport.close)
        return http

    def list_pets(
        self, *, limit: int | None = None, status: PetStatus | str | None = None
    ) -> list[Pet]:
        """List animals, optionally only those with one status (``GET /pets``).

        Args:
            limit: at most this many animals, 1 to 100; not sent when ``None``, so that the
                service's default (20) applies.
            status: only animals with this status: a ``PetStatus`` or its value.

        Returns:
            The animals, in the service's order.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``limit`` is outside 1..100 or ``status`` is unknown.
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on timeout), after retries.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return self._request(ops.list_pets(limit=limit, status=status))

    def create_pet(
        self, *, name: str, category_id: int, status: PetStatus | str | None = None
    ) -> Pet:
        """Add an animal (``POST /pets``); never creates it twice.

        It is retried only when the request provably was not processed (no connection could
        be made, or the answer was 429 or 503), with the same ``Idempotency-Key`` each time.

        Args:
            name: the animal's name.
            category_id: the category it belongs to (an int64).
            status: its status: a ``PetStatus`` or its value; ``None`` leaves it to the service.

        Returns:
            The animal as created, with its assigned ``id``.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``category_id`` is outside int64 or ``status`` is unknown.
            BadRequestError: the service rejected the animal (400).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer.
            APIConnectionError: no answer (``APITimeoutError`` on timeout).
            APIResponseValidationError: the answer does not fit the schema.
        """
        return self._request(ops.create_pet(name=name, category_id=category_id, status=status))

    # A string literal, not a constant: type checkers only read a literal (PEP 702).
    @deprecated(
        "get_pet() calls GET /pets/{petId}, which is deprecated and will be removed on "
        "5 December 2030; use list_pets() with a status filter instead"
    )
    def get_pet(self, pet_id: int) -> Pet:
        """Fetch one animal by id (``GET /pets/{petId}``). Deprecated.

        The service removes this operation on 5 December 2030; use ``list_pets`` with a
        ``status`` filter instead. Every call warns with ``DeprecationWarning``.

        Args:
            pet_id: the animal's id (an int64).

        Returns:
            The animal.

        Raises:
            TypeError: ``pet_id`` is not an int.
            ValueError: ``pet_id`` is outside int64.
            NotFoundError: no animal has this id (404).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on timeout), after retries.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return self._request(ops.get_pet(pet_id))

    @cached_property
    def with_raw_response(self) -> RawResponses:
        """The same methods, returning an ``APIResponse`` (status, headers, ``.parse()``)."""
        return RawResponses(self)

    def close(self) -> None:
        """Close the connection pool, unless it was passed in as ``http_client``; idempotent."""
        self._closed = True
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _request(self, operation: ops.Operation[T]) -> T:
        call = self._start(operation)
        while True:
            try:
                outcome: httpx.Response | httpx.RequestError = self._http.send(call.begin())
            except httpx.RequestError as exc:
                outcome = exc
            delay = call.after(outcome)
            if delay is None:
                return call.result
            time.sleep(delay)


class AsyncClient(_BaseClient[httpx.AsyncClient]):
    """An asynchronous (asyncio) client for the animal store API; safe to share across tasks.

    Example::

        async with AsyncClient(api_key="...") as client:
            pet = await client.create_pet(name="Rex", category_id=3)
            pets = await client.list_pets(status="available", limit=10)
    """

    _http_class = httpx.AsyncClient

    @staticmethod
    def _new_pool() -> httpx.AsyncClient:
        http = DefaultAsyncHttpxClient()
        weakref.finalize(http, _close_soon, http._transport)
        return http

    async def list_pets(
        self, *, limit: int | None = None, status: PetStatus | str | None = None
    ) -> list[Pet]:
        """List animals, optionally only those with one status (``GET /pets``).

        Args:
            limit: at most this many animals, 1 to 100; not sent when ``None``, so that the
                service's default (20) applies.
            status: only animals with this status: a ``PetStatus`` or its value.

        Returns:
            The animals, in the service's order.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``limit`` is outside 1..100 or ``status`` is unknown.
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on timeout), after retries.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return await self._request(ops.list_pets(limit=limit, status=status))

    async def create_pet(
        self, *, name: str, category_id: int, status: PetStatus | str | None = None
    ) -> Pet:
        """Add an animal (``POST /pets``); never creates it twice.

        It is retried only when the request provably was not processed (no connection could
        be made, or the answer was 429 or 503), with the same ``Idempotency-Key`` each time.

        Args:
            name: the animal's name.
            category_id: the category it belongs to (an int64).
            status: its status: a ``PetStatus`` or its value; ``None`` leaves it to the service.

        Returns:
            The animal as created, with its assigned ``id``.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``category_id`` is outside int64 or ``status`` is unknown.
            BadRequestError: the service rejected the animal (400).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer.
            APIConnectionError: no answer (``APITimeoutError`` on timeout).
            APIResponseValidationError: the answer does not fit the schema.
        """
        return await self._request(
            ops.create_pet(name=name, category_id=category_id, status=status)
        )

    # A plain method returning the coroutine, not `async def`: before Python 3.12,
    # `@deprecated` on a coroutine function imports asyncio, a sixth of the package's
    # import time. The deprecation wrapper made it a plain function anyway, warning when
    # called rather than when awaited, so the warning points at the caller's line.
    # A string literal, not a constant: type checkers only read a literal (PEP 702).
    @deprecated(
        "get_pet() calls GET /pets/{petId}, which is deprecated and will be removed on "
        "5 December 2030; use list_pets() with a status filter instead"
    )
    def get_pet(self, pet_id: int) -> Coroutine[Any, Any, Pet]:
        """Fetch one animal by id (``GET /pets/{petId}``). Deprecated.

        The service removes this operation on 5 December 2030; use ``list_pets`` with a
        ``status`` filter instead. Every call warns with ``DeprecationWarning``.

        Args:
            pet_id: the animal's id (an int64).

        Returns:
            The animal.

        Raises:
            TypeError: ``pet_id`` is not an int.
            ValueError: ``pet_id`` is outside int64.
            NotFoundError: no animal has this id (404).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on timeout), after retries.
            APIResponseValidationError: the answer does not fit the schema.
        """

        async def fetch() -> Pet:
            # Checked when awaited, like the arguments of the other coroutine methods.
            return await self._request(ops.get_pet(pet_id))

        return fetch()

    @cached_property
    def with_raw_response(self) -> AsyncRawResponses:
        """The same methods, returning an ``APIResponse`` (status, headers, ``.parse()``)."""
        return AsyncRawResponses(self)

    async def aclose(self) -> None:
        """Close the connection pool, unless it was passed in as ``http_client``; idempotent."""
        self._closed = True
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _request(self, operation: ops.Operation[T]) -> T:
        call = self._start(operation)
        while True:
            try:
                outcome: httpx.Response | httpx.RequestError = await self._http.send(call.begin())
            except httpx.RequestError as exc:
                outcome = exc
            delay = call.after(outcome)
            if delay is None:
                return call.result
            import asyncio  # loaded by any running event loop; kept out of package import

            await asyncio.sleep(delay)
