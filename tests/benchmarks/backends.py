"""The two async backends side by side, from one call at a time to 1,000 in flight.

``python -m tests.benchmarks.backends``: one ``AsyncClient`` on the default backend and one on
``DefaultAioHttpClient()``, both connected before timing, against the store served by a child
process; for each concurrency, batches of calls alternate between the two for six rounds and
the medians of calls per second are printed. Not part of ``--check``: it says when to pick which
backend, and no target applies.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from animalstore_client import AsyncClient, DefaultAioHttpClient
from tests.benchmarks.concurrency import LIMIT, served_store

API_KEY = "bench-key"
CONCURRENCY = (1, 10, 50, 100, 1000)
CALLS_PER_ROUND = 300
ROUNDS = 6


async def _rate(client: AsyncClient, concurrency: int) -> float:
    batches = max(1, CALLS_PER_ROUND // concurrency)
    started = time.perf_counter()
    for _ in range(batches):
        await asyncio.gather(*(client.list_pets(limit=LIMIT) for _ in range(concurrency)))
    return batches * concurrency / (time.perf_counter() - started)


async def _compare(url: str) -> None:
    async with (
        DefaultAioHttpClient() as http,
        AsyncClient(api_key=API_KEY, base_url=url, http_client=http) as on_aiohttp,
        AsyncClient(api_key=API_KEY, base_url=url) as on_httpx,
    ):
        clients = {"default": on_httpx, "aiohttp": on_aiohttp}
        for client in clients.values():
            await _rate(client, 100)  # connect, warm up
        for concurrency in CONCURRENCY:
            rates: dict[str, list[float]] = {name: [] for name in clients}
            for round_number in range(ROUNDS):
                names = list(clients) if round_number % 2 == 0 else list(reversed(clients))
                for name in names:
                    rates[name].append(await _rate(clients[name], concurrency))
            default, aiohttp = (statistics.median(rates[name]) for name in clients)
            print(
                f"{concurrency:>5} in flight: default {default:6,.0f} calls/s, "
                f"aiohttp {aiohttp:6,.0f} calls/s, aiohttp / default {aiohttp / default:.2f}x",
                flush=True,
            )


def main() -> None:
    """Serve the store, compare the backends, print one line per concurrency."""
    with served_store(API_KEY) as url:
        asyncio.run(_compare(url))


if __name__ == "__main__":
    main()
