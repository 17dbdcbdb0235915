"""The SDK's own CPU cost on aiohttp, with the server's out of the way.

Run it as ``python -m tests.benchmarks.canned``.

Case 7 measures throughput against the built-in store in another process, which is the limit
on some machines and not on others, so the SDK's own cost shows more or less. Here an asyncio
server in the same process and on the same loop answers every request at once with the same
bytes (a page of 20 pets), and the process is held to one core: what differs between the
contenders is the client's work. 1,000 concurrent ``list_pets(limit=20)`` on
``DefaultAioHttpClient()`` against case 7's raw aiohttp loop, alternating, ``gc.collect()``
before each batch; the report is each one's CPU time a batch and their ratio.

To measure another revision of the SDK the same way, run this file by its path with that
revision's tree on the path: ``git worktree add /tmp/before REV``, then ``PYTHONPATH=/tmp/before
python tests/benchmarks/canned.py``. The first line printed says where the SDK came from.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable

import animalstore_client
from animalstore_client import AsyncClient, DefaultAioHttpClient
from tests.benchmarks.concurrency import LIMIT, _gather, _raw_aiohttp

CALLS = 1_000
_PETS = [{"id": i, "name": f"pet-{i}", "categoryId": i % 7, "status": "sold"} for i in range(LIMIT)]
_BODY = json.dumps(_PETS).encode()
_ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(_BODY)).encode()
    + b"\r\n\r\n"
    + _BODY
)


class _Canned(asyncio.Protocol):
    """Answers each request head it reads with the same page, at once."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._pending = b""

    def data_received(self, data: bytes) -> None:
        self._pending += data
        heads = self._pending.count(b"\r\n\r\n")  # the SDK's GETs have no body
        if heads:
            self._pending = self._pending[self._pending.rfind(b"\r\n\r\n") + 4 :]
            self._transport.write(_ANSWER * heads)


async def _sdk(url: str) -> list[object]:
    async with (
        DefaultAioHttpClient() as http,
        AsyncClient(api_key="k", base_url=url, http_client=http) as sdk,
    ):
        return await _gather(lambda: sdk.list_pets(limit=LIMIT), CALLS)


async def _raw(url: str) -> list[object]:
    return await _raw_aiohttp(url, "k", CALLS)


async def _measure(rounds: int) -> dict[str, list[float]]:
    server = await asyncio.get_running_loop().create_server(_Canned, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
    contenders: dict[str, Callable[[str], Awaitable[list[object]]]] = {"sdk": _sdk, "raw": _raw}
    try:
        for contender in contenders.values():
            answers = await contender(url)
            if any(isinstance(answer, BaseException) for answer in answers):
                raise AssertionError(f"calls failed: {answers[:3]!r}")
        seconds: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for round_number in range(rounds):
            for name in reversed(names) if round_number % 2 else names:
                gc.collect()
                started = time.process_time()
                await contenders[name](url)
                seconds[name].append(time.process_time() - started)
        return seconds
    finally:
        server.close()


def main() -> None:
    """Run the rounds and print each contender's CPU time a batch and their ratio."""
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.canned", description=__doc__)
    parser.add_argument("--rounds", type=int, default=30, help="alternating rounds (30)")
    rounds = parser.parse_args().rounds
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    seconds = asyncio.run(_measure(rounds))
    ratios = sorted(sdk / raw for sdk, raw in zip(seconds["sdk"], seconds["raw"], strict=True))
    print(f"# SDK from {os.path.dirname(animalstore_client.__file__)}; {rounds} rounds")
    for name, batches in seconds.items():
        print(f"{name}: {statistics.median(batches) * 1000:.1f} ms CPU a batch of {CALLS:,}")
    quartiles = statistics.quantiles(ratios, n=4)
    print(f"sdk / raw: {statistics.median(ratios):.3f}x [{quartiles[0]:.3f}-{quartiles[2]:.3f}]")


if __name__ == "__main__":
    main()
