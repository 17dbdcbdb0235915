"""The benchmark cases: the SDK against raw httpx doing the same work by hand.

Two baselines for every call: ``raw dicts`` is httpx plus ``json.loads`` (what a user could
write instead of using an SDK); ``raw typed`` adds a hand-written loop that checks every field's
type as strictly as the SDK does and builds the very same ``Pet`` objects (what a typed client
written by hand with httpx's everyday calls costs). Both send the same headers as the SDK.
Case 10 puts the SDK against the leanest httpx code instead, on the smallest answer, so that
what the SDK itself adds to a call is most of what differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import httpx
from attrs import frozen

from animalstore_client import (
    DEFAULT_CONNECTION_LIMITS,
    DEFAULT_TIMEOUT,
    AsyncClient,
    Client,
    Pet,
    PetList,
    PetStatus,
    PetStatusLiteral,
    WireFormatError,
)
from animalstore_client._core.converter import structure
from animalstore_client.testing import FakeAnimalStore
from tests.benchmarks._harness import HEADER, Comparison, compare, compare_async
from tests.benchmarks.bulk import bulk_create
from tests.benchmarks.bulk import sizes as bulk_sizes
from tests.benchmarks.concurrency import concurrent_async, concurrent_threads

__all__ = ["Settings", "Verdict", "run_all"]

API_KEY = "bench-key"
BASE_URL = "http://bench.test/v1"
#: The headers the SDK sends (Accept, Accept-Encoding, User-Agent, Authorization), sent by
#: every baseline too.
HEADERS = dict(Client(api_key=API_KEY)._options.headers)
STATUSES: tuple[PetStatusLiteral, ...] = ("available", "pending", "sold")
WIRE_PETS = [
    {"id": i, "name": f"pet-{i}", "categoryId": i % 7, "status": STATUSES[i % 3]}
    for i in range(1, 101)
]
PAGE = json.dumps(WIRE_PETS).encode()
ONE_PET_PAGE = json.dumps(WIRE_PETS[:1]).encode()
#: Case 12's answer: the page of 100 pets in gzip (about 1 KB on the wire, 6 KB decoded).
GZIP_PAGE = gzip.compress(PAGE)
CREATED = json.dumps(WIRE_PETS[0]).encode()
_KNOWN_STATUSES = {status.value: status for status in PetStatus}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Settings:
    """How much work each case does: the full run, or the quick one CI uses."""

    def __init__(self, *, quick: bool) -> None:
        self.quick = quick
        # The in-process cases are cheap: as many rounds as the full run, fewer calls each.
        self.rounds = 15
        self.calls = 100 if quick else 400
        self.socket_calls = 200 if quick else 2000
        self.socket_rounds = 7 if quick else 9
        self.concurrency = 200
        # Cases 7 and 8: each round is a whole batch (1,000 or 2,000 calls) per contender.
        self.concurrency_rounds = 3 if quick else 5
        self.imports = 10 if quick else 30
        self.bulk_rounds, self.bulk_records = bulk_sizes(quick=quick)
        # Case 9: each call parses 2 MB (a tenth of a second or so).
        self.big_rounds = 7 if quick else 15
        self.big_calls = 1 if quick else 3


def hand_pet(item: Any) -> Pet:
    """Build a Pet from a wire dict with the same strictness as the SDK, by hand."""
    if type(item) is not dict:
        raise ValueError("expected an object")
    pet_id, name, category_id = item["id"], item["name"], item["categoryId"]
    status = item.get("status")
    if type(pet_id) is not int or not INT64_MIN <= pet_id <= INT64_MAX:
        raise ValueError("id")
    if type(name) is not str:
        raise ValueError("name")
    if type(category_id) is not int or not INT64_MIN <= category_id <= INT64_MAX:
        raise ValueError("categoryId")
    if status is not None:
        if type(status) is not str:
            raise ValueError("status")
        status = _KNOWN_STATUSES.get(status, status)
    return Pet(id=pet_id, name=name, category_id=category_id, status=status)


def hand_pets(items: Any) -> list[Pet]:
    """Build a page of Pets by hand, as strictly as the SDK."""
    if type(items) is not list:
        raise ValueError("expected an array")
    return [hand_pet(item) for item in items]


def libraries() -> list[ModuleType]:
    """The httpx family's libraries the cases run on: httpx, and httpx2 where installed."""
    try:
        import httpx2
    except ImportError:  # Python 3.10, or the extra not installed
        return [httpx]
    return [httpx, httpx2]


