"""Fixtures for the reliability tests: fault servers, and clients of every kind over real sockets.

Every test that takes ``make_client`` (or ``kind``) runs once per backend: a ``Client`` and an
``AsyncClient`` on their default (httpx) backend, an ``AsyncClient`` on aiohttp
(``http_client=DefaultAioHttpClient()``, made in the test's loop), and a ``Client`` and an
``AsyncClient`` on httpx2 (``DefaultHttpx2Client()``, ``DefaultAsyncHttpx2Client()``; skipped,
with the reason, where httpx2 is not installed). Coroutines run on one event
loop per test, closed (async generators and the default executor included) after the clients.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx
import pytest

from animalstore_client import (
    AsyncClient,
    Client,
    DefaultAioHttpClient,
    DefaultAsyncHttpx2Client,
    DefaultHttpx2Client,
)
from tests.conftest import Api as SharedApi
from tests.conftest import closed_after
from tests.reliability.faultserver import FaultServer

#: Distinctive, so that a search for it in logs and messages cannot miss it.
API_KEY = "sk-reliab1lity-SECRET-7f3c9b1e5d"
PET = {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}
#: Plain valid arguments for each operation.
VALID_ARGUMENTS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "list_pets": ((), {}),
    "create_pet": ((), {"name": "Rex", "category_id": 3}),
    "get_pet": ((1,), {}),
}
#: A per-attempt timeout that bounds every test should a fault hang a call.
TEST_TIMEOUT = 5.0
#: The kinds whose SDK client is a ``Client``; every other kind's is an ``AsyncClient``.
SYNC_KINDS = ("sync", "httpx2-sync")
#: The kinds on the httpx family's async clients (httpx, httpx2).
HTTPX_ASYNC_KINDS = ("async", "httpx2-async")
#: Why the httpx2 kinds are skipped, if they are.
NO_HTTPX2 = (
    "httpx2 is not installed (the SDK's httpx2 extra)"
    if importlib.util.find_spec("httpx2") is None
    else None
)


def error_body(status: int, code: str = "failed", message: str | None = None) -> dict[str, Any]:
    return {"code": code, "message": message or f"status {status}", "status": status}


def json_bytes(value: object) -> bytes:
    return json.dumps(value).encode()


def exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and every exception reachable through ``__cause__`` and ``__context__``."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop()
        if any(current is s for s in seen):
            continue
        seen.append(current)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return seen


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, read, closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class Api(SharedApi):
    """The suite's facade over either client: the shared one, plus the client's kind,
    operations called by name, and ``get_pet`` checked to warn.

    Attributes:
        kind: ``"sync"``, ``"async"`` or ``"aiohttp"``.
        target: the SDK client (or its ``with_raw_response`` view).
    """

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop, kind: str) -> None:
        super().__init__(target, loop)
        self.kind = kind

    def get_pet(self, *args: Any, **kwargs: Any) -> Any:
        """``get_pet``, which must warn ``DeprecationWarning`` once, unless its arguments are
        refused (``TypeError``, ``ValueError``): then it must not warn at all."""
        refused = False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return self.run(self.target.get_pet, *args, **kwargs)
            except (TypeError, ValueError):
                refused = True
                raise
            finally:
                # Any other warning fails too, as everywhere in the suite.
                expected = [] if refused else [DeprecationWarning]
                assert [warning.category for warning in caught] == expected

    def call(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        """Call an operation by name (``"list_pets"``, ``"create_pet"``, ``"get_pet"``)."""
        method: Callable[..., Any] = getattr(self, operation)
        return method(*args, **kwargs)

    def invoke(self, operation: str) -> Any:
        """Call an operation by name with plain valid arguments (``get_pet(1)`` ...)."""
        args, kwargs = VALID_ARGUMENTS[operation]
        return self.call(operation, *args, **kwargs)

    @property
    def raw(self) -> Api:
        """The same calls through ``with_raw_response``."""
        return Api(self.target.with_raw_response, self._loop, self.kind)

    def with_options(self, **options: Any) -> Api:
        """The same calls through ``with_options(**options)``'s copy of the client."""
        return Api(self.target.with_options(**options), self._loop, self.kind)


_Error = TypeVar("_Error", bound=BaseException)


def raised_exactly(error: type[_Error], call: Callable[[], object]) -> _Error:
    """What ``call()`` raises: an ``error`` itself, not one of its subclasses (else the test fails).

    Args:
        error: the class expected.
        call: what must raise it.

    Returns:
        The exception raised.
    """
    with pytest.raises(error) as caught:
        call()
    assert type(caught.value) is error
    return caught.value


@pytest.fixture
def server() -> Iterator[FaultServer]:
    """A started fault server, closed (threads joined, sockets closed) after the test."""
    with FaultServer() as fault_server:
        yield fault_server


