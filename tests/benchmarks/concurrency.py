"""Cases 7 and 8: many calls at once over real loopback sockets, the SDK against raw clients.

The store (``store.serve()``) runs in a child process, so that its hundred handler threads do
not take the GIL from the client being measured. Every round builds its clients afresh, sends
the whole batch at once and closes them, as a fan-out script does: connecting is part of the
cost, for the SDK and its baseline alike. Contenders alternate (one order, then the reverse).

Throughput is calls per second over the batch; a failed call counts as a failure, not as a
call. Peak memory is measured apart, untimed (not in ``--quick``): one batch of each contender
in a fresh process, and how far its resident set's high-water mark (VmHWM) rose above the level
after the imports.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any

import httpx
from attrs import frozen

from animalstore_client import (
    DEFAULT_CONNECTION_LIMITS,
    DEFAULT_TIMEOUT,
    AsyncClient,
    Client,
    DefaultAioHttpClient,
    DefaultAsyncHttpx2Client,
    Pet,
)
from tests.benchmarks._harness import Comparison

__all__ = ["Throughput", "concurrent_async", "concurrent_threads"]

ASYNC_CALLS = 1_000
CONNECTIONS = 100
THREADS = 16
THREAD_CALLS = 2_000
LIMIT = 20

_SERVER = """
import sys
from animalstore_client.testing import FakeAnimalStore

store = FakeAnimalStore(api_keys=[sys.argv[1]])
for i in range(100):
    store.add_pet(f"pet-{i}", i % 7, ("available", "pending", "sold")[i % 3])
with store.serve() as url:
    print(url, flush=True)
    sys.stdin.read()  # until the benchmark closes the pipe
"""


@contextlib.contextmanager
def served_store(api_key: str) -> Iterator[str]:
    """Serve a store of 100 pets from a child process; yield its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER, api_key],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        yield process.stdout.readline().strip()
    finally:
        process.stdin.close()
        process.wait(30)
        process.stdout.close()


@frozen
class Batch:
    """One round of one contender."""

    seconds: float
    calls: int
    failures: int
    #: CPU seconds this process spent on the batch (the store runs in another process);
    #: ``None`` when the contenders ran in processes of their own.
    cpu_seconds: float | None = None

    @property
    def calls_per_second(self) -> float:
        """Completed calls per second."""
        return (self.calls - self.failures) / self.seconds


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))


def _timed(run: Callable[[], int], calls: int) -> Batch:
    """Time ``run``, which makes ``calls`` calls and returns how many failed."""
    started, cpu_started = time.perf_counter(), time.process_time()
    failures = run()
    return Batch(
        seconds=time.perf_counter() - started,
        calls=calls,
        failures=failures,
        cpu_seconds=time.process_time() - cpu_started,
    )


_PEAK_PROBE = """
import sys
from tests.benchmarks.concurrency import peak_of_one_batch

print(peak_of_one_batch(sys.argv[1], sys.argv[2], sys.argv[3]))
"""


