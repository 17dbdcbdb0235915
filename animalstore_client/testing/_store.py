"""The sans-IO core of the fake animal store: state, routing, validation and responses.

Everything the fake does lives here; ``_transport`` and ``_server`` only translate between
their I/O layer and :meth:`FakeAnimalStore.handle`.
"""

from __future__ import annotations

import json
import re
import string
import threading
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from datetime import datetime, time, timezone
from typing import Any, NoReturn
from urllib.parse import parse_qs

import attrs
import httpx
from typing_extensions import TypedDict, Unpack

from animalstore_client._client import AsyncClient, Client
from animalstore_client._core.config import TimeoutLike
from animalstore_client._core.models import Pet, PetStatus
from animalstore_client._core.operations import ENDPOINTS
from animalstore_client._core.retry_policy import RetryPolicy
from animalstore_client._core.safe_repr import tolerant_repr
from animalstore_client._core.types import NotGiven, PetStatusLiteral
from animalstore_client.testing._faults import (
    OPERATION_OF_ROUTE,
    Fault,
    FaultScript,
    Plan,
    RawResponse,
    error_body,
    malformed_body,
)
from animalstore_client.testing._transport import FakeTransport

__all__ = ["IN_PROCESS_BASE_URL", "OPERATIONS", "FakeAnimalStore", "RawResponse", "RecordedRequest"]

#: The address `client()` and `async_client()` use; no request to it leaves the process.
IN_PROCESS_BASE_URL = "http://animalstore.test/v1"


_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# Spelled out rather than read from PetStatus: the fake is an independent check of the SDK.
_STATUS_VALUES = ("available", "pending", "sold")
_STATUS_CHOICES = ", ".join(_STATUS_VALUES)
_DEFAULT_LIMIT = 20
_MAX_LIMIT = 100
# ASCII digits only (int() would also take "+7", " 7", "7_0" and other scripts' digits), and
# bounded so int() never parses an arbitrarily long string.
_INTEGER = re.compile(r"-?[0-9]{1,20}")

#: What `set_deprecation` takes as a link: printable ASCII but space, "<" and ">".
_LINK = re.compile(r"[!-;=?-~]+")

_Headers = tuple[tuple[str, str], ...]
#: The spec gives the day a deprecated operation is removed (its Sunset) but no date for the
#: deprecation itself; the store says 5 December 2026 for each.
_DEPRECATED_SINCE = datetime(2026, 12, 5, tzinfo=timezone.utc)


