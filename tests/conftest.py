"""Fixtures shared by the whole suite."""

from __future__ import annotations

import asyncio
import inspect
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import httpx
import pytest
import respx
from hypothesis import settings

from animalstore_client import AsyncClient, Client
from animalstore_client._backends.eventloop import sleep as _real_async_sleep
from animalstore_client._backends.httpx import family
from animalstore_client._core.wire import Answer, Request

ENV_VARIABLES = (
    "ANIMALSTORE_API_KEY",
    "ANIMALSTORE_BASE_URL",
    "ANIMALSTORE_LOG",
    "ANIMALSTORE_TRACING",
)
BASE_URL = "https://api.test/v1"
API_KEY = "test-key-0123456789"

# Each @given test states its settings; this covers one added without: on a busy 2-core machine
# an example can take longer than Hypothesis's default deadline (200 ms) through no fault of the
# code, and no property here is about time.
settings.register_profile("animalstore", deadline=None)
settings.load_profile("animalstore")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--deep",
        action="store_true",
        default=False,
        help="also run the deep tier: the default tier's properties at full scale "
        "(10,000 records, 1 GiB bombs, 1,000 calls in flight, hundreds of sequences)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the tests marked ``deep`` out unless ``--deep`` is given (deselected, not skipped:
    the default tier's summary counts only what it runs)."""
    if config.getoption("--deep"):
        return
    deep = [item for item in items if item.get_closest_marker("deep")]
    if deep:
        config.hook.pytest_deselected(items=deep)
        items[:] = [item for item in items if not item.get_closest_marker("deep")]


class _Closable(Protocol):
    def close(self) -> None: ...


_Made = TypeVar("_Made", bound=_Closable)


def closed_after(build: Callable[..., _Made]) -> Iterator[Callable[..., _Made]]:
    """The body of a fixture that makes things on demand (``yield from closed_after(build)``):
    it gives the test ``build``, and closes all it built once the test is over.

    Args:
        build: makes one thing, from the test's arguments.

    Returns:
        A generator that yields ``build`` as the test calls it, then closes what it made.
    """
    made: list[_Made] = []

    def make(*args: Any, **kwargs: Any) -> _Made:
        thing = build(*args, **kwargs)
        made.append(thing)
        return thing

    yield make
    for thing in made:
        thing.close()


def at_scale(small: object, full: object, name: str = "n") -> list[Any]:
    """Parameters for one property at two sizes: ``small`` in the default tier, ``full`` in the
    deep tier (``--deep``). A deep test is thus never without its small twin."""
    return [
        pytest.param(small, id=f"{name}={small}"),
        pytest.param(full, id=f"{name}={full}", marks=pytest.mark.deep),
    ]


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's own ANIMALSTORE_* variables."""
    for name in ENV_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the delays the clients sleep between attempts, without sleeping.

    ``time.monotonic`` moves on by each delay, as if it had been slept: a client paused by a
    ``Retry-After`` sees its pause end.
    """
    recorded: list[float] = []
    real_monotonic = time.monotonic

    async def fake_async_sleep(delay: float) -> None:
        recorded.append(delay)

    monkeypatch.setattr(time, "sleep", recorded.append)
    monkeypatch.setattr(asyncio, "sleep", fake_async_sleep)
    monkeypatch.setattr(time, "monotonic", lambda: real_monotonic() + sum(recorded))
    return recorded


class StoppedClock:
    """A clock that moves only when the test moves it: ``now``, read by calling it (as
    ``time.monotonic`` or ``time.perf_counter``) or by ``monotonic()`` (as the ``time`` module).
    """

    def __init__(self) -> None:
        self.now = 1000.0  # plus halves and quarters of a second, sums stay exact

    def __call__(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now


def stopped_clock(monkeypatch: pytest.MonkeyPatch, target: object, name: str) -> StoppedClock:
    """Put a ``StoppedClock`` in the place of ``target``'s attribute ``name`` for the test.

    Returns:
        The clock, for the test to move.
    """
    clock = StoppedClock()
    monkeypatch.setattr(target, name, clock)
    return clock


class VirtualClock:
    """The clock of the SDK's waits, which the test controls: a wait returns at once.

    It stands in for the ``time`` module only where the SDK decides and sleeps (the clients,
    the call, the retries, the wire) and for the async senders' ``sleep``: servers, event loops
    and the HTTP libraries keep real time, and the SDK's own clock still runs with it. Each
    wait the SDK asks for is recorded in ``slept`` and moves the SDK's clock on by its length,
    as if it had been slept, so a ``Retry-After`` pause, a backoff or a deadline is seen to
    pass without the test waiting for it; an async wait yields to the loop once.

    Attributes:
        slept: every wait the SDK asked for, in seconds, in order.
    """

    def __init__(self) -> None:
        self.slept: list[float] = []
        self._offset = 0.0
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        return time.monotonic() + self._offset

    def time(self) -> float:
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the SDK's clock on by ``seconds`` (a pause or a deadline then passes)."""
        with self._lock:
            self._offset += seconds

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)
        await _real_async_sleep(0)  # asyncio's or trio's, whichever runs

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    """A ``VirtualClock`` the SDK's waits run on for this test: none of them sleeps for real."""
    import animalstore_client._backends.aiohttp as aiohttp_backend
    import animalstore_client._backends.httpx as httpx_backend
    from animalstore_client import _client
    from animalstore_client._core import call, retries, wire

    virtual = VirtualClock()
    for module in (_client, call, retries, wire):
        monkeypatch.setattr(module, "time", virtual)
    for sender in (httpx_backend.AsyncHttpxSender, aiohttp_backend.AiohttpSender):
        monkeypatch.setattr(sender, "sleep", staticmethod(virtual.async_sleep))
    return virtual


