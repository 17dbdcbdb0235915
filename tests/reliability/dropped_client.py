"""A client used once and dropped without closing, for ``test_resources.py``.

It runs in the test's process and in a ``-X dev -W error::ResourceWarning`` child: it imports
nothing but the SDK (not pytest, nor the suite's fixtures), so that the child starts in a
fraction of a second. ``python -m tests.reliability.dropped_client KIND BASE_URL`` prints
``done`` after it.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

from animalstore_client import (
    AsyncClient,
    Client,
    DefaultAioHttpClient,
    DefaultAsyncHttpx2Client,
    DefaultHttpx2Client,
)

#: The key the dropped clients send (the server does not check it).
API_KEY = "sk-dropped-client-0123456789"
#: The kinds whose SDK client is a ``Client``, as in ``tests/reliability/conftest.py``.
SYNC_KINDS = ("sync", "httpx2-sync")


def own_http_client(kind: str) -> Any:
    """The ``http_client`` a client of ``kind`` is given (``None`` on the default backends),
    as ``own_http_client`` in ``tests/reliability/conftest.py``; in a coroutine for aiohttp."""
    factories = {
        "aiohttp": DefaultAioHttpClient,
        "httpx2-sync": DefaultHttpx2Client,
        "httpx2-async": DefaultAsyncHttpx2Client,
    }
    return factories[kind]() if kind in factories else None


def use_and_drop(kind: str, base_url: str) -> None:
    """Build a client, make one call, and drop it without closing it.

    A user's own ``http_client`` (aiohttp, httpx2) is the caller's, closed by the caller; the
    SDK client on it is dropped.
    """
    if kind in SYNC_KINDS:
        http = own_http_client(kind)
        client = Client(api_key=API_KEY, base_url=base_url, http_client=http)
        assert client.list_pets() == []
        del client
        if http is not None:
            http.close()
    else:

        async def main() -> None:
            http = own_http_client(kind)
            client = AsyncClient(api_key=API_KEY, base_url=base_url, http_client=http)
            assert await client.list_pets() == []
            del client
            # The program goes on a little: a dropped async resource can only be cleaned up
            # by its event loop while that loop still runs.
            await asyncio.sleep(0.05)
            if http is not None:
                await (http.aclose() if hasattr(http, "aclose") else http.close())

        asyncio.run(main())
    gc.collect()


if __name__ == "__main__":
    use_and_drop(sys.argv[1], sys.argv[2])
    print("done")
