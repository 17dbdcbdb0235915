"""``Client`` and ``AsyncClient``, which differ only in how they send and sleep.

What they share is written once, in ``_BaseClient``: configuration, ``with_options``, the
properties. Each client declares the constructor and the API's methods itself, with its own
types (``Client.list_pets`` returns ``list[Pet]``, ``AsyncClient.list_pets`` is a coroutine
function returning it), so that ``help()``, ``inspect.signature`` and
``typing.get_type_hints`` show what type checkers show; each method's body is one delegation:
its recipe (``_core.operations``) handed to the client's ``_request``. That drives a ``Call``
(``_core.call``), which owns the request, retries, the deadline, parsing and errors, with a
backend's sender (``_backends``), which only sends. The two clients' signatures and
docstrings are the same, which ``tests/unit/test_client.py`` checks. The raw-response views
are at the end: each method a ``RawMethod`` (``_raw``), which sends the same recipe with
``_request(..., raw=True)``. The call machinery and the backends' pools load with the first
client, not with the package.
"""

# No `from __future__ import annotations`: annotations stay objects, so `inspect.signature` and
# `help()` show types, not strings, and `typing.get_type_hints` (the raw views' own types
# included) reads them with no name to look up.
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, SupportsIndex, TypeVar, overload

import httpx
from typing_extensions import Self, deprecated

from animalstore_client._backends import async_pool, default_timeout, sync_pool
from animalstore_client._core import operations as ops
from animalstore_client._core.config import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    ClientOptions,
    Environment,
    EnvironmentKey,
    KeyProvider,
    TimeoutLike,
    TracerProviderLike,
    merge_headers,
    resolve_options,
)
from animalstore_client._core.deprecation import DeprecationNotices
from animalstore_client._core.exchange import AsyncHandler, Handler
from animalstore_client._core.models import Pet, PetStatus
from animalstore_client._core.response import APIResponse
from animalstore_client._core.retry_policy import RetryPolicy
from animalstore_client._core.types import NOT_GIVEN, NotGiven, PetStatusLiteral
from animalstore_client._raw import (
    RawView,
    Uncopyable,
    cached_view,
    deprecated_raw,
    raw_async_method,
    raw_method,
)

__all__ = ["AsyncClient", "AsyncRawResponses", "Client", "RawResponses"]

if TYPE_CHECKING:
    from animalstore_client._backends import AsyncHttpClient, SyncHttpClient
    from animalstore_client._core.call import Call
else:
    # What `http_client` shows at run time: httpx's own classes. httpx2 and aiohttp are not
    # imported until a user hands one of theirs over, so the unions type checkers read
    # (`httpx.Client | httpx2.Client`) cannot be built here; the docstring names them all.
    SyncHttpClient = httpx.Client
    AsyncHttpClient = httpx.AsyncClient

T = TypeVar("T")