def _peak_kib(contender: str, url: str, api_key: str) -> int:
    """Run one batch of ``contender`` in a fresh process; return its peak memory growth."""
    result = subprocess.run(
        [sys.executable, "-c", _PEAK_PROBE, contender, url, api_key],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(result.stdout)


@frozen
class Throughput:
    """The SDK against one baseline: per-round batches of each, peak memory, and the target."""

    case: str
    baseline: str
    sdk: tuple[Batch, ...]
    base: tuple[Batch, ...]
    #: Peak memory growth of one batch, KiB: SDK, baseline; ``None`` when not measured.
    peaks: tuple[int, int] | None
    #: The least SDK throughput, as a fraction of the baseline's; ``None``: no target.
    target: float | None

    def comparison(self) -> Comparison:
        """As a row of the main table: time ratios SDK / baseline, lower is better."""
        return Comparison(
            case=self.case,
            baseline=self.baseline,
            sdk_seconds=statistics.median(b.seconds for b in self.sdk),
            baseline_seconds=statistics.median(b.seconds for b in self.base),
            ratios=tuple(
                base.calls_per_second / sdk.calls_per_second
                for sdk, base in zip(self.sdk, self.base, strict=True)
            ),
            target=None if self.target is None else 1 / self.target,
        )

    @property
    def sdk_failures(self) -> int:
        """Failed SDK calls over every round: must be 0."""
        return sum(b.failures for b in self.sdk)

    def fact(self) -> str:
        """Calls a second, the throughput ratio, failures, CPU a call and peak memory: one line."""

        def rate(batches: tuple[Batch, ...]) -> float:
            return statistics.median(b.calls_per_second for b in batches)

        def cpu_us(batches: tuple[Batch, ...]) -> float:
            return statistics.median((b.cpu_seconds or 0.0) / b.calls for b in batches) * 1e6

        cpu = (
            ""
            if self.sdk[0].cpu_seconds is None
            else f"client CPU a call SDK {cpu_us(self.sdk):.0f} us, baseline "
            f"{cpu_us(self.base):.0f} us ({len(self.sdk)} rounds); "
        )

        ratio = 1 / self.comparison().ratio
        target = "" if self.target is None else f" (target >= {self.target:.2f})"
        return (
            f"case {self.case.split('.')[0]} vs {self.baseline}: SDK {rate(self.sdk):,.0f} "
            f"calls/s, baseline {rate(self.base):,.0f} calls/s, throughput {ratio:.2f}x{target}; "
            f"failures SDK {self.sdk_failures}, baseline {sum(b.failures for b in self.base)}; "
            + cpu
            + (
                "peak memory not measured (--quick)"
                if self.peaks is None
                else f"peak memory SDK {self.peaks[0] / 1024:.1f} MiB, "
                f"baseline {self.peaks[1] / 1024:.1f} MiB"
            )
        )


def _pets(items: Any) -> list[Pet]:
    from tests.benchmarks.cases import hand_pets

    return hand_pets(items)


def _headers(api_key: str) -> dict[str, str]:
    from tests.benchmarks.cases import HEADERS

    return {**HEADERS, "authorization": f"Bearer {api_key}"}  # the SDK's names: lower case


async def _gather(call: Callable[[], Awaitable[object]], calls: int) -> list[object]:
    return await asyncio.gather(*(call() for _ in range(calls)), return_exceptions=True)


async def _sdk_aiohttp(url: str, api_key: str, calls: int = ASYNC_CALLS) -> list[object]:
    async with (
        DefaultAioHttpClient() as http,
        AsyncClient(api_key=api_key, base_url=url, http_client=http) as sdk,
    ):
        return await _gather(lambda: sdk.list_pets(limit=LIMIT), calls)


async def _raw_aiohttp(
    url: str, api_key: str, calls: int = ASYNC_CALLS, *, typed: bool = True
) -> list[object]:
    import aiohttp

    headers, params = _headers(api_key), {"limit": str(LIMIT)}
    connector = aiohttp.TCPConnector(limit=CONNECTIONS)
    # The same calls as the SDK's: the same headers and the same limits on each phase of an
    # attempt (aiohttp's own default is one 5-minute limit on the whole call).
    timeout = aiohttp.ClientTimeout(
        sock_connect=DEFAULT_TIMEOUT.connect,
        sock_read=DEFAULT_TIMEOUT.read,
        connect=DEFAULT_TIMEOUT.pool,
    )
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one() -> object:
            async with session.get(f"{url}/pets", params=params, headers=headers) as response:
                response.raise_for_status()
                page = json.loads(await response.read())
            return _pets(page) if typed else page

        return await _gather(one, calls)


async def _raw_aiohttp_dicts(url: str, api_key: str, calls: int = ASYNC_CALLS) -> list[object]:
    return await _raw_aiohttp(url, api_key, calls, typed=False)


async def _sdk_default(url: str, api_key: str, calls: int = ASYNC_CALLS) -> list[object]:
    async with AsyncClient(api_key=api_key, base_url=url) as sdk:
        return await _gather(lambda: sdk.list_pets(limit=LIMIT), calls)


async def _raw_httpx(
    url: str,
    api_key: str,
    calls: int = ASYNC_CALLS,
    *,
    gate: int | None = None,
    lib: ModuleType = httpx,
) -> list[object]:
    headers = _headers(api_key)
    # The SDK's pool settings; no pool timeout, so that every call completes however long
    # httpx's queue takes (with the SDK's 30 s, most of the 1,000 calls fail).
    timeout = lib.Timeout(DEFAULT_TIMEOUT.read, connect=DEFAULT_TIMEOUT.connect, pool=None)
    limits = lib.Limits(
        max_connections=DEFAULT_CONNECTION_LIMITS.max_connections,
        max_keepalive_connections=DEFAULT_CONNECTION_LIMITS.max_keepalive_connections,
        keepalive_expiry=DEFAULT_CONNECTION_LIMITS.keepalive_expiry,
    )
    semaphore = asyncio.Semaphore(gate or calls)
    async with lib.AsyncClient(limits=limits, timeout=timeout) as http:

        async def one() -> object:
            async with semaphore:
                response = await http.get(f"{url}/pets", params={"limit": LIMIT}, headers=headers)
            response.raise_for_status()
            return _pets(json.loads(response.content))

        return await _gather(one, calls)


async def _raw_httpx_gated(url: str, api_key: str, calls: int = ASYNC_CALLS) -> list[object]:
    return await _raw_httpx(url, api_key, calls, gate=CONNECTIONS)


async def _sdk_httpx2(url: str, api_key: str, calls: int = ASYNC_CALLS) -> list[object]:
    async with (
        DefaultAsyncHttpx2Client() as http,
        AsyncClient(api_key=api_key, base_url=url, http_client=http) as sdk,
    ):
        return await _gather(lambda: sdk.list_pets(limit=LIMIT), calls)


async def _raw_httpx2(url: str, api_key: str, calls: int = ASYNC_CALLS) -> list[object]:
    import httpx2

    return await _raw_httpx(url, api_key, calls, lib=httpx2)


def _threaded(call: Callable[[], object]) -> int:
    failures = 0
    lock = threading.Lock()

    def one(_: int) -> None:
        nonlocal failures
        try:
            call()
        except Exception:
            with lock:
                failures += 1

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(one, range(THREAD_CALLS)))
    return failures