@tolerant_repr
@attrs.frozen
class RecordedRequest:
    """One request as the fake store received it, whether it was accepted or rejected.

    Attributes:
        method: the HTTP method, as sent (``"GET"``, ``"POST"`` ...).
        path: the percent-decoded path, without the query (``"/v1/pets"``).
        query: the raw query string, without the ``?`` (``"limit=5&status=sold"``).
        headers: the request headers, names lower-cased; repeated headers joined with ``", "``.
        body: the raw request body (``b""`` when there is none).
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """Decode the body as JSON.

        Returns:
            The decoded JSON value.

        Raises:
            ValueError: the body is not valid JSON (``json.JSONDecodeError``).
        """
        return json.loads(self.body)


class _ApiError(Exception):
    """An error response, raised by a check and turned into an Error body by ``handle``."""

    def __init__(
        self, status: int, code: str, message: str, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


@tolerant_repr
@attrs.frozen
class _Call:
    """What a route handler needs from a request."""

    params: Mapping[str, str]
    query: str
    body: bytes


class ClientSettings(TypedDict, total=False):
    """The settings ``FakeAnimalStore.client()`` and ``async_client()`` hand to the SDK client.

    Each means what it means to ``Client`` and ``AsyncClient``; the ones left out keep the
    clients' defaults.
    """

    timeout: float | TimeoutLike | NotGiven | None
    max_retries: int
    default_headers: Mapping[str, str] | None
    max_response_bytes: int | None
    deadline: float | None
    retry: RetryPolicy


class FakeAnimalStore:
    """An in-memory, thread-safe implementation of the whole animal store API.

    Use it through :meth:`transport` (no socket; plugs into ``httpx.Client`` and
    ``httpx.AsyncClient``), through :meth:`serve` (a real HTTP server on 127.0.0.1), or by
    calling :meth:`handle` directly. Every route lives under ``/v1``, so the base URL to
    configure ends in ``/v1``.

    Behaviour the spec leaves open, decided here:

    * A pet created without ``status`` keeps no status: it is stored as ``None`` and the
      ``status`` key is absent from its JSON.
    * Authentication is checked before routing, so an unauthenticated request gets 401 even
      on an unknown path or with a wrong method.
    * A ``petId`` that is not an int64 integer (``/v1/pets/abc``) gets 404 ``not_found``,
      the only error status the spec lists for that operation besides 401.
    * ``"status": null`` in a create body is rejected (400): the spec's type is PetStatus,
      not a nullable one; leave the key out instead.
    * Unknown fields in a create body and unknown query parameters are ignored; a query
      parameter given twice is rejected (400).
    * Every answer to ``GET /pets/{petId}`` (errors included, but not a 401, which comes
      before routing) carries ``Deprecation: @1796428800`` (5 December 2026; the spec gives no
      date) and ``Sunset: Thu, 05 Dec 2030 00:00:00 GMT`` (the spec's removal date). Change
      this, or announce the deprecation of other operations, with :meth:`set_deprecation`.

    Faults can be scripted with :meth:`inject` (errors, delays, dropped connections,
    malformed answers: see :class:`Fault`); they apply to the clients :meth:`client` and
    :meth:`async_client` hand out, to any httpx client on :meth:`transport`, and to
    :meth:`serve`'s server, not to direct calls of :meth:`handle`.

    Args:
        api_keys: the API keys accepted as ``Authorization: Bearer <key>``. Any iterable of
            strings (a tuple, a list, a set ...).
        honour_idempotency_keys: answer a ``POST`` whose ``Idempotency-Key`` was seen before
            with the first answer again, storing nothing new (see
            :attr:`honour_idempotency_keys`). Off by default: the spec does not say that the
            service deduplicates.

    Raises:
        TypeError: ``api_keys`` is a single string rather than a collection of strings, or
            ``honour_idempotency_keys`` is not a bool.
    """

    def __init__(
        self, api_keys: Iterable[str] = ("test-key",), *, honour_idempotency_keys: bool = False
    ) -> None:
        if isinstance(api_keys, str):
            # Iterating a str would silently accept each of its characters as a key.
            raise TypeError("api_keys must be a collection of keys, not a single str")
        _check_bool("honour_idempotency_keys", honour_idempotency_keys)
        keys = list(api_keys)
        self._api_keys = frozenset(keys)
        self._first_key = keys[0] if keys else None  # the key `client()` uses
        # A condition, so that wait_for_requests can wait for what another thread records.
        self._lock = threading.Condition(threading.Lock())
        self._pets: dict[int, Pet] = {}
        self._requests: list[RecordedRequest] = []
        self._next_pet_id = 1
        self._next_request_id = 1
        self._signals: dict[str, _Headers] = {
            endpoint.name: _signals(
                _DEPRECATED_SINCE,
                datetime.combine(endpoint.removal.on, time(), timezone.utc),
                None,
            )
            for endpoint in ENDPOINTS
            if endpoint.removal is not None
        }
        self._faults = FaultScript()
        self._honour_idempotency_keys = honour_idempotency_keys
        #: The first answer to each Idempotency-Key, when they are honoured.
        self._answers_by_key: dict[str, RawResponse] = {}

    # -- seeding and inspection -----------------------------------------------------------

    @property
    def pets(self) -> list[Pet]:
        """A snapshot of every stored pet, in ascending id order."""
        with self._lock:
            return list(self._pets.values())

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first, rejected ones included.

        Requests that are not valid HTTP (refused by the socket server before they reach the
        store) are not recorded.
        """
        with self._lock:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float) -> bool:
        """Wait until the store has received ``count`` requests (since it was made or reset).

        For tests against :meth:`serve`: a client that gave up (its timeout or ``deadline``
        passed) may have sent a request that the server's thread has not read yet, on a
        loaded machine; ``requests`` and ``pets`` show it once this returns ``True``.

        Args:
            count: how many requests, at least.
            timeout: the most seconds to wait.

        Returns:
            Whether the store had received them within ``timeout``.

        Raises:
            TypeError: ``count`` is not an int or ``timeout`` not a number.
        """
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"count must be an int, got {type(count).__name__}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError(f"timeout must be a number of seconds, got {type(timeout).__name__}")
        with self._lock:
            return self._lock.wait_for(lambda: len(self._requests) >= count, timeout)

    def add_pet(
        self,
        name: str,
        category_id: int,
        status: PetStatus | PetStatusLiteral | None = None,
    ) -> Pet:
        """Store a pet directly, as if a client had created it, and assign it the next id.

        Little validation is done at run time, so a test can seed data the API would reject on
        creation; only text that no response could carry (a lone surrogate, which UTF-8 cannot
        encode) is refused, since it would break every later answer. ``status`` is typed with
        the three known values, as the clients' are, so that type checkers catch a typo; a
        status unknown to this SDK version (as a newer service might send) is still stored as
        given, for testing how code copes: mark that line for the type checker
        (``# type: ignore[arg-type]``).

        Args:
            name: the pet's name.
            category_id: the pet's category id (``categoryId`` on the wire).
            status: a ``PetStatus`` or its value (which becomes a ``PetStatus``), or ``None``
                for no status; any other string is kept as a ``str``.

        Returns:
            The stored pet, with its assigned id.

        Raises:
            ValueError: ``name`` or ``status`` holds a lone surrogate; nothing is stored.
        """
        # Checked before storing: a stored lone surrogate would make every list answer fail.
        for argument, text in (("name", name), ("status", status)):
            if isinstance(text, str):
                _check_encodable(argument, text)
        if isinstance(status, str) and status in _STATUS_VALUES:
            status = PetStatus(status)
        with self._lock:
            return self._insert_pet(name, category_id, status)

    def set_deprecation(
        self,
        operation: str,
        *,
        deprecation: datetime | None = None,
        sunset: datetime | None = None,
        link: str | None = None,
    ) -> None:
        """Make every answer to one operation announce its deprecation, as a service would.

        From now on, the answers to ``operation`` (errors included; not a 401, which comes
        before routing) carry ``Deprecation: @<Unix time>`` (RFC 9745) when ``deprecation`` is
        given, ``Sunset: <HTTP-date>`` (RFC 8594) when ``sunset`` is given, and
        ``Link: <link>; rel="deprecation"`` (``rel="sunset"`` without ``deprecation``) when
        ``link`` is given. It replaces what the operation announced before: with neither date,
        it announces nothing, which turns off the default signals of ``GET /pets/{petId}``.
        :meth:`reset` keeps them, as it keeps the API keys.

        Example::

            store.set_deprecation(
                "GET /pets",
                deprecation=datetime(2027, 1, 1, tzinfo=timezone.utc),
                sunset=datetime(2028, 1, 1, tzinfo=timezone.utc),
                link="https://example.com/deprecations",
            )

        Args:
            operation: ``"GET /pets"``, ``"POST /pets"`` or ``"GET /pets/{petId}"``.
            deprecation: when the operation is (or was) deprecated; timezone-aware.
            sunset: when it stops working; timezone-aware.
            link: a URL that says more: printable ASCII, no whitespace, ``<`` or ``>``.

        Raises:
            TypeError: a date is not a ``datetime``, or ``link`` not a ``str``.
            ValueError: an unknown operation, a date without a timezone, a malformed
                ``link``, or a ``link`` with neither date.
        """
        if operation not in OPERATIONS:
            known = ", ".join(repr(name) for name in OPERATIONS)
            raise ValueError(f"operation must be one of {known}, got {operation!r}")
        signals = _signals(deprecation, sunset, link)
        with self._lock:
            self._signals[operation] = signals

    def reset(self) -> None:
        """Forget every pet, recorded request, pending fault and idempotency key.

        Pet and request ids restart at 1. The accepted API keys, what :meth:`set_deprecation`
        set and :attr:`honour_idempotency_keys` are kept.
        """
        self._faults.clear()
        with self._lock:
            self._pets.clear()
            self._requests.clear()
            self._answers_by_key.clear()
            self._next_pet_id = 1
            self._next_request_id = 1

    # -- scripted faults ------------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Script faults: the next matching requests fail as each says, in order.

        Each request that reaches the store takes the first pending fault whose
        ``operation`` matches it (``"any"`` matches all) and uses up one of its ``times``; a
        fault with ``times=None`` stays until :meth:`reset` or :meth:`clear_faults`. Faults
        added by later calls come after those already pending. Safe to call from any thread,
        while requests are being answered.

        Example::

            store.inject(
                Fault.error(503, retry_after=0.01, operation="create"),  # then a success
                Fault.drop(processed=True, operation="create"),  # then a lost answer
            )

        Args:
            faults: the faults, in the order they apply.

        Raises:
            TypeError: one of ``faults`` is not a :class:`Fault`; none is added.
        """
        self._faults.add(faults)

    @property
    def faults(self) -> list[Fault]:
        """The scripted faults still pending, in order; ``times`` is what is left of each."""
        return self._faults.pending()

    def clear_faults(self) -> None:
        """Drop every pending fault; pets, requests and settings are kept."""
        self._faults.clear()

    @property
    def honour_idempotency_keys(self) -> bool:
        """Whether a repeated ``Idempotency-Key`` gets the first answer again (off by default).

        When on, the first answer to an authenticated ``POST /pets`` carrying an
        ``Idempotency-Key`` is kept (a 201 or a 400 alike; not one a fault made up); a later
        ``POST`` with the same key is not processed: it gets that answer again, with
        ``Idempotent-Replayed: true``, and stores nothing. The body of the repeat is not
        compared with the first. :meth:`reset` forgets the keys. Off, every ``POST`` is
        processed, as the spec describes the service: a caller that resends a create after
        a lost answer then stores the animal twice. Settable at any time.

        Raises:
            TypeError: on setting a value that is not a bool.
        """
        return self._honour_idempotency_keys

    @honour_idempotency_keys.setter
    def honour_idempotency_keys(self, value: bool) -> None:
        _check_bool("honour_idempotency_keys", value)
        with self._lock:
            self._honour_idempotency_keys = value

    # -- adapters -------------------------------------------------------------------------

    def transport(self) -> FakeTransport:
        """Return an httpx transport that answers every request from this store.

        The one object works as both a sync and an async transport:
        ``httpx.Client(transport=store.transport(), base_url="http://fake/v1/")`` and
        ``httpx.AsyncClient(transport=...)`` alike. The host in the URL is not checked.

        Returns:
            The transport, bound to this store.
        """
        return FakeTransport(self)

    def client(self, api_key: str | None = None, **settings: Unpack[ClientSettings]) -> Client:
        """Return an SDK ``Client`` that talks to this store in process, with no socket.

        Args:
            api_key: the key to send; ``None``: the store's first key.
            **settings: ``timeout``, ``max_retries``, ``default_headers``,
                ``max_response_bytes``, ``deadline``, ``retry``: as ``Client``'s
                (``ClientSettings``).

        Returns:
            The client; close it (or use ``with``) like any other.

        Raises:
            ValueError: the store accepts no key and no ``api_key`` was given, or an argument
                ``Client`` refuses.
            TypeError: an argument of the wrong type, or one ``ClientSettings`` does not name.
        """
        http = httpx.Client(transport=self.transport())
        return Client(
            self._key(api_key), base_url=IN_PROCESS_BASE_URL, http_client=http, **settings
        )

    def async_client(
        self, api_key: str | None = None, **settings: Unpack[ClientSettings]
    ) -> AsyncClient:
        """Return an SDK ``AsyncClient`` that talks to this store in process, with no socket.

        Close it with ``await client.aclose()`` or ``async with``; arguments, errors and the
        rest as for ``client()``.

        Args:
            api_key: the key to send; ``None``: the store's first key.
            **settings: as ``AsyncClient``'s (``ClientSettings``).

        Returns:
            The async client.
        """
        http = httpx.AsyncClient(transport=self.transport())
        return AsyncClient(
            self._key(api_key), base_url=IN_PROCESS_BASE_URL, http_client=http, **settings
        )

    def _key(self, api_key: str | None) -> str:
        # Checked here: a key of None would make the client read ANIMALSTORE_API_KEY instead.
        key = self._first_key if api_key is None else api_key
        if key is None:
            raise ValueError("no API key: this store accepts none, so pass api_key=")
        return key

    def serve(self, port: int = 0) -> AbstractContextManager[str]:
        """Serve this store over HTTP on 127.0.0.1 for the duration of a ``with`` block.

        ``with store.serve() as base_url: ...`` yields ``"http://127.0.0.1:<port>/v1"``. On
        exit the server stops, open connections are closed and its threads are joined.

        Args:
            port: the TCP port to listen on; 0 picks a free one.

        Returns:
            A context manager yielding the base URL.

        Raises:
            OSError: on entering the block, when the port cannot be bound (in use, say).
        """
        # Imported here: http.server pulls in a good part of the stdlib (email, html ...).
        from animalstore_client.testing._server import serve

        return serve(self, port)

    # -- the sans-IO entry point ----------------------------------------------------------

    def handle(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
    ) -> RawResponse:
        """Answer one HTTP request given as plain data; the request is recorded first.

        Every response has a ``content-length`` and an ``x-request-id`` (``req_1``, ``req_2``
        ...), and a JSON body with ``content-type: application/json`` unless it has no body
        (as a 204 would); the answers to a deprecated operation also carry its signals (see
        :meth:`set_deprecation`). Errors carry an Error body ``{"code", "message", "status"}``;
        the codes are listed in the ``animalstore_client.testing`` module docstring.

        Args:
            method: the HTTP method (case-sensitive, as HTTP methods are).
            path: the percent-decoded path without the query, e.g. ``"/v1/pets/7"``.
            query: the raw query string without the ``?``, e.g. ``"limit=5"``.
            headers: the request headers; names are matched case-insensitively.
            body: the raw request body.

        Returns:
            ``(status, headers, body)``: the status code, a list of header pairs and the body.
        """
        request = _record(method, path, query, headers, body)
        with self._lock:
            self._requests.append(request)
            self._lock.notify_all()
            return self._answer(request)

    def _exchange(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
    ) -> Plan:
        """Record one request, apply the next scripted fault and say what to send back.

        What the transport and the server call instead of :meth:`handle`.
        """
        request = _record(method, path, query, headers, body)
        with self._lock:
            self._requests.append(request)
            self._lock.notify_all()
            # Taken under the store's lock, so faults go in the order requests are recorded.
            fault = self._faults.take(_operation_of(method, path))
            if fault is None:
                return Plan(self._answer(request))
            if fault.kind == "error":
                payload = error_body(fault)
                headers_ = [*fault.headers, *self._base_headers(payload)]
                return Plan((fault.status or 500, headers_, payload))
            if fault.kind == "drop_before":
                return Plan(None, reset=fault.reset)
            response = self._answer(request)
        if fault.kind == "drop_after":
            return Plan(None, reset=fault.reset)
        if fault.kind == "delay":
            return Plan(response, delay=fault.seconds)
        if fault.kind == "truncated":
            return Plan(response, truncate=True)
        return Plan(malformed_body(fault, response))

    def _answer(self, request: RecordedRequest) -> RawResponse:
        """Process a recorded request and return its answer (the caller holds the lock)."""
        key = request.headers.get("idempotency-key")
        remember = self._honour_idempotency_keys and request.method == "POST" and key is not None
        signals: _Headers = ()
        try:
            self._authenticate(request.headers.get("authorization"))
            if remember and key is not None and key in self._answers_by_key:
                status, headers, body = self._answers_by_key[key]
                return status, [*headers, ("idempotent-replayed", "true")], body
            operation, handler, call = self._route(
                request.method, request.path, request.query, request.body
            )
            signals = self._signals.get(operation, ())
            status, payload = handler(self, call)
        except _ApiError as error:
            response = self._error_response(error, signals)
        else:
            response = self._response(status, payload, signals)
        if remember and key is not None and response[0] != 401:
            self._answers_by_key[key] = response
        return response

    def _protocol_error(self, status: int, message: str) -> RawResponse:
        """Build the Error response for a request the HTTP server could not parse."""
        with self._lock:
            return self._error_response(_ApiError(status, "protocol_error", message))

    # -- internals; the callers hold self._lock -------------------------------------------

    def _insert_pet(self, name: str, category_id: int, status: PetStatus | str | None) -> Pet:
        pet = Pet(id=self._next_pet_id, name=name, category_id=category_id, status=status)
        self._pets[pet.id] = pet
        self._next_pet_id += 1
        return pet

    def _authenticate(self, authorization: str | None) -> None:
        if authorization is None:
            _unauthorized("missing Authorization header; send 'Authorization: Bearer <API key>'")
        scheme, _, token = authorization.strip().partition(" ")
        # RFC 7235: the scheme name is case-insensitive.
        if scheme.lower() != "bearer":
            _unauthorized("the Authorization header must use the Bearer scheme")
        if token.strip() not in self._api_keys:
            _unauthorized("invalid API key")

    def _route(
        self, method: str, path: str, query: str, body: bytes
    ) -> tuple[str, _Handler, _Call]:
        """Return the operation's name (``"GET /pets/{petId}"``), its handler and its input."""
        for pattern, template, handlers in _ROUTES:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            handler = handlers.get(method)
            if handler is None:
                allow = ", ".join(handlers)
                raise _ApiError(
                    405,
                    "method_not_allowed",
                    f"method {method} is not allowed on {path}; allowed: {allow}",
                    (("allow", allow),),
                )
            return f"{method} {template}", handler, _Call(match.groupdict(), query, body)
        raise _ApiError(404, "not_found", f"no such route: {method} {path}")

    def _list_pets(self, call: _Call) -> tuple[int, object]:
        params = _parse_query(call.query)
        limit = _parse_limit(params.get("limit"))
        status = params.get("status")
        if status is not None and status not in _STATUS_VALUES:
            _invalid_parameter(f"status must be one of {_STATUS_CHOICES}, got {status!r}")
        pets = [p for p in self._pets.values() if status is None or _status_value(p) == status]
        return 200, [_pet_to_wire(pet) for pet in pets[:limit]]

    def _create_pet(self, call: _Call) -> tuple[int, object]:
        fields = _parse_body_object(call.body)
        name = _name_field(fields)
        category_id = _category_id_field(fields)
        status = _status_field(fields)
        return 201, _pet_to_wire(self._insert_pet(name, category_id, status))

    def _get_pet(self, call: _Call) -> tuple[int, object]:
        raw_id = call.params["petId"]
        pet_id = _parse_int64(raw_id)
        pet = None if pet_id is None else self._pets.get(pet_id)
        if pet is None:
            suffix = "" if pet_id is not None else ": petId must be an int64 integer"
            raise _ApiError(404, "not_found", f"no pet with petId {raw_id!r}{suffix}")
        return 200, _pet_to_wire(pet)

    def _response(
        self, status: int, payload: object, extra_headers: Iterable[tuple[str, str]] = ()
    ) -> RawResponse:
        if payload is None:
            body = b""
        else:
            body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        return status, [*self._base_headers(body), *extra_headers], body

    def _base_headers(self, body: bytes) -> list[tuple[str, str]]:
        """Return the headers of every answer; each call takes the next request id.

        ``content-type`` only with a body: an answer without one (a 204) has no JSON.
        """
        request_id = f"req_{self._next_request_id}"
        self._next_request_id += 1
        typed = [("content-type", "application/json")] if body else []
        return [*typed, ("content-length", str(len(body))), ("x-request-id", request_id)]

    def _error_response(self, error: _ApiError, extra_headers: _Headers = ()) -> RawResponse:
        payload = {"code": error.code, "message": error.message, "status": error.status}
        return self._response(error.status, payload, (*error.headers, *extra_headers))