class _BaseClient(Uncopyable):
    """What ``Client`` and ``AsyncClient`` share: configuration, copies and properties.

    Each subclass declares its constructor and the API's methods with its own types, and has
    its ``_request``, which sends and sleeps its own way.
    """

    _pool: Any
    #: Whether the client's middleware handlers are coroutine functions.
    _asynchronous: bool

    def _configure(
        self,
        pool: Any,
        api_key: str | KeyProvider | None,
        environment: Environment | str | None,
        base_url: str | httpx.URL | None,
        timeout: float | TimeoutLike | NotGiven | None,
        max_retries: int | NotGiven,
        http_client: object,
        default_headers: Mapping[str, str] | None,
        max_response_bytes: int | None,
        deadline: float | None,
        retry: RetryPolicy | NotGiven,
        middleware: object,
        tracing: object,
    ) -> None:
        """Set the client up with the pool to send with; both constructors end here (see theirs)."""
        self._options: ClientOptions = resolve_options(
            api_key,
            environment=environment,
            base_url=base_url,
            timeout=(
                (default_timeout(http_client) or DEFAULT_TIMEOUT)
                if isinstance(timeout, NotGiven)
                else timeout
            ),
            max_retries=max_retries,
            default_headers=default_headers,
            max_response_bytes=max_response_bytes,
            deadline=deadline,
            retry=retry,
            tracing=tracing,
            middleware=self._checked_middleware(middleware),
        )
        self._pool = pool
        self._owns_pool: bool = pool.owned
        self._closed = False
        # Shared with the copies `with_options` makes: the service's deprecation signals warn
        # once per client family and operation, and its Retry-After holds back all of them.
        self._notices = DeprecationNotices()
        # The call machinery (calls, retries, deadlines) loads with the first client, not with
        # the package: `import animalstore_client` stays within a tenth of its dependencies'
        # (docs/performance.md, case 6).
        from animalstore_client._core.retries import Pause

        self._pause = Pause()
        # Kept, not imported again by each call: the leanest call is a few tens of microseconds.
        self._call_class = _call_class(self._options)

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
        """How many times a failed attempt may be retried: ``retry.max_retries``."""
        return self._options.retry.max_retries

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy of each call that does not pass its own."""
        return self._options.retry

    @property
    def max_response_bytes(self) -> int | None:
        """The most bytes an answer's decoded body may hold (``None``: no limit)."""
        return self._options.max_response_bytes

    @property
    def deadline(self) -> float | None:
        """Seconds a whole call may take, retries included (``None``: no limit)."""
        return self._options.deadline

    def with_options(
        self,
        *,
        api_key: str | KeyProvider | NotGiven = NOT_GIVEN,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        max_retries: int | NotGiven = NOT_GIVEN,
        default_headers: Mapping[str, str] | NotGiven = NOT_GIVEN,
        max_response_bytes: int | NotGiven | None = NOT_GIVEN,
        deadline: float | NotGiven | None = NOT_GIVEN,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        middleware: Sequence[Handler] | Sequence[AsyncHandler] | NotGiven | None = NOT_GIVEN,
        tracing: bool | TracerProviderLike | None = None,
    ) -> Self:
        """Return a copy with other settings that shares this client's connection pool.

        Closing the copy does not close the pool; closing this client does. The copy also
        shares which of the service's deprecation signals have been warned about.

        Args:
            api_key: the copy's API key, or a function that returns one (as for the
                constructor); omitted, this client's.
            timeout: the copy's timeout, as for the constructor (``None``: no limit); omitted,
                this client's.
            max_retries: this client's retry policy with this ``max_retries``; cannot be
                combined with ``retry``.
            default_headers: headers merged over this client's default headers for the copy
                (names compared case-insensitively); checked as for the constructor.
            max_response_bytes: the copy's cap on an answer's decoded body (``None``: no
                limit); omitted, this client's.
            deadline: the copy's deadline for a whole call (``None``: none); omitted, this
                client's.
            retry: the copy's ``RetryPolicy``; omitted, this client's (see ``max_retries``).
            middleware: the copy's middleware handlers, which replace this client's
                (``None`` or ``[]``: none); omitted, this client's. Checked as for the
                constructor.
            tracing: the copy's tracing, as for the constructor (``True``, ``False`` or a
                tracer provider); omitted or ``None``, this client's (``ANIMALSTORE_TRACING``
                is not read again).

        Returns:
            The new client.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: an argument is invalid or out of range, as for the constructor, or
                both ``max_retries`` and ``retry`` are given.
            ImportError: tracing is on and OpenTelemetry's API is not installed.
        """
        options = self._options
        if api_key is None:
            # None means "read ANIMALSTORE_API_KEY" only at construction; a copy keeps a key.
            raise TypeError("api_key must be a str, got None (leave it out to keep this key)")
        headers = options.default_headers
        if not isinstance(default_headers, NotGiven):
            headers = merge_headers(headers, default_headers)
        if isinstance(api_key, NotGiven):
            api_key = options.api_key or options.key_provider  # type: ignore[assignment]
        return self._copy(
            resolve_options(
                api_key,
                environment=None,
                base_url=options.base_url,
                timeout=options.timeout if isinstance(timeout, NotGiven) else timeout,
                max_retries=max_retries,
                retry=retry,
                retry_base=options.retry,
                default_headers=headers,
                max_response_bytes=(
                    options.max_response_bytes
                    if isinstance(max_response_bytes, NotGiven)
                    else max_response_bytes
                ),
                deadline=options.deadline if isinstance(deadline, NotGiven) else deadline,
                tracing=options.tracing if tracing is None else tracing,
                middleware=(
                    options.middleware
                    if isinstance(middleware, NotGiven)
                    else self._checked_middleware(middleware)
                ),
            )
        )

    def _copy(self, options: ClientOptions) -> Self:
        """Return a client with ``options`` sharing this one's pool (not owned) and notices."""
        copy = object.__new__(type(self))
        copy._options = options
        copy._pool = self._pool
        copy._notices = self._notices
        copy._pause = self._pause
        copy._call_class = _call_class(options)
        copy._owns_pool = False
        copy._closed = False
        return copy

    def _refusal(self) -> TypeError:
        name = type(self).__name__
        return TypeError(
            f"{name} objects cannot be copied; client.with_options() gives a {name} that "
            "shares this client's connection pool (closing the copy leaves the pool open)"
        )

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        """Pickle the client's settings, never its key, its pool or its state.

        So a client can be handed to a process pool, multiprocessing or Dask. The client
        unpickled there is a new one: it opens its own connection pool on first use, and
        takes its key from the key provider it was built with (``api_key=`` a function, which
        must itself pickle), else from ``ANIMALSTORE_API_KEY`` in that process, for each
        call. ``copy.copy`` and ``copy.deepcopy`` are still refused: see ``with_options``.

        Raises:
            TypeError: the client was built on a user's ``http_client``, or traces with a
                tracer provider of its own, which belong to this process: build the client in
                the worker instead, or use ``tracing=True``.
        """
        options = self._options
        name = type(self).__name__
        if not self._pool.owned:
            raise TypeError(
                f"a {name} built on your own http_client= cannot be pickled: build the "
                f"{name} in the process that uses it"
            )
        if options.tracing not in (None, True):
            raise TypeError(
                f"a {name} with tracing= a tracer provider cannot be pickled (the provider "
                "belongs to this process): use tracing=True, the worker's global provider"
            )
        settings = {
            "api_key": options.key_provider or EnvironmentKey(),
            "base_url": options.base_url,
            "timeout": options.timeout,
            "retry": options.retry,
            "default_headers": dict(options.default_headers),
            "max_response_bytes": options.max_response_bytes,
            "deadline": options.deadline,
            "tracing": options.tracing is True,
            # middleware: the handlers travel too (each must pickle: a module's function).
            "middleware": options.middleware,
        }
        return (_unpickled, (type(self), settings))

    def _checked_middleware(self, middleware: object) -> tuple[Any, ...]:
        """Return ``middleware`` checked for this kind of client (see the constructors)."""
        # The chain's module loads with the first client that has middleware, not the package.
        from animalstore_client._core.middleware import check_middleware

        return check_middleware(middleware, asynchronous=self._asynchronous)

    def _usable_pool(self) -> Any:
        if self._closed or self._pool.closed:
            raise RuntimeError(f"this {type(self).__name__} is closed; create a new one")
        return self._pool

    def _start(self, operation: ops.Operation[T], raw: bool) -> "Call[T]":
        return self._call_class(
            operation, self._options, raw=raw, notices=self._notices, pause=self._pause
        )

    def __repr__(self) -> str:
        options = getattr(self, "_options", None)  # a constructor that raised leaves none
        if options is None:
            return f"<{type(self).__name__} (not configured)>"
        # Header names only: a value may be as secret as the key, which is never shown.
        return (
            f"{type(self).__name__}(base_url={options.base_url!r}, "
            f"timeout={options.timeout!r}, retry={options.retry!r}, "
            f"deadline={options.deadline!r}, max_response_bytes={options.max_response_bytes!r}, "
            f"default_headers={sorted(options.default_headers)!r})"
        )