def _sdk_threads(url: str, api_key: str) -> int:
    with Client(api_key=api_key, base_url=url) as client:
        return _threaded(lambda: client.list_pets(limit=LIMIT))


def _raw_threads(url: str, api_key: str) -> int:
    headers = _headers(api_key)
    with httpx.Client(timeout=DEFAULT_TIMEOUT) as http:

        def one() -> object:
            response = http.get(f"{url}/pets", params={"limit": LIMIT}, headers=headers)
            response.raise_for_status()
            return _pets(json.loads(response.content))

        return _threaded(one)


_ASYNC: dict[str, Callable[[str, str, int], Coroutine[Any, Any, list[object]]]] = {
    "sdk aiohttp": _sdk_aiohttp,
    "raw aiohttp typed": _raw_aiohttp,
    "raw aiohttp dicts": _raw_aiohttp_dicts,
    "sdk default": _sdk_default,
    "raw httpx typed": _raw_httpx,
    "raw httpx gated": _raw_httpx_gated,
}
if importlib.util.find_spec("httpx2") is not None:  # with the httpx2 extra
    _ASYNC.update({"sdk httpx2": _sdk_httpx2, "raw httpx2 typed": _raw_httpx2})
#: The contenders on httpx's default pool, which take seconds where the others take tenths.
_SLOW = ("sdk default", "raw httpx typed", "raw httpx gated")
_THREADED: dict[str, Callable[[str, str], int]] = {"sdk": _sdk_threads, "raw": _raw_threads}


def _failures(answers: list[object]) -> int:
    return sum(isinstance(answer, BaseException) for answer in answers)


def peak_of_one_batch(contender: str, url: str, api_key: str) -> int:
    """Run one batch of ``contender``; return how far VmHWM rose above VmRSS before it, KiB."""
    before = _status_kib("VmRSS:")
    if contender in _ASYNC:
        asyncio.run(_ASYNC[contender](url, api_key, ASYNC_CALLS))
    else:
        _THREADED[contender](url, api_key)
    return _status_kib("VmHWM:") - before


def _alternate(contenders: dict[str, Callable[[], Batch]], rounds: int) -> dict[str, list[Batch]]:
    results: dict[str, list[Batch]] = {name: [] for name in contenders}
    names = list(contenders)
    for round_number in range(rounds):
        for name in reversed(names) if round_number % 2 else names:
            results[name].append(contenders[name]())
    return results


def _peaks(names: list[str], url: str, api_key: str, memory: bool) -> dict[str, int] | None:
    return {name: _peak_kib(name, url, api_key) for name in names} if memory else None