#: A route's handler: it returns the status and the JSON payload, ``None`` for no body (a 204).
_Handler = Callable[[FakeAnimalStore, _Call], tuple[int, object]]


def _routes() -> tuple[tuple[re.Pattern[str], str, dict[str, _Handler]], ...]:
    """Return each route's pattern, its path as the spec writes it, and {method: handler}.

    From the declared operations (``_core/endpoints.py``): each one's handler is the store's
    method named for it (``_get_pet``), and the dict order is the order of the 405 ``Allow``
    header.

    Raises:
        RuntimeError: an operation has no handler here (its name says which to write).
    """
    routes: dict[str, dict[str, _Handler]] = {}
    for endpoint in ENDPOINTS:
        handler = getattr(FakeAnimalStore, f"_{endpoint.method_name}", None)
        if handler is None:
            raise RuntimeError(
                f"FakeAnimalStore has no _{endpoint.method_name} for {endpoint.name}"
            )
        routes.setdefault(endpoint.route, {})[endpoint.method] = handler
    return tuple(
        (re.compile("/v1" + _pattern(route)), route, handlers) for route, handlers in routes.items()
    )


def _pattern(route: str) -> str:
    """Return a route as a regular expression: each ``{name}`` a group of that name."""
    return "".join(
        re.escape(literal) + ("" if name is None else f"(?P<{name}>[^/]+)")
        for literal, name, _, _ in string.Formatter().parse(route)
    )


