"""Which event loop is running: asyncio's or trio's, told apart without importing either.

``AsyncClient`` runs on both with its httpx backend. What belongs to one loop (a connection
pool, the connection gate's semaphore) is keyed by ``current_loop()``; waits go through
``sleep``, which sleeps the running library's way (``asyncio.sleep`` fails under trio).
"""

from __future__ import annotations

import sys

__all__ = ["current_loop", "refuse_trio", "sleep", "under_trio"]


def under_trio() -> bool:
    """Whether this code runs inside ``trio.run`` (trio is looked up, never imported)."""
    trio = sys.modules.get("trio")
    if trio is None:
        return False
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:
        return False
    return True


def current_loop() -> object:
    """Return what identifies the running loop: asyncio's loop, or the trio run's token.

    Raises:
        RuntimeError: no event loop is running.
    """
    if under_trio():
        return sys.modules["trio"].lowlevel.current_trio_token()
    import asyncio  # loaded by any running asyncio loop; kept out of the package's import

    return asyncio.get_running_loop()


async def sleep(delay: float) -> None:
    """Sleep ``delay`` seconds the running library's way."""
    if under_trio():
        await sys.modules["trio"].sleep(delay)
        return
    import asyncio

    await asyncio.sleep(delay)


def refuse_trio(what: str) -> None:
    """Raise a clear error if ``what`` (an aiohttp object) is about to be used under trio.

    Raises:
        RuntimeError: this runs inside ``trio.run``.
    """
    if under_trio():
        raise RuntimeError(
            f"{what} needs asyncio: aiohttp does not run under trio. Under trio, use "
            "AsyncClient's default (httpx) backend: leave out http_client, or pass an "
            "httpx.AsyncClient"
        )
