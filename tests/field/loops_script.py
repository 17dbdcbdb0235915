"""Run as a script by test_event_loops.py, so that what asyncio and the garbage collector print
at any time (and at exit) can be read from stderr. Warnings are all shown.

Usage: ``python -W always loops_script.py BASE_URL API_KEY SCENARIO``; prints one JSON object.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import sys
from typing import Any

from animalstore_client import AsyncClient

base_url, api_key, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
# In debug mode (-X dev) asyncio reports a step slower than 0.1 s, as any is on a loaded
# machine: how fast the steps are is not what the scenarios check.
logging.getLogger("asyncio").addFilter(
    lambda record: not record.getMessage().startswith("Executing ")
)


def new_client() -> AsyncClient:
    return AsyncClient(api_key, base_url=base_url, max_retries=0)


def dropped_after_its_loop_ended() -> dict[str, Any]:
    """Used in one asyncio.run, dropped while another loop runs."""
    client = new_client()
    asyncio.run(client.list_pets())

    async def drop() -> None:
        nonlocal client
        del client
        gc.collect()
        await asyncio.sleep(0.1)  # time for anything scheduled on this loop to run

    asyncio.run(drop())
    return {"ok": True}


def dropped_while_its_loop_runs() -> dict[str, Any]:
    """Used and dropped in one loop: its pool is closed there, without a word."""

    async def use_and_drop() -> bool:
        client = new_client()
        await client.list_pets()
        http = client._pool.http
        del client
        gc.collect()
        await asyncio.sleep(0.1)
        return bool(http.is_closed)

    return {"closed": asyncio.run(use_and_drop())}


def successive_loops_with_shutdown() -> dict[str, Any]:
    """A loop per test, as pytest-asyncio makes them: shut down properly, then closed."""
    client = new_client()
    closed_after_each = []
    for _ in range(3):
        loop = asyncio.new_event_loop()
        loop.run_until_complete(client.list_pets())
        http = client._pool.http
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        closed_after_each.append(http.is_closed)
    asyncio.run(client.aclose())
    return {"closed_after_each": closed_after_each}


if __name__ == "__main__":
    scenarios = {
        "dropped_after_its_loop_ended": dropped_after_its_loop_ended,
        "dropped_while_its_loop_runs": dropped_while_its_loop_runs,
        "successive_loops_with_shutdown": successive_loops_with_shutdown,
    }
    print(json.dumps(scenarios[scenario]()))
    sys.stdout.flush()
    gc.collect()