@pytest.fixture(params=["httpx", "httpx2"])
def httpx_module(request: pytest.FixtureRequest) -> Any:
    """Each httpx library the SDK takes, imported: httpx, then httpx2 (the test skipped where
    the httpx2 extra is not installed)."""
    return pytest.importorskip(
        request.param, reason="httpx2 is not installed (the SDK's httpx2 extra)"
    )


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """One event loop for a whole test, so an AsyncClient can be reused across calls."""
    event_loop = asyncio.new_event_loop()
    yield event_loop
    event_loop.close()


@pytest.fixture
def mock_api() -> Iterator[respx.MockRouter]:
    """respx routes under BASE_URL; every request not routed fails the test."""
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router


class Api:
    """Calls a ``Client`` or an ``AsyncClient`` the same way, so one test body covers both.

    Coroutines the async client returns are run to completion on the test's loop.
    """

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.target = target
        self._loop = loop

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call ``function``; if it returns an awaitable, run it to completion on the loop."""
        result = function(*args, **kwargs)
        return self._loop.run_until_complete(result) if inspect.isawaitable(result) else result

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.target, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self.run(attribute, *args, **kwargs)

    @property
    def with_raw_response(self) -> Api:
        return Api(self.target.with_raw_response, self._loop)

    def close(self) -> None:
        self.run(getattr(self.target, "close", None) or self.target.aclose)


@pytest.fixture(params=["sync", "async"])
def make_api(
    request: pytest.FixtureRequest, loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., Api]]:
    """Build a client of each kind (the test runs once per kind), closed after the test.

    Keyword arguments go to the constructor; ``api_key`` and ``base_url`` have test defaults.
    """
    client_class = Client if request.param == "sync" else AsyncClient

    def make(**kwargs: Any) -> Api:
        kwargs.setdefault("api_key", API_KEY)
        if "environment" not in kwargs:
            kwargs.setdefault("base_url", BASE_URL)
        return Api(client_class(**kwargs), loop)

    yield from closed_after(make)


@pytest.fixture
def api(make_api: Callable[..., Api]) -> Api:
    """A client of each kind with the test defaults and no retry delays recorded elsewhere."""
    return make_api()


def read_lines(stream: IO[bytes], count: int, timeout: float) -> list[str]:
    """Read ``count`` lines from a child's pipe, failing after ``timeout`` seconds, not hanging."""
    received = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while received.count(b"\n") < count:
            if not selector.select(deadline - time.monotonic()):
                raise TimeoutError(f"the process printed only {received!r}")
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                raise EOFError(f"the process exited after printing {received!r}")
            received += chunk
    return received.decode().splitlines()[:count]


def run_child(
    *command: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in a child process and wait for it; a test does not hang on it.

    Args:
        command: the program and its arguments.
        cwd: the child's directory; this process's if absent.
        env: the child's environment; this process's if absent.
        timeout: the seconds after which the child is killed and the test fails.

    Returns:
        The finished child, its stdout and stderr read as text; whatever its exit status.
    """
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@contextmanager
def reaped(process: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """When the block ends, however it ends: kill ``process`` if it still runs (a test that
    failed midway), wait for it, and close its pipes.

    Yields:
        ``process``.
    """
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def without_our_variables(**extra: str) -> dict[str, str]:
    """This process's environment without its ``ANIMALSTORE_*`` variables, and ``extra``.

    Nor ``PYTHONUNBUFFERED`` (set in some CI shells and containers): a user's process writes
    to a pipe through a buffer, which the SDK and the command line flush where they must.
    """
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("ANIMALSTORE_") and name != "PYTHONUNBUFFERED"
    }
    return {**kept, **extra}


def sigint_as_in_a_terminal() -> None:
    """``preexec_fn`` for a child that a test stops with SIGINT, as Ctrl-C in a terminal would.

    A non-interactive shell starts a background job (``pytest ... &``) with SIGINT ignored, so
    that Ctrl-C at the terminal reaches only the foreground job; an exec keeps an ignored signal
    ignored, and Python then installs no KeyboardInterrupt handler. The programs under test are
    right to keep it so (as Python does); a terminal's foreground job, which these tests play,
    starts with the default action, which this restores in the child, just before the exec.
    ``restore_signals`` does not: it resets only SIGPIPE, SIGXFZ and SIGXFSZ.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def httpx_answer(response: httpx.Response) -> Answer:
    """The core's ``Answer`` for an httpx response read in full, as the httpx backend makes it.

    A response built without a request answers a plain ``GET`` of the test's base URL.
    """
    try:
        built = response.request
    except RuntimeError:
        built = httpx.Request("GET", f"{BASE_URL}/pets")
    request = Request(built.method, str(built.url), None, dict(built.headers), None, {})
    return family(httpx).answer(request, built, response, None)