@pytest.fixture
def make_server() -> Iterator[Callable[..., FaultServer]]:
    """Start extra fault servers (each on its own port); all closed after the test."""
    yield from closed_after(lambda **options: FaultServer(**options).start())


@pytest.fixture
def aloop() -> Iterator[asyncio.AbstractEventLoop]:
    """One event loop per test, fully shut down afterwards."""
    event_loop = asyncio.new_event_loop()
    yield event_loop
    event_loop.run_until_complete(event_loop.shutdown_asyncgens())
    event_loop.run_until_complete(event_loop.shutdown_default_executor())
    event_loop.close()


_NEEDS_HTTPX2 = pytest.mark.skipif(NO_HTTPX2 is not None, reason=str(NO_HTTPX2))
#: The kinds on a client of the httpx family (httpx, httpx2), for ``parametrize("kind", ...)``.
HTTPX_FAMILY_KINDS = [
    "sync",
    "async",
    pytest.param("httpx2-sync", marks=_NEEDS_HTTPX2),
    pytest.param("httpx2-async", marks=_NEEDS_HTTPX2),
]


@pytest.fixture(params=[*HTTPX_FAMILY_KINDS[:2], "aiohttp", *HTTPX_FAMILY_KINDS[2:]])
def kind(request: pytest.FixtureRequest) -> str:
    """The backend a test runs on: ``"sync"``, ``"async"`` (httpx), ``"aiohttp"``,
    ``"httpx2-sync"`` or ``"httpx2-async"``; ``SYNC_KINDS`` are those of a ``Client``."""
    param: str = request.param
    return param


def new_http_client(
    kind: str, loop: asyncio.AbstractEventLoop | None = None, **options: Any
) -> Any:
    """A user's own ``http_client`` for a client of ``kind``; the caller closes it.

    For ``"aiohttp"``, a ``DefaultAioHttpClient`` (``options`` are aiohttp's) made in ``loop``,
    where aiohttp binds it; a new loop if none is given.
    """
    if kind == "sync":
        return httpx.Client(**options)
    if kind == "async":
        return httpx.AsyncClient(**options)
    if kind == "httpx2-sync":
        return DefaultHttpx2Client(**options)
    if kind == "httpx2-async":
        return DefaultAsyncHttpx2Client(**options)
    return aiohttp_session(loop or asyncio.new_event_loop(), **options)


def own_http_client(kind: str) -> Any:
    """The ``http_client`` a test of ``kind`` passes (``None`` on the default backends).

    Call it inside a coroutine for ``"aiohttp"``, where aiohttp binds the session.
    """
    return {
        "aiohttp": DefaultAioHttpClient,
        "httpx2-sync": DefaultHttpx2Client,
        "httpx2-async": DefaultAsyncHttpx2Client,
    }.get(kind, lambda: None)()


async def aclose_http_client(http: Any) -> None:
    """Close what ``own_http_client`` gave an async test, if anything."""
    if http is not None:
        await (http.aclose() if hasattr(http, "aclose") else http.close())


def aiohttp_session(loop: asyncio.AbstractEventLoop, **options: Any) -> Any:
    """A ``DefaultAioHttpClient(**options)`` made in ``loop``; close it with ``close_in``."""

    async def make() -> Any:
        return DefaultAioHttpClient(**options)

    return loop.run_until_complete(make())


def close_in(loop: asyncio.AbstractEventLoop, http: Any) -> None:
    """Close a user's ``http_client`` of any kind, on ``loop`` for the async ones."""
    closed = http.aclose() if hasattr(http, "aclose") else http.close()
    if closed is not None:
        loop.run_until_complete(closed)


@pytest.fixture
def make_client(kind: str, aloop: asyncio.AbstractEventLoop) -> Iterator[Callable[..., Api]]:
    """Build an SDK client of the test's kind; every one is closed after the test.

    ``base_url`` is a URL string or a ``FaultServer``; ``api_key`` defaults to ``API_KEY`` and
    ``timeout`` to ``TEST_TIMEOUT``; other keyword arguments go to the constructor.
    """
    made: list[Api] = []
    backends: list[Any] = []

    def make(base_url: str | FaultServer, **options: Any) -> Api:
        if isinstance(base_url, FaultServer):
            base_url = base_url.base_url
        options.setdefault("api_key", API_KEY)
        options.setdefault("timeout", TEST_TIMEOUT)
        if kind not in ("sync", "async") and "http_client" not in options:
            options["http_client"] = new_http_client(kind, aloop)
            backends.append(options["http_client"])
        client = (
            Client(**options, base_url=base_url)
            if kind in SYNC_KINDS
            else AsyncClient(**options, base_url=base_url)
        )
        api = Api(client, aloop, kind)
        made.append(api)
        return api

    yield make
    for api in made:
        api.close()  # idempotent: a test may have closed it already
    for backend in backends:
        close_in(aloop, backend)
