"""An ``httpx.AsyncClient`` that holds requests beyond twice its pool's size in the client.

httpx's async pool rescans its whole queue, against every connection, whenever a connection
frees up, so with 1,000 requests queued for 100 connections it spends its time scanning
(encode/httpx issue 3215). Here at most twice ``max_connections`` requests are inside httpx at
a time; the others wait on an asyncio semaphore, which wakes them one by one, in order. Twice,
not once: a queue as long as the pool is still cheap for httpx, and handing each freed
connection straight to a queued request is faster than waking a waiter here first (measured:
with 200 calls in flight on 100 connections, holding beyond 100 cost 6 to 9%, beyond 200 nothing;
with 1,000 in flight both doubled the throughput). Imported when the first such client is
made, so that ``import animalstore_client`` does not import asyncio.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx

__all__ = ["ConnectionGate", "GatedAsyncClient"]


class ConnectionGate:
    """Admits at most ``size`` requests at a time, in order of arrival, per event loop.

    A client may be used from one event loop after another (two ``asyncio.run`` calls): each
    loop gets its own semaphore, made in it, so no waiter is ever bound to a closed loop.

    Args:
        size: how many requests may be inside at once.
    """

    __slots__ = ("_loop", "_semaphore", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore = asyncio.Semaphore(size)

    async def enter(self, request: httpx.Request) -> asyncio.Semaphore:
        """Wait for a place, for at most the request's ``pool`` timeout.

        Returns:
            The semaphore to ``release()`` once the request is done (the one of this loop).

        Raises:
            httpx.PoolTimeout: no place became free in time; nothing was sent.
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._semaphore = loop, asyncio.Semaphore(self.size)
        semaphore = self._semaphore
        if not semaphore.locked():
            await semaphore.acquire()  # free: returns at once
            return semaphore
        timeout = request.extensions.get("timeout", {}).get("pool")
        try:
            if sys.version_info >= (3, 11):
                async with asyncio.timeout(timeout):
                    await semaphore.acquire()
            else:  # pragma: no cover (3.10)
                await asyncio.wait_for(semaphore.acquire(), timeout)
        except asyncio.TimeoutError:  # TimeoutError itself from 3.11
            raise httpx.PoolTimeout(
                f"no connection became free within the pool timeout ({timeout} s)",
                request=request,
            ) from None
        return semaphore


class GatedAsyncClient(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` whose requests beyond twice ``max_connections`` wait in a gate.

    Built by ``DefaultAsyncHttpxClient``; it takes the arguments of ``httpx.AsyncClient``.
    A request sent with ``stream=True`` leaves the gate when ``send`` returns, before its
    body is read: such requests may then queue in httpx's pool as with plain httpx.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        limits: httpx.Limits | None = kwargs.get("limits")
        size = None if limits is None else limits.max_connections
        # A given transport has its own pool, whose size the limits do not describe.
        self._gate = None if size is None or "transport" in kwargs else ConnectionGate(2 * size)

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        """Send ``request`` once the gate lets it in; see ``httpx.AsyncClient.send``.

        Raises:
            httpx.PoolTimeout: the gate, then httpx's pool, did not let it in within the
                ``pool`` timeout (each).
            httpx.HTTPError: as ``httpx.AsyncClient.send``.
        """
        if self._gate is None:
            return await super().send(request, **kwargs)
        semaphore = await self._gate.enter(request)
        try:
            return await super().send(request, **kwargs)
        finally:
            semaphore.release()