_ROUTES = _routes()
#: Every operation by name ("GET /pets"), as `set_deprecation` takes it.
OPERATIONS = tuple(endpoint.name for endpoint in ENDPOINTS)


def _signals(deprecation: datetime | None, sunset: datetime | None, link: object) -> _Headers:
    """Return the headers that announce a deprecation; see ``set_deprecation``."""
    signals: list[tuple[str, str]] = []
    if deprecation is not None:
        timestamp = _aware("deprecation", deprecation).timestamp()
        signals.append(("deprecation", f"@{int(timestamp // 1)}"))
    if sunset is not None:
        from email.utils import format_datetime

        utc = _aware("sunset", sunset).astimezone(timezone.utc)
        signals.append(("sunset", format_datetime(utc, usegmt=True)))
    if link is not None:
        if not isinstance(link, str):
            raise TypeError(f"link must be a str, got {type(link).__name__}")
        if not signals:
            raise ValueError("link needs a deprecation or sunset date to go with it")
        if not _LINK.fullmatch(link):
            raise ValueError(f"link must be printable ASCII without spaces, < or >: {link!r}")
        relation = "deprecation" if deprecation is not None else "sunset"
        signals.append(("link", f'<{link}>; rel="{relation}"'))
    return tuple(signals)


def _operation_of(method: str, path: str) -> str | None:
    """Return the operation a request is, as faults name it (``"create"``), or ``None``."""
    for pattern, template, handlers in _ROUTES:
        if method in handlers and pattern.fullmatch(path):
            return OPERATION_OF_ROUTE[f"{method} {template}"]
    return None