def _on(lib: ModuleType) -> str:
    """What a case's name says of the library: nothing for httpx, the default."""
    return "" if lib is httpx else f", {lib.__name__}"


@functools.cache
def _fixed_transport_class(lib: ModuleType) -> type[Any]:
    class FixedTransport(lib.BaseTransport, lib.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        """Answers every request with the same status and body, in process: pure CPU cost."""

        def __init__(self, status: int, body: bytes, headers: dict[str, str] | None) -> None:
            self._status, self._body, self._headers = status, body, headers

        def handle_request(self, request: Any) -> Any:
            if self._headers is None:
                return lib.Response(
                    self._status, headers={"content-type": "application/json"}, content=self._body
                )
            # A stream, as a socket's answer is: a response made from bytes is read (and
            # decoded) by httpx at once, and the SDK would only see what httpx decoded.
            return lib.Response(
                self._status, headers=self._headers, stream=lib.ByteStream(self._body)
            )

        async def handle_async_request(self, request: Any) -> Any:
            return self.handle_request(request)

    return FixedTransport


def FixedTransport(
    status: int, body: bytes, lib: ModuleType = httpx, *, encoding: str | None = None
) -> Any:
    """An in-process transport of ``lib`` answering every request with ``status`` and ``body``
    (coded in ``encoding``, if given, said so in ``Content-Encoding`` and streamed)."""
    headers = None
    if encoding is not None:
        headers = {
            "content-type": "application/json",
            "content-encoding": encoding,
            "content-length": str(len(body)),
        }
    return _fixed_transport_class(lib)(status, body, headers)


def _raw_list(client: httpx.Client, url: str) -> Any:
    response = client.get(url, params={"limit": 100}, headers=HEADERS)
    response.raise_for_status()
    return json.loads(response.content)


async def _raw_list_async(client: httpx.AsyncClient, url: str) -> Any:
    response = await client.get(url, params={"limit": 100}, headers=HEADERS)
    response.raise_for_status()
    return json.loads(response.content)


def _raw_create(client: httpx.Client) -> Any:
    body = {"name": "Rex", "categoryId": 3, "status": "available"}
    headers = {**HEADERS, "Idempotency-Key": str(uuid.uuid4())}
    response = client.post(f"{BASE_URL}/pets", json=body, headers=headers)
    response.raise_for_status()
    return json.loads(response.content)


def _check(sdk_result: object, typed_result: object) -> None:
    # A benchmark of two things that do different work would measure nothing.
    if sdk_result != typed_result:
        raise AssertionError(f"SDK and baseline disagree: {sdk_result!r} != {typed_result!r}")


def list_in_process(settings: Settings, lib: ModuleType = httpx) -> list[Comparison]:
    """Case 1, sync: ``list_pets(limit=100)`` through an in-process transport of ``lib``."""
    transport = FixedTransport(200, PAGE, lib)
    raw = lib.Client(transport=transport)
    with Client(
        api_key=API_KEY, base_url=BASE_URL, http_client=lib.Client(transport=transport)
    ) as sdk:
        url = f"{BASE_URL}/pets"
        _check(sdk.list_pets(limit=100), hand_pets(_raw_list(raw, url)))
        return compare(
            f"1. list_pets(limit=100), in process, sync{_on(lib)}",
            lambda: sdk.list_pets(limit=100),
            {
                "raw dicts": (lambda: _raw_list(raw, url), None),
                "raw typed": (lambda: hand_pets(_raw_list(raw, url)), 1.05),
            },
            rounds=settings.rounds,
            number=settings.calls,
        )


def list_in_process_async(settings: Settings, lib: ModuleType = httpx) -> list[Comparison]:
    """Case 1, async: ``list_pets(limit=100)`` through an in-process transport of ``lib``."""
    transport = FixedTransport(200, PAGE, lib)
    loop = asyncio.new_event_loop()
    raw = lib.AsyncClient(transport=transport)
    sdk = AsyncClient(
        api_key=API_KEY, base_url=BASE_URL, http_client=lib.AsyncClient(transport=transport)
    )
    url = f"{BASE_URL}/pets"

    async def typed() -> list[Pet]:
        return hand_pets(await _raw_list_async(raw, url))

    try:
        _check(loop.run_until_complete(sdk.list_pets(limit=100)), loop.run_until_complete(typed()))
        return compare_async(
            f"1. list_pets(limit=100), in process, async{_on(lib)}",
            lambda: sdk.list_pets(limit=100),
            {"raw dicts": (lambda: _raw_list_async(raw, url), None), "raw typed": (typed, 1.05)},
            rounds=settings.rounds,
            number=settings.calls,
            loop=loop,
        )
    finally:
        loop.close()


def gzip_in_process(settings: Settings, lib: ModuleType = httpx) -> list[Comparison]:
    """Case 12: ``list_pets(limit=100)`` answered in gzip, sync and async, on ``lib``.

    The SDK reads the raw body and decodes it itself (``_core.decoding``); the baseline lets
    httpx decode it, as a hand-written client does.
    """
    transport = FixedTransport(200, GZIP_PAGE, lib, encoding="gzip")
    raw, raw_async = lib.Client(transport=transport), lib.AsyncClient(transport=transport)
    loop = asyncio.new_event_loop()
    sdk_async = AsyncClient(
        api_key=API_KEY, base_url=BASE_URL, http_client=lib.AsyncClient(transport=transport)
    )
    url = f"{BASE_URL}/pets"

    async def typed() -> list[Pet]:
        return hand_pets(await _raw_list_async(raw_async, url))

    with Client(
        api_key=API_KEY, base_url=BASE_URL, http_client=lib.Client(transport=transport)
    ) as sdk:
        try:
            _check(sdk.list_pets(limit=100), hand_pets(_raw_list(raw, url)))
            _check(
                loop.run_until_complete(sdk_async.list_pets(limit=100)),
                loop.run_until_complete(typed()),
            )
            return compare(
                f"12. list_pets(limit=100), gzip, in process, sync{_on(lib)}",
                lambda: sdk.list_pets(limit=100),
                {"raw typed": (lambda: hand_pets(_raw_list(raw, url)), 1.05)},
                rounds=settings.rounds,
                number=settings.calls,
            ) + compare_async(
                f"12. list_pets(limit=100), gzip, in process, async{_on(lib)}",
                lambda: sdk_async.list_pets(limit=100),
                {"raw typed": (typed, 1.05)},
                rounds=settings.rounds,
                number=settings.calls,
                loop=loop,
            )
        finally:
            loop.run_until_complete(sdk_async.aclose())
            loop.close()


def _lean_list(client: Any, url: Any) -> list[Pet]:
    response = client.send(client.build_request("GET", url, headers=HEADERS))
    response.raise_for_status()
    return hand_pets(json.loads(response.content))


async def _lean_list_async(client: Any, url: Any) -> list[Pet]:
    response = await client.send(client.build_request("GET", url, headers=HEADERS))
    response.raise_for_status()
    return hand_pets(json.loads(response.content))


@contextlib.contextmanager
def in_process_clients() -> Iterator[tuple[Client, AsyncClient, asyncio.AbstractEventLoop]]:
    """Case 10's clients without options (sync, async) and a loop for the async one.

    For what an opt-in feature costs a call (``tests.benchmarks.tracing``, ``.middleware``):
    each of its rows compares a copy of these, made by ``with_options``, with them. All are
    closed on exit.
    """
    transport = FixedTransport(200, ONE_PET_PAGE)
    loop = asyncio.new_event_loop()
    sync = Client(api_key=API_KEY, base_url=BASE_URL, http_client=httpx.Client(transport=transport))
    async_ = AsyncClient(
        api_key=API_KEY, base_url=BASE_URL, http_client=httpx.AsyncClient(transport=transport)
    )
    try:
        yield sync, async_, loop
    finally:
        sync.close()
        loop.run_until_complete(async_.aclose())
        loop.close()


def report(prog: str, description: str, measure: Callable[[Settings], list[Comparison]]) -> None:
    """Run one opt-in feature's comparison (``--quick`` for fewer calls) and print its rows."""
    import argparse

    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--quick", action="store_true", help="fewer calls per round")
    settings = Settings(quick=parser.parse_args().quick)
    print(HEADER)
    for result in measure(settings):
        print(result.row())


def per_call_work(settings: Settings, lib: ModuleType = httpx) -> list[Comparison]:
    """Case 10: what the SDK adds to a call, sync and async: ``list_pets(limit=1)``, one pet.

    Through an in-process transport, against the leanest httpx code that makes the same call
    and builds the same ``Pet``: its URL parsed once, ``build_request`` and ``send``, the
    body's one element checked by hand. On this answer the SDK's own work (checking the
    arguments, the retry loop, reading within the cap, parsing) is a large share of the call,
    so this is the row a slower SDK misses first: ``--inject-us 15`` adds about a fifth.
    """
    transport = FixedTransport(200, ONE_PET_PAGE, lib)
    url = lib.URL(f"{BASE_URL}/pets", params={"limit": 1})
    raw, raw_async = lib.Client(transport=transport), lib.AsyncClient(transport=transport)
    loop = asyncio.new_event_loop()
    sdk_async = AsyncClient(
        api_key=API_KEY, base_url=BASE_URL, http_client=lib.AsyncClient(transport=transport)
    )
    with Client(
        api_key=API_KEY, base_url=BASE_URL, http_client=lib.Client(transport=transport)
    ) as sdk:
        try:
            _check(sdk.list_pets(limit=1), _lean_list(raw, url))
            _check(
                loop.run_until_complete(sdk_async.list_pets(limit=1)),
                loop.run_until_complete(_lean_list_async(raw_async, url)),
            )
            return compare(
                f"10. list_pets(limit=1), in process, sync{_on(lib)}",
                lambda: sdk.list_pets(limit=1),
                {f"leanest {lib.__name__}": (lambda: _lean_list(raw, url), 1.25)},
                rounds=settings.rounds,
                number=settings.calls * 2,
            ) + compare_async(
                f"10. list_pets(limit=1), in process, async{_on(lib)}",
                lambda: sdk_async.list_pets(limit=1),
                {f"leanest {lib.__name__}": (lambda: _lean_list_async(raw_async, url), 1.25)},
                rounds=settings.rounds,
                number=settings.calls * 2,
                loop=loop,
            )
        finally:
            loop.run_until_complete(sdk_async.aclose())
            loop.close()


def _count_connections(settings: Settings, store: FakeAnimalStore) -> dict[str, int]:
    """Count, at the server, the TCP connections each contender opens over one whole run.

    The SDK's own pool (no ``http_client``), against a plain ``httpx.Client``: each talks to a
    recording server of its own in front of the same store.
    """
    from tests.reliability.faultserver import FaultServer, Forward

    opened: dict[str, int] = {}
    for name in ("sdk", "raw"):
        with FaultServer(default=Forward(store)) as server:
            if name == "sdk":
                with Client(api_key=API_KEY, base_url=server.base_url) as sdk:
                    for _ in range(settings.socket_calls):
                        sdk.list_pets(limit=100)
            else:
                with httpx.Client() as raw:
                    for _ in range(settings.socket_calls):
                        _raw_list(raw, f"{server.base_url}/pets")
            assert len(server.requests) == settings.socket_calls
            opened[name] = len({request.connection for request in server.requests})
    return opened


def list_over_socket(settings: Settings) -> tuple[list[Comparison], dict[str, int]]:
    """Case 2: ``list_pets(limit=100)`` over the real-socket reference store, sequential calls."""
    store = FakeAnimalStore(api_keys=[API_KEY])
    for i in range(100):
        store.add_pet(f"pet-{i}", i % 7, STATUSES[i % 3])
    with store.serve() as url, httpx.Client() as raw, Client(api_key=API_KEY, base_url=url) as sdk:
        pets_url = f"{url}/pets"
        _check(sdk.list_pets(limit=100), hand_pets(_raw_list(raw, pets_url)))
        calls = range(settings.socket_calls)
        results = compare(
            f"2. list_pets(limit=100), socket, {settings.socket_calls} sequential",
            lambda: [sdk.list_pets(limit=100) for _ in calls],
            {
                "raw dicts": (lambda: [_raw_list(raw, pets_url) for _ in calls], None),
                "raw typed": (lambda: [hand_pets(_raw_list(raw, pets_url)) for _ in calls], 1.05),
            },
            rounds=settings.socket_rounds,
            number=1,
        )
    return results, _count_connections(settings, store)


def create_in_process(settings: Settings) -> list[Comparison]:
    """Case 3: ``create_pet`` round trip through an in-process transport."""
    transport = FixedTransport(201, CREATED)
    raw = httpx.Client(transport=transport)
    with Client(
        api_key=API_KEY, base_url=BASE_URL, http_client=httpx.Client(transport=transport)
    ) as sdk:

        def call() -> Pet:
            return sdk.create_pet(name="Rex", category_id=3, status=PetStatus.AVAILABLE)

        _check(call(), hand_pet(_raw_create(raw)))
        return compare(
            "3. create_pet, in process",
            call,
            {
                "raw dicts": (lambda: _raw_create(raw), None),
                "raw typed": (lambda: hand_pet(_raw_create(raw)), 1.05),
            },
            rounds=settings.rounds,
            number=settings.calls * 4,
        )


def concurrent_over_socket(settings: Settings) -> list[Comparison]:
    """Case 4: ``AsyncClient``, 200 concurrent ``list_pets(limit=100)`` over the real socket.

    The targeted rows compare the same work on the same pool: the SDK sends through a plain
    ``httpx.AsyncClient`` built like the raw one. A last row, with no target, puts the SDK's
    default backend against the raw client: its connection gate (``DefaultAsyncHttpxClient``)
    is another way to queue, which pays off at 1,000 calls in flight (case 7), not at 200.
    Each SDK client is closed before the next is built: in trials with three or more pools of
    100 connections open at once, every batch took several times longer, whoever sent it.
    """
    store = FakeAnimalStore(api_keys=[API_KEY])
    for i in range(100):
        store.add_pet(f"pet-{i}", i % 7, STATUSES[i % 3])
    loop = asyncio.new_event_loop()
    name = f"4. {settings.concurrency} concurrent list_pets, socket, async"
    with store.serve() as url:
        raw = httpx.AsyncClient(limits=DEFAULT_CONNECTION_LIMITS, timeout=DEFAULT_TIMEOUT)
        pets_url = f"{url}/pets"

        async def raw_batch() -> list[Any]:
            calls = [_raw_list_async(raw, pets_url) for _ in range(settings.concurrency)]
            return await asyncio.gather(*calls)

        async def typed_batch() -> list[list[Pet]]:
            return [hand_pets(page) for page in await raw_batch()]

        def measure(sdk: AsyncClient, case: str, baselines: dict[str, Any]) -> list[Comparison]:
            async def sdk_batch() -> list[list[Pet]]:
                return await asyncio.gather(
                    *(sdk.list_pets(limit=100) for _ in range(settings.concurrency))
                )

            try:
                _check(loop.run_until_complete(sdk_batch()), loop.run_until_complete(typed_batch()))
                return compare_async(
                    case, sdk_batch, baselines, rounds=settings.socket_rounds, number=1, loop=loop
                )
            finally:
                loop.run_until_complete(sdk.aclose())

        try:
            same_pool = httpx.AsyncClient(limits=DEFAULT_CONNECTION_LIMITS, timeout=DEFAULT_TIMEOUT)
            results = measure(
                AsyncClient(api_key=API_KEY, base_url=url, http_client=same_pool),
                name,
                {"raw dicts": (raw_batch, None), "raw typed": (typed_batch, 1.05)},
            )
            loop.run_until_complete(same_pool.aclose())
            return results + measure(
                AsyncClient(api_key=API_KEY, base_url=url),
                f"{name}, default backend",
                {"raw typed": (typed_batch, None)},
            )
        finally:
            loop.run_until_complete(raw.aclose())
            loop.close()


def structuring(settings: Settings) -> list[Comparison]:
    """Case 5: structuring alone, 100 wire-format pets into ``Pet`` objects."""
    _check(structure(WIRE_PETS, list[Pet]), hand_pets(WIRE_PETS))
    return compare(
        "5. structure 100 pets",
        lambda: structure(WIRE_PETS, list[Pet]),
        {"hand-written": (lambda: hand_pets(WIRE_PETS), 1.3)},
        rounds=settings.rounds,
        number=settings.calls * 4,
    )


def _list_of(item: object, size: int) -> bytes:
    """A JSON array of copies of ``item``, as many as make about ``size`` bytes."""
    count = size // (len(json.dumps(item)) + 2)
    return json.dumps([item] * count).encode()


def _parse_invalid(body: bytes) -> str:
    """Parse a body that does not fit ``list[Pet]``; return the message it gives."""
    try:
        structure(json.loads(body), PetList)
    except WireFormatError as exc:
        return str(exc)
    raise AssertionError("an invalid body was parsed")


def invalid_body(settings: Settings) -> list[Comparison]:
    """Case 9: decoding and structuring a 2 MB list that does not fit, against a valid one.

    Two invalid shapes: every element bad (``{}``, which once cost 80 s and 3.8 GB), and only
    the last one bad (the check reads every good element again before it finds it). The
    valid baseline is 2 MB of pets, decoded and structured the same way.
    """
    size = 2 * 1024 * 1024
    valid = _list_of(WIRE_PETS[0], size)
    pets = json.loads(valid)
    pets[-1] = {**pets[-1], "categoryId": "7"}
    shapes = {"every element {}": _list_of({}, size), "the last one bad": json.dumps(pets).encode()}
    results: list[Comparison] = []
    for shape, body in shapes.items():
        assert abs(len(body) - len(valid)) < 100, "the bodies must be the same size"
        _parse_invalid(body)
        results += compare(
            f"9. parse 2 MB invalid list, {shape}",
            functools.partial(_parse_invalid, body),
            {"2 MB valid list": (lambda: structure(json.loads(valid), PetList), 2.0)},
            rounds=settings.big_rounds,
            number=settings.big_calls,
        )
    return results


# Peak memory as VmHWM, which starts afresh at exec; ru_maxrss would carry over the size of
# the forked benchmark process itself.
_IMPORT_PROBE = (
    "{}; print(next(int(line.split()[1]) for line in open('/proc/self/status') "
    "if line.startswith('VmHWM:')))"
)


def _import_once(statement: str) -> tuple[float, int]:
    # -I: the installed package, with its compiled bytecode, not the source tree; a fresh
    # process each time, from a folder holding nothing importable.
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-I", "-c", _IMPORT_PROBE.format(statement)],
            capture_output=True,
            text=True,
            check=True,
            cwd=folder,
        )
        elapsed = time.perf_counter() - started
    return elapsed, int(result.stdout)