def concurrent_async(rounds: int, api_key: str, *, memory: bool = True) -> list[Throughput]:
    """Case 7: one ``AsyncClient``, 1,000 concurrent ``list_pets(limit=20)``, 100 connections.

    On aiohttp against a raw ``aiohttp.ClientSession`` (``TCPConnector(limit=100)``, the SDK's
    timeouts per phase); on httpx2 (``DefaultAsyncHttpx2Client()``, where httpx2 is installed)
    against a raw ``httpx2.AsyncClient`` built the same way; on the default backend against a
    raw ``httpx.AsyncClient`` with the SDK's pool settings and timeouts but no pool timeout, so
    that all its calls complete, and, with no target, the same client behind an
    ``asyncio.Semaphore(100)``: what the SDK's connection gate does, written by hand.

    ``rounds`` is for the default backend's contenders, about 25 s a round; the others take
    under 3 s a round and get three times as many, so that their quartiles rest on more than
    three rounds.
    """
    loop = asyncio.new_event_loop()
    with served_store(api_key) as url:
        try:
            # A benchmark of two things that do different work would measure nothing.
            pairs = [
                ("sdk aiohttp", "raw aiohttp typed"),
                ("sdk default", "raw httpx typed"),
                ("sdk default", "raw httpx gated"),
            ]
            if "sdk httpx2" in _ASYNC:
                pairs.append(("sdk httpx2", "raw httpx2 typed"))
            for sdk, raw in pairs:
                sdk_answer = loop.run_until_complete(_ASYNC[sdk](url, api_key, 1))[0]
                raw_answer = loop.run_until_complete(_ASYNC[raw](url, api_key, 1))[0]
                if sdk_answer != raw_answer or len(sdk_answer) != LIMIT:  # type: ignore[arg-type]
                    raise AssertionError(f"SDK and baseline disagree: {sdk_answer!r}")

            def batch(name: str) -> Callable[[], Batch]:
                def run() -> int:
                    pending = _ASYNC[name](url, api_key, ASYNC_CALLS)
                    return _failures(loop.run_until_complete(pending))

                return lambda: _timed(run, ASYNC_CALLS)

            results = _alternate(
                {name: batch(name) for name in _ASYNC if name not in _SLOW}, 3 * rounds
            )
            results |= _alternate({name: batch(name) for name in _SLOW}, rounds)
        finally:
            loop.close()
        peaks = _peaks(list(_ASYNC), url, api_key, memory)

    def versus(sdk: str, raw: str, label: str, target: float | None) -> Throughput:
        backend = sdk.split()[1]
        return Throughput(
            case=f"7. {ASYNC_CALLS} concurrent list_pets, {CONNECTIONS} conns, {backend}",
            baseline=label,
            sdk=tuple(results[sdk]),
            base=tuple(results[raw]),
            peaks=None if peaks is None else (peaks[sdk], peaks[raw]),
            target=target,
        )

    return [
        versus("sdk aiohttp", "raw aiohttp typed", "aiohttp typed", 0.9),
        versus("sdk aiohttp", "raw aiohttp dicts", "aiohttp dicts", None),
        versus("sdk default", "raw httpx typed", "httpx typed", 1.0),
        versus("sdk default", "raw httpx gated", "httpx+semaphore", None),
    ] + (
        [versus("sdk httpx2", "raw httpx2 typed", "httpx2 typed", 0.95)]
        if "sdk httpx2" in _ASYNC
        else []
    )


def concurrent_threads(rounds: int, api_key: str, *, memory: bool = True) -> list[Throughput]:
    """Case 8: 16 threads sharing one ``Client``, 2,000 ``list_pets(limit=20)`` in all.

    Against a raw ``httpx.Client`` shared the same way, with the SDK's timeout.
    """
    with served_store(api_key) as url:

        def batch(name: str) -> Callable[[], Batch]:
            return lambda: _timed(lambda: _THREADED[name](url, api_key), THREAD_CALLS)

        results = _alternate({name: batch(name) for name in _THREADED}, rounds)
        peaks = _peaks(list(_THREADED), url, api_key, memory)
    return [
        Throughput(
            case=f"8. {THREADS} threads, one Client, {THREAD_CALLS} list_pets",
            baseline="httpx typed",
            sdk=tuple(results["sdk"]),
            base=tuple(results["raw"]),
            peaks=None if peaks is None else (peaks["sdk"], peaks["raw"]),
            target=0.95,
        )
    ]