def _record(
    method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
) -> RecordedRequest:
    lowered = {name.lower(): value for name, value in headers.items()}
    return RecordedRequest(method, path, query, lowered, bytes(body))


def _check_bool(argument: str, value: object) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{argument} must be a bool, got {type(value).__name__}")


def _aware(argument: str, value: object) -> datetime:
    if not isinstance(value, datetime):
        raise TypeError(f"{argument} must be a datetime, got {type(value).__name__}")
    if value.utcoffset() is None:
        raise ValueError(f"{argument} must be timezone-aware (tzinfo=timezone.utc, say)")
    return value


def _unauthorized(message: str) -> NoReturn:
    # RFC 6750 asks a 401 to name the expected scheme.
    raise _ApiError(401, "unauthorized", message, (("www-authenticate", "Bearer"),))


def _invalid_parameter(message: str) -> NoReturn:
    raise _ApiError(400, "invalid_parameter", message)


def _invalid_body(message: str) -> NoReturn:
    raise _ApiError(400, "invalid_body", message)


def _invalid_field(message: str) -> NoReturn:
    raise _ApiError(400, "invalid_field", message)


def _parse_query(query: str) -> dict[str, str]:
    parsed = parse_qs(query, keep_blank_values=True)
    for name in ("limit", "status"):
        if len(parsed.get(name, ())) > 1:
            _invalid_parameter(f"{name} must be given at most once")
    return {name: values[0] for name, values in parsed.items()}