def import_cost(settings: Settings) -> tuple[list[Comparison], dict[str, int]]:
    """Case 6: ``import animalstore_client`` against ``import httpx, attrs, cattrs``."""
    sdk, base = "import animalstore_client", "import httpx, attrs, cattrs"
    pairs: list[tuple[float, float]] = []
    memory: dict[str, list[int]] = {sdk: [], base: []}
    for round_number in range(settings.imports):
        timings = {}
        for statement in (sdk, base) if round_number % 2 == 0 else (base, sdk):
            timings[statement], peak = _import_once(statement)
            memory[statement].append(peak)
        pairs.append((timings[sdk], timings[base]))
    results = [
        Comparison(
            case="6. import animalstore_client (process)",
            baseline="httpx,attrs,cattrs",
            sdk_seconds=statistics.median(s for s, _ in pairs),
            baseline_seconds=statistics.median(b for _, b in pairs),
            ratios=tuple(s / b for s, b in pairs),
            target=1.10,
        )
    ]
    peaks = {name: int(statistics.median(values)) for name, values in memory.items()}
    return results, {"sdk_kib": peaks[sdk], "baseline_kib": peaks[base]}


@frozen
class Verdict:
    """What a run showed against the targets."""

    #: One line per target missed, saying by how much and whether within the noise.
    misses: tuple[str, ...]
    #: The targets missed beyond the spread measured between rounds (or with no ratio at all:
    #: failed calls, a wrong connection count), known misses left out.
    beyond_noise: frozenset[str]