def _unpickled(cls: type[_BaseClient], settings: dict[str, Any]) -> _BaseClient:
    """Return a new client of ``cls`` with the settings a pickled one carried."""
    return cls(**settings)


def _call_class(options: ClientOptions) -> "Callable[..., Call[Any]]":
    """Return what makes a client's calls: ``Call``, or with tracing on, one that starts a span."""
    if options.tracing is None:
        from animalstore_client._core.call import Call

        return Call
    from animalstore_client._core.tracing import traced_call

    return traced_call


class Client(_BaseClient):
    """A synchronous client for the animal store API; safe to share across threads.

    Example::

        with Client(api_key="...") as client:
            pet = client.create_pet(name="Rex", category_id=3)
            pets = client.list_pets(status="available", limit=10)
    """

    _asynchronous = False

    def __init__(
        self,
        api_key: str | KeyProvider | None = None,
        *,
        environment: Environment | str | None = None,
        base_url: str | httpx.URL | None = None,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        max_retries: int | NotGiven = NOT_GIVEN,
        http_client: SyncHttpClient | None = None,
        default_headers: Mapping[str, str] | None = None,
        max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
        deadline: float | None = None,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        middleware: Sequence[Handler] | None = None,
        tracing: bool | TracerProviderLike | None = None,
    ) -> None:
        """Configure a client; nothing is sent until a method is called.

        Args:
            api_key: the API key, or a function that returns one (a key provider: called
                with no argument each time a call needs the key, so that a rotated key is used
                from the next call on; it may cache); ``None`` reads ``ANIMALSTORE_API_KEY``.
            environment: ``"production"`` or ``"staging"`` (or an ``Environment``).
            base_url: the API's address, ending in ``/v1``; cannot be combined with
                ``environment``. The address is, first match wins: ``base_url``,
                ``environment``, ``ANIMALSTORE_BASE_URL``, production.
            timeout: per attempt, in seconds for every phase, ``None`` for no limit, or an
                ``httpx.Timeout`` (or ``httpx2.Timeout``). Omitted: ``http_client``'s own
                timeout when it is an httpx or httpx2 client, else 5 s to connect and 30 s for
                the rest (``DEFAULT_TIMEOUT``).
            max_retries: how many times a failed attempt may be retried (0 turns retries off;
                2, ``DEFAULT_MAX_RETRIES``, when neither this nor ``retry`` is given): the
                shorthand for ``retry=RetryPolicy(max_retries=...)``.
            http_client: what to send with (for proxies, TLS, transports or instrumentation),
                not closed by the SDK. For ``Client``: an ``httpx.Client`` or ``httpx2.Client``
                (see ``DefaultHttpxClient``, ``DefaultHttpx2Client``). For ``AsyncClient``: an
                ``httpx.AsyncClient`` or ``httpx2.AsyncClient`` (on asyncio or trio), or an
                ``aiohttp.ClientSession`` (asyncio only; see ``DefaultAioHttpClient``).
                Every call goes through the httpx family's ``send`` or aiohttp's ``request``.
            default_headers: extra headers sent on every request; not ``Authorization``
                (the key goes in ``api_key``) nor ``Idempotency-Key`` (``create_pet`` takes
                ``idempotency_key``).
            max_response_bytes: the most bytes an answer's body may hold once decoded
                (16 MiB, ``DEFAULT_MAX_RESPONSE_BYTES``); reading stops there and the call
                raises ``ResponseTooLargeError``. ``None``: no limit.
            deadline: seconds for a whole call from start to finish, retries and waits
                included, whatever the server does; past it the call raises
                ``APITimeoutError``. ``None`` (the default): no limit but ``timeout`` per
                attempt and ``max_retries``.
            retry: which failures are retried, how often and after what wait (a
                ``RetryPolicy``); cannot be combined with ``max_retries``. Omitted:
                ``RetryPolicy()``, the SDK's defaults.
            middleware: handlers that see each attempt's request and its answer, and may
                change either: a sequence of ``handler(request, call_next)``, the first the
                outermost, each returning a ``Response`` (``call_next(request)``'s, or one of
                its own). ``Client``'s are plain functions; ``AsyncClient``'s are coroutine
                functions that ``await call_next(request)``. They run on every attempt,
                within ``deadline``; see the guide's "Middleware".
            tracing: one OpenTelemetry span per call (docs/guide.md, "Tracing"), which needs
                the ``tracing`` extra (``pip install 'animalstore-client[tracing]'``).
                ``True``: with the global tracer provider, as it is at each call; a
                ``TracerProvider``: with that one; ``False``: off. ``None`` (the default): on
                when ``ANIMALSTORE_TRACING`` is ``1``, ``true`` or ``yes`` (in any case), else
                off.

        Raises:
            TypeError: an argument has the wrong type, or ``middleware`` is not a sequence of
                handlers of the client's kind (the message names the position).
            ValueError: no API key, a key with whitespace or control characters, an invalid
                URL or one with credentials, an unknown environment, both ``environment`` and
                ``base_url``, a negative ``max_retries``, both ``max_retries`` and ``retry``,
                or ``Authorization`` or
                ``Idempotency-Key`` in ``default_headers``, a ``max_response_bytes`` below 1,
                or a ``deadline`` that is not positive.
            RuntimeError: an ``aiohttp.ClientSession`` is given to ``AsyncClient`` under trio.
            ImportError: tracing is on and OpenTelemetry's API is not installed.
        """
        self._configure(
            sync_pool(http_client),
            api_key,
            environment,
            base_url,
            timeout,
            max_retries,
            http_client,
            default_headers,
            max_response_bytes,
            deadline,
            retry,
            middleware,
            tracing,
        )

    def list_pets(
        self,
        *,
        limit: int | None = None,
        status: PetStatus | PetStatusLiteral | None = None,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        deadline: float | NotGiven | None = NOT_GIVEN,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        extra_headers: Mapping[str, str] | None = None,
    ) -> list[Pet]:
        """List animals, optionally only those with one status (``GET /pets``).

        Args:
            limit: at most this many animals, 1 to 100; not sent when ``None``, so that the
                service's default (20) applies.
            status: only animals with this status: a ``PetStatus`` or its value
                (``"available"``, ``"pending"``, ``"sold"``).
            timeout: this call's timeout per attempt, as for the constructor (``None``: no
                limit); omitted, the client's.
            deadline: seconds for this whole call, retries and waits included (``None``: no
                limit); omitted, the client's.
            retry: this call's ``RetryPolicy``; omitted, the client's.
            extra_headers: headers for this call only, merged over the client's (names
                compared case-insensitively); checked as ``default_headers`` are.

        Returns:
            The animals, in the service's order.

        Warns:
            DeprecationWarning: the service announced that it deprecates or removes
                ``GET /pets`` (``Deprecation``/``Sunset`` headers); once per client and its
                copies.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``limit`` is outside 1..100, ``status`` is unknown, or ``timeout`` or
                ``extra_headers`` is invalid (``Authorization`` and ``Idempotency-Key`` are
                refused: see ``with_options(api_key=...)``).
            BadRequestError: the service refused the query (400).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on a timeout or past the
                deadline), after retries.
            ResponseTooLargeError: the answer's body is larger than ``max_response_bytes``.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return self._request(
            ops.list_pets(
                limit=limit,
                status=status,
                timeout=timeout,
                deadline=deadline,
                retry=retry,
                extra_headers=extra_headers,
            )
        )

    def create_pet(
        self,
        *,
        name: str,
        category_id: int,
        status: PetStatus | PetStatusLiteral | None = None,
        idempotency_key: str | None = None,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        deadline: float | NotGiven | None = NOT_GIVEN,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Pet:
        """Add an animal (``POST /pets``); never creates it twice.

        It is retried only when the request provably was not processed (no connection could
        be made, or the answer was 429 or 503 and the retry policy lists it), with the same
        ``Idempotency-Key`` each time, whatever else the policy allows.

        Args:
            name: the animal's name.
            category_id: the category it belongs to (an int64).
            status: its status: a ``PetStatus`` or its value (``"available"``, ``"pending"``,
                ``"sold"``); ``None`` leaves it to the service.
            idempotency_key: sent verbatim as ``Idempotency-Key`` on every attempt, so that a
                service that deduplicates can do so across processes too (reuse the key when
                retrying after a crash); 1 to 255 printable ASCII characters, no whitespace.
                ``None``: a fresh UUID4 for this call.
            timeout: this call's timeout per attempt, as for the constructor (``None``: no
                limit); omitted, the client's.
            deadline: seconds for this whole call, retries and waits included (``None``: no
                limit); omitted, the client's.
            retry: this call's ``RetryPolicy``; omitted, the client's.
            extra_headers: headers for this call only, merged over the client's (names
                compared case-insensitively); checked as ``default_headers`` are.

        Returns:
            The animal as created, with its assigned ``id``.

        Warns:
            DeprecationWarning: the service announced that it deprecates or removes
                ``POST /pets`` (``Deprecation``/``Sunset`` headers); once per client and its
                copies.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``category_id`` is outside int64, ``status`` is unknown,
                ``idempotency_key`` is malformed, or ``timeout`` or ``extra_headers`` is
                invalid (``Authorization`` and ``Idempotency-Key`` are refused: see
                ``with_options(api_key=...)`` and ``idempotency_key``).
            BadRequestError: the service rejected the animal (400).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer.
            APIConnectionError: no answer (``APITimeoutError`` on a timeout or past the
                deadline).
            ResponseTooLargeError: the answer's body is larger than ``max_response_bytes``.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return self._request(
            ops.create_pet(
                name=name,
                category_id=category_id,
                status=status,
                idempotency_key=idempotency_key,
                timeout=timeout,
                deadline=deadline,
                retry=retry,
                extra_headers=extra_headers,
            )
        )

    # A string literal, not a constant: type checkers only read a literal (PEP 702). No
    # warning from the decorator: the recipe warns once the arguments have passed their checks.
    @deprecated(
        "get_pet() calls GET /pets/{petId}, which is deprecated and will be removed on "
        "5 December 2030; use list_pets() with a status filter instead",
        category=None,
    )
    def get_pet(
        self,
        pet_id: int,
        *,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        deadline: float | NotGiven | None = NOT_GIVEN,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Pet:
        """Fetch one animal by id (``GET /pets/{petId}``). Deprecated.

        The service removes this operation on 5 December 2030; use ``list_pets`` with a
        ``status`` filter instead. Every call warns with ``DeprecationWarning``; the service's
        own ``Deprecation``/``Sunset`` headers for it add no second warning.

        Args:
            pet_id: the animal's id (an int64).
            timeout: this call's timeout per attempt, as for the constructor (``None``: no
                limit); omitted, the client's.
            deadline: seconds for this whole call, retries and waits included (``None``: no
                limit); omitted, the client's.
            retry: this call's ``RetryPolicy``; omitted, the client's.
            extra_headers: headers for this call only, merged over the client's (names
                compared case-insensitively); checked as ``default_headers`` are.

        Returns:
            The animal.

        Raises:
            TypeError: ``pet_id`` is not an int, or an option has the wrong type.
            ValueError: ``pet_id`` is outside int64, or ``timeout`` or ``extra_headers`` is
                invalid.
            NotFoundError: no animal has this id (404).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on a timeout or past the
                deadline), after retries.
            ResponseTooLargeError: the answer's body is larger than ``max_response_bytes``.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return self._request(
            ops.get_pet(
                pet_id,
                timeout=timeout,
                deadline=deadline,
                retry=retry,
                extra_headers=extra_headers,
            )
        )

    @cached_view
    def with_raw_response(self) -> "RawResponses":
        """The same methods, returning an ``APIResponse`` (status, headers, ``.parse()``)."""
        return RawResponses(self)

    def close(self) -> None:
        """Close the connection pool, unless it was passed in as ``http_client``; idempotent."""
        self._closed = True
        if self._owns_pool:
            self._pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @overload
    def _request(self, operation: ops.Operation[T], raw: Literal[False] = False) -> T: ...
    @overload
    def _request(self, operation: ops.Operation[T], raw: Literal[True]) -> APIResponse[T]: ...
    def _request(self, operation: ops.Operation[T], raw: bool = False) -> T | APIResponse[T]:
        """Send the operation, retrying as allowed: its result, or (``raw``) its answer."""
        call = self._start(operation, raw)
        try:
            pool = self._usable_pool()
            sender = pool.current() or pool.open()
            while True:
                while (pause := call.wait()) > 0.0:
                    time.sleep(pause)
                request = call.begin()
                # middleware: with handlers, the chain sends the attempt (within the deadline).
                send = call.chained(sender.send) if self._options.middleware else sender.send
                if call.deadline is None:
                    outcome = send(request)
                else:
                    from animalstore_client._backends.deadline import send_within

                    outcome = send_within(call.remaining(), send, request)
                step = call.after(outcome)
                if step.done:
                    return call.result
                time.sleep(step.delay)
        except BaseException as exc:
            if call._trace is not None:  # tracing: the call's span ends with its error
                call._trace.failed(call, exc)
            raise


class AsyncClient(_BaseClient):
    """An asynchronous client for the animal store API, on asyncio or trio; task-safe.

    Example::

        async with AsyncClient(api_key="...") as client:
            pet = await client.create_pet(name="Rex", category_id=3)
            pets = await client.list_pets(status="available", limit=10)
    """

    _asynchronous = True

    def __init__(
        self,
        api_key: str | KeyProvider | None = None,
        *,
        environment: Environment | str | None = None,
        base_url: str | httpx.URL | None = None,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        max_retries: int | NotGiven = NOT_GIVEN,
        http_client: AsyncHttpClient | None = None,
        default_headers: Mapping[str, str] | None = None,
        max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
        deadline: float | None = None,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        middleware: Sequence[AsyncHandler] | None = None,
        tracing: bool | TracerProviderLike | None = None,
    ) -> None:
        """Configure a client; nothing is sent until a method is called.

        Args:
            api_key: the API key, or a function that returns one (a key provider: called
                with no argument each time a call needs the key, so that a rotated key is used
                from the next call on; it may cache); ``None`` reads ``ANIMALSTORE_API_KEY``.
            environment: ``"production"`` or ``"staging"`` (or an ``Environment``).
            base_url: the API's address, ending in ``/v1``; cannot be combined with
                ``environment``. The address is, first match wins: ``base_url``,
                ``environment``, ``ANIMALSTORE_BASE_URL``, production.
            timeout: per attempt, in seconds for every phase, ``None`` for no limit, or an
                ``httpx.Timeout`` (or ``httpx2.Timeout``). Omitted: ``http_client``'s own
                timeout when it is an httpx or httpx2 client, else 5 s to connect and 30 s for
                the rest (``DEFAULT_TIMEOUT``).
            max_retries: how many times a failed attempt may be retried (0 turns retries off;
                2, ``DEFAULT_MAX_RETRIES``, when neither this nor ``retry`` is given): the
                shorthand for ``retry=RetryPolicy(max_retries=...)``.
            http_client: what to send with (for proxies, TLS, transports or instrumentation),
                not closed by the SDK. For ``Client``: an ``httpx.Client`` or ``httpx2.Client``
                (see ``DefaultHttpxClient``, ``DefaultHttpx2Client``). For ``AsyncClient``: an
                ``httpx.AsyncClient`` or ``httpx2.AsyncClient`` (on asyncio or trio), or an
                ``aiohttp.ClientSession`` (asyncio only; see ``DefaultAioHttpClient``).
                Every call goes through the httpx family's ``send`` or aiohttp's ``request``.
            default_headers: extra headers sent on every request; not ``Authorization``
                (the key goes in ``api_key``) nor ``Idempotency-Key`` (``create_pet`` takes
                ``idempotency_key``).
            max_response_bytes: the most bytes an answer's body may hold once decoded
                (16 MiB, ``DEFAULT_MAX_RESPONSE_BYTES``); reading stops there and the call
                raises ``ResponseTooLargeError``. ``None``: no limit.
            deadline: seconds for a whole call from start to finish, retries and waits
                included, whatever the server does; past it the call raises
                ``APITimeoutError``. ``None`` (the default): no limit but ``timeout`` per
                attempt and ``max_retries``.
            retry: which failures are retried, how often and after what wait (a
                ``RetryPolicy``); cannot be combined with ``max_retries``. Omitted:
                ``RetryPolicy()``, the SDK's defaults.
            middleware: handlers that see each attempt's request and its answer, and may
                change either: a sequence of ``handler(request, call_next)``, the first the
                outermost, each returning a ``Response`` (``call_next(request)``'s, or one of
                its own). ``Client``'s are plain functions; ``AsyncClient``'s are coroutine
                functions that ``await call_next(request)``. They run on every attempt,
                within ``deadline``; see the guide's "Middleware".
            tracing: one OpenTelemetry span per call (docs/guide.md, "Tracing"), which needs
                the ``tracing`` extra (``pip install 'animalstore-client[tracing]'``).
                ``True``: with the global tracer provider, as it is at each call; a
                ``TracerProvider``: with that one; ``False``: off. ``None`` (the default): on
                when ``ANIMALSTORE_TRACING`` is ``1``, ``true`` or ``yes`` (in any case), else
                off.

        Raises:
            TypeError: an argument has the wrong type, or ``middleware`` is not a sequence of
                handlers of the client's kind (the message names the position).
            ValueError: no API key, a key with whitespace or control characters, an invalid
                URL or one with credentials, an unknown environment, both ``environment`` and
                ``base_url``, a negative ``max_retries``, both ``max_retries`` and ``retry``,
                or ``Authorization`` or
                ``Idempotency-Key`` in ``default_headers``, a ``max_response_bytes`` below 1,
                or a ``deadline`` that is not positive.
            RuntimeError: an ``aiohttp.ClientSession`` is given to ``AsyncClient`` under trio.
            ImportError: tracing is on and OpenTelemetry's API is not installed.
        """
        self._configure(
            async_pool(http_client),
            api_key,
            environment,
            base_url,
            timeout,
            max_retries,
            http_client,
            default_headers,
            max_response_bytes,
            deadline,
            retry,
            middleware,
            tracing,
        )

    async def list_pets(
        self,
        *,
        limit: int | None = None,
        status: PetStatus | PetStatusLiteral | None = None,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        deadline: float | NotGiven | None = NOT_GIVEN,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        extra_headers: Mapping[str, str] | None = None,
    ) -> list[Pet]:
        """List animals, optionally only those with one status (``GET /pets``).

        Args:
            limit: at most this many animals, 1 to 100; not sent when ``None``, so that the
                service's default (20) applies.
            status: only animals with this status: a ``PetStatus`` or its value
                (``"available"``, ``"pending"``, ``"sold"``).
            timeout: this call's timeout per attempt, as for the constructor (``None``: no
                limit); omitted, the client's.
            deadline: seconds for this whole call, retries and waits included (``None``: no
                limit); omitted, the client's.
            retry: this call's ``RetryPolicy``; omitted, the client's.
            extra_headers: headers for this call only, merged over the client's (names
                compared case-insensitively); checked as ``default_headers`` are.

        Returns:
            The animals, in the service's order.

        Warns:
            DeprecationWarning: the service announced that it deprecates or removes
                ``GET /pets`` (``Deprecation``/``Sunset`` headers); once per client and its
                copies.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``limit`` is outside 1..100, ``status`` is unknown, or ``timeout`` or
                ``extra_headers`` is invalid (``Authorization`` and ``Idempotency-Key`` are
                refused: see ``with_options(api_key=...)``).
            BadRequestError: the service refused the query (400).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on a timeout or past the
                deadline), after retries.
            ResponseTooLargeError: the answer's body is larger than ``max_response_bytes``.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return await self._request(
            ops.list_pets(
                limit=limit,
                status=status,
                timeout=timeout,
                deadline=deadline,
                retry=retry,
                extra_headers=extra_headers,
            )
        )

    async def create_pet(
        self,
        *,
        name: str,
        category_id: int,
        status: PetStatus | PetStatusLiteral | None = None,
        idempotency_key: str | None = None,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        deadline: float | NotGiven | None = NOT_GIVEN,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Pet:
        """Add an animal (``POST /pets``); never creates it twice.

        It is retried only when the request provably was not processed (no connection could
        be made, or the answer was 429 or 503 and the retry policy lists it), with the same
        ``Idempotency-Key`` each time, whatever else the policy allows.

        Args:
            name: the animal's name.
            category_id: the category it belongs to (an int64).
            status: its status: a ``PetStatus`` or its value (``"available"``, ``"pending"``,
                ``"sold"``); ``None`` leaves it to the service.
            idempotency_key: sent verbatim as ``Idempotency-Key`` on every attempt, so that a
                service that deduplicates can do so across processes too (reuse the key when
                retrying after a crash); 1 to 255 printable ASCII characters, no whitespace.
                ``None``: a fresh UUID4 for this call.
            timeout: this call's timeout per attempt, as for the constructor (``None``: no
                limit); omitted, the client's.
            deadline: seconds for this whole call, retries and waits included (``None``: no
                limit); omitted, the client's.
            retry: this call's ``RetryPolicy``; omitted, the client's.
            extra_headers: headers for this call only, merged over the client's (names
                compared case-insensitively); checked as ``default_headers`` are.

        Returns:
            The animal as created, with its assigned ``id``.

        Warns:
            DeprecationWarning: the service announced that it deprecates or removes
                ``POST /pets`` (``Deprecation``/``Sunset`` headers); once per client and its
                copies.

        Raises:
            TypeError: an argument has the wrong type.
            ValueError: ``category_id`` is outside int64, ``status`` is unknown,
                ``idempotency_key`` is malformed, or ``timeout`` or ``extra_headers`` is
                invalid (``Authorization`` and ``Idempotency-Key`` are refused: see
                ``with_options(api_key=...)`` and ``idempotency_key``).
            BadRequestError: the service rejected the animal (400).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer.
            APIConnectionError: no answer (``APITimeoutError`` on a timeout or past the
                deadline).
            ResponseTooLargeError: the answer's body is larger than ``max_response_bytes``.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return await self._request(
            ops.create_pet(
                name=name,
                category_id=category_id,
                status=status,
                idempotency_key=idempotency_key,
                timeout=timeout,
                deadline=deadline,
                retry=retry,
                extra_headers=extra_headers,
            )
        )

    # A string literal, not a constant: type checkers only read a literal (PEP 702). No
    # warning from the decorator: the recipe warns once the arguments have passed their checks.
    @deprecated(
        "get_pet() calls GET /pets/{petId}, which is deprecated and will be removed on "
        "5 December 2030; use list_pets() with a status filter instead",
        category=None,
    )
    async def get_pet(
        self,
        pet_id: int,
        *,
        timeout: float | TimeoutLike | NotGiven | None = NOT_GIVEN,
        deadline: float | NotGiven | None = NOT_GIVEN,
        retry: RetryPolicy | NotGiven = NOT_GIVEN,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Pet:
        """Fetch one animal by id (``GET /pets/{petId}``). Deprecated.

        The service removes this operation on 5 December 2030; use ``list_pets`` with a
        ``status`` filter instead. Every call warns with ``DeprecationWarning``; the service's
        own ``Deprecation``/``Sunset`` headers for it add no second warning.

        Args:
            pet_id: the animal's id (an int64).
            timeout: this call's timeout per attempt, as for the constructor (``None``: no
                limit); omitted, the client's.
            deadline: seconds for this whole call, retries and waits included (``None``: no
                limit); omitted, the client's.
            retry: this call's ``RetryPolicy``; omitted, the client's.
            extra_headers: headers for this call only, merged over the client's (names
                compared case-insensitively); checked as ``default_headers`` are.

        Returns:
            The animal.

        Raises:
            TypeError: ``pet_id`` is not an int, or an option has the wrong type.
            ValueError: ``pet_id`` is outside int64, or ``timeout`` or ``extra_headers`` is
                invalid.
            NotFoundError: no animal has this id (404).
            AuthenticationError: the API key was refused (401).
            APIStatusError: any other non-2xx answer, after retries where allowed.
            APIConnectionError: no answer (``APITimeoutError`` on a timeout or past the
                deadline), after retries.
            ResponseTooLargeError: the answer's body is larger than ``max_response_bytes``.
            APIResponseValidationError: the answer does not fit the schema.
        """
        return await self._request(
            ops.get_pet(
                pet_id,
                timeout=timeout,
                deadline=deadline,
                retry=retry,
                extra_headers=extra_headers,
            )
        )

    @cached_view
    def with_raw_response(self) -> "AsyncRawResponses":
        """The same methods, returning an ``APIResponse`` (status, headers, ``.parse()``)."""
        return AsyncRawResponses(self)

    async def aclose(self) -> None:
        """Close the connection pool, unless it was passed in as ``http_client``; idempotent."""
        self._closed = True
        if self._owns_pool:
            await self._pool.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @overload
    async def _request(self, operation: ops.Operation[T], raw: Literal[False] = False) -> T: ...
    @overload
    async def _request(self, operation: ops.Operation[T], raw: Literal[True]) -> APIResponse[T]: ...
    async def _request(self, operation: ops.Operation[T], raw: bool = False) -> T | APIResponse[T]:
        """Send the operation, retrying as allowed: its result, or (``raw``) its answer."""
        call = self._start(operation, raw)
        try:
            pool = self._usable_pool()
            sender = pool.current() or await pool.open()
            while True:
                while (pause := call.wait()) > 0.0:
                    await sender.sleep(pause)
                request = call.begin()
                # middleware: with handlers, the chain sends the attempt (within the deadline).
                send = call.chained_async(sender.send) if self._options.middleware else sender.send
                if call.deadline is None:
                    outcome = await send(request)
                else:
                    from animalstore_client._backends.deadline import send_within_async

                    outcome = await send_within_async(call.remaining(), send, request)
                step = call.after(outcome)
                if step.done:
                    return call.result
                await sender.sleep(step.delay)
        except BaseException as exc:
            if call._trace is not None:  # tracing: the call's span ends with its error
                call._trace.failed(call, exc)
            raise


class RawResponses(RawView):
    """``Client.with_raw_response``: the same methods, each returning an ``APIResponse``.

    Read its status, headers or ``x-request-id``; ``.parse()`` gives the result.
    """

    __slots__ = ()

    # `Final` declares the types, inferred from the client's methods: spelled out, each
    # signature would be written twice.
    list_pets: Final = raw_method(Client.list_pets)
    create_pet: Final = raw_method(Client.create_pet)
    get_pet: Final = deprecated_raw(raw_method(Client.get_pet))  # type: ignore[deprecated]


class AsyncRawResponses(RawView):
    """``AsyncClient.with_raw_response``: the same coroutines, each giving an ``APIResponse``.

    Await a method, then read the status, headers or ``x-request-id``; ``.parse()`` is a
    plain call, not awaited, since the body has already been read.
    """

    __slots__ = ()

    list_pets: Final = raw_async_method(AsyncClient.list_pets)
    create_pet: Final = raw_async_method(AsyncClient.create_pet)
    get_pet: Final = deprecated_raw(raw_async_method(AsyncClient.get_pet))  # type: ignore[deprecated]