def _parse_limit(raw: str | None) -> int:
    if raw is None:
        return _DEFAULT_LIMIT
    if not _INTEGER.fullmatch(raw) or not 1 <= int(raw) <= _MAX_LIMIT:
        _invalid_parameter(f"limit must be an integer between 1 and {_MAX_LIMIT}, got {raw!r}")
    return int(raw)


def _parse_int64(raw: str) -> int | None:
    value = int(raw) if _INTEGER.fullmatch(raw) else None
    return value if value is not None and _INT64_MIN <= value <= _INT64_MAX else None


def _reject_constant(name: str) -> NoReturn:
    # Python's json accepts NaN and Infinity, which are not JSON.
    raise ValueError(f"{name} is not valid JSON")


def _parse_body_object(body: bytes) -> dict[str, Any]:
    if not body.strip():
        _invalid_body("the request body is empty; expected a JSON object")
    try:
        # Decoded first: json.loads(bytes) would also take UTF-16 and UTF-32, which JSON
        # exchanged between systems must not be (RFC 8259, section 8.1).
        value = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        _invalid_body("the request body is nested too deeply")
    except ValueError:  # UnicodeDecodeError included
        _invalid_body("the request body is not valid UTF-8 JSON")
    if not isinstance(value, dict):
        _invalid_body(f"the request body must be a JSON object, got {_json_type(value)}")
    return value