def run_all(settings: Settings, report: Callable[[str], None]) -> Verdict:
    """Run every case, report each line as it comes, and return what missed its target."""
    comparisons: list[Comparison] = []
    facts: list[str] = []
    hard_misses: dict[str, str] = {}  # target -> what happened

    def add(results: list[Comparison]) -> None:
        for result in results:
            report(result.row())
        comparisons.extend(results)

    for lib in libraries():
        for on_lib in (list_in_process, list_in_process_async, per_call_work, gzip_in_process):
            add(on_lib(settings, lib))
    for case in (create_in_process, structuring, invalid_body):
        add(case(settings))
    socket_results, connections = list_over_socket(settings)
    add(socket_results)
    add(concurrent_over_socket(settings))
    for throughputs in (
        concurrent_async(settings.concurrency_rounds, API_KEY, memory=not settings.quick),
        concurrent_threads(settings.concurrency_rounds, API_KEY, memory=not settings.quick),
    ):
        add([throughput.comparison() for throughput in throughputs])
        for throughput in throughputs:
            facts.append(throughput.fact())
            if throughput.target is not None and throughput.sdk_failures:
                failed = f"{throughput.case}: SDK calls failed"
                hard_misses[failed] = f"{failed}: {throughput.sdk_failures}"
    bulk_results, bulk_facts = bulk_create(settings.bulk_rounds, records=settings.bulk_records)
    add([throughput.comparison() for throughput in bulk_results])
    facts.extend(bulk_facts.lines(bulk_results[0]))
    if not bulk_facts.memory_flat:
        hard_misses["case 11: flat memory"] = (
            f"case 11: the command's peak memory grew past 10% from 100 to "
            f"{bulk_facts.records:,} records"
        )
    import_results, memory = import_cost(settings)
    add(import_results)

    facts.append(
        f"case 2 TCP connections opened: SDK {connections['sdk']}, raw {connections['raw']}"
        " (target: exactly 1 each)"
    )
    facts.append(
        f"case 6 peak memory (VmHWM): SDK {memory['sdk_kib'] / 1024:.1f} MiB, "
        f"httpx+attrs+cattrs {memory['baseline_kib'] / 1024:.1f} MiB"
    )
    for fact in facts:
        report(fact)
    if connections != {"sdk": 1, "raw": 1}:
        hard_misses["case 2: one TCP connection"] = f"case 2 opened {connections}, not 1 each"
    ratio_misses = [
        f"{c.case} vs {c.baseline}: median {c.ratio:.3f}x, target <= {c.target:.3f}x "
        + ("(beyond the noise: even the first quartile misses)" if c.verdict == "MISSED" else
           f"(within the noise: first quartile {c.spread[0]:.3f}x)")
        for c in comparisons
        if c.target is not None and c.verdict != "ok"
    ]  # fmt: skip
    return Verdict(
        misses=(*hard_misses.values(), *ratio_misses),
        beyond_noise=frozenset(hard_misses).union(
            f"{c.case} vs {c.baseline}" for c in comparisons if not c.passed
        ),
    )


def machine() -> str:
    """Describe the machine the figures come from."""
    import platform

    return (
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, httpx {httpx.__version__}"
    )