def _required(fields: Mapping[str, Any], name: str) -> Any:
    if name not in fields:
        _invalid_field(f"{name} is required")
    return fields[name]


def _name_field(fields: Mapping[str, Any]) -> str:
    name = _required(fields, "name")
    if not isinstance(name, str):
        _invalid_field(f"name must be a string, got {_json_type(name)}")
    # A "\ud800" escape decodes to a lone surrogate, which no response could encode.
    if not _encodable(name):
        _invalid_field("name must be valid Unicode text, without lone surrogates")
    return name


def _encodable(text: str) -> bool:
    """Return whether UTF-8 can encode ``text``: whether it holds no lone surrogate."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_encodable(argument: str, text: str) -> None:
    """Refuse text that no response could carry.

    Raises:
        ValueError: ``text`` holds a lone surrogate.
    """
    if not _encodable(text):
        raise ValueError(
            f"{argument} must be valid Unicode text, without lone surrogates: {text!r}"
        )


def _category_id_field(fields: Mapping[str, Any]) -> int:
    category_id = _required(fields, "categoryId")
    # bool is a subclass of int, but JSON true/false is not an integer.
    if not isinstance(category_id, int) or isinstance(category_id, bool):
        _invalid_field(f"categoryId must be an integer, got {_json_type(category_id)}")
    if not _INT64_MIN <= category_id <= _INT64_MAX:
        _invalid_field(
            f"categoryId must be an int64 integer, between {_INT64_MIN} and {_INT64_MAX}"
        )
    return category_id


def _status_field(fields: Mapping[str, Any]) -> PetStatus | None:
    if "status" not in fields:
        return None
    status = fields["status"]
    if status not in _STATUS_VALUES:
        shown = repr(status) if isinstance(status, str) else _json_type(status)
        _invalid_field(f"status must be one of {_STATUS_CHOICES}, got {shown}")
    return PetStatus(status)


def _json_type(value: object) -> str:
    """Name a decoded JSON value's type as JSON does, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _status_value(pet: Pet) -> str | None:
    return pet.status.value if isinstance(pet.status, PetStatus) else pet.status


def _pet_to_wire(pet: Pet) -> dict[str, object]:
    # Built here rather than with Pet.to_dict: the fake must not share the SDK's serialisation.
    wire: dict[str, object] = {"id": pet.id, "name": pet.name, "categoryId": pet.category_id}
    status = _status_value(pet)
    if status is not None:
        wire["status"] = status
    return wire
