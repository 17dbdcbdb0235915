"""The backends: everything that knows an HTTP library, and the one place that picks one.

One module per library family (``httpx`` for httpx and httpx2, ``aiohttp``), beside the
pools, the connection gate and the default clients. A backend sends the core's ``Request``
with its library's public API, reads the body through the core's ``BodyReader`` and reports
an ``Answer`` or a ``SendFailure``; it decides nothing. Libraries are looked up in
``sys.modules``, never imported here: if one is not loaded, no object of it can be passed in.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import aiohttp
    import httpx
    import httpx2

    from animalstore_client._backends.pool import AsyncPool, BorrowedPool, SyncPool
    from animalstore_client._core.wire import AsyncSender, SyncSender

    #: What ``Client(http_client=...)`` accepts.
    SyncHttpClient: TypeAlias = httpx.Client | httpx2.Client
    #: What ``AsyncClient(http_client=...)`` accepts.
    AsyncHttpClient: TypeAlias = httpx.AsyncClient | httpx2.AsyncClient | aiohttp.ClientSession
else:  # at run time, the clients' generic base names them without importing the libraries
    SyncHttpClient = AsyncHttpClient = object

__all__ = ["AsyncHttpClient", "SyncHttpClient", "async_pool", "default_timeout", "sync_pool"]

#: The httpx family's libraries, in the order they are tried (the same module, under
#: ``httpx2.alias_httpx()``).
_FAMILY = ("httpx", "httpx2")


def _httpx_family(http_client: object, class_name: str) -> Any:
    """Return the httpx-family module whose ``class_name`` ``http_client`` is, if any."""
    for name in _FAMILY:
        lib = sys.modules.get(name)
        if lib is not None and isinstance(http_client, getattr(lib, class_name)):
            return lib
    return None


def _refused(http_client: object, accepted: str, twin: str) -> TypeError:
    """Return the error for an ``http_client`` of the wrong kind: accepted, and given.

    ``twin`` is the other SDK client, which takes an httpx-family client of the other class.
    """
    cls = type(http_client)
    got = f"{cls.__module__.partition('.')[0]}.{cls.__qualname__}"
    if _httpx_family(http_client, twin):
        got += f", which {twin} takes"
    return TypeError(f"http_client must be {accepted}; got {got}")


def sync_pool(http_client: object) -> SyncPool | BorrowedPool[SyncSender]:
    """Return the pool for a ``Client`` given ``http_client`` (``None``: the SDK's own).

    Raises:
        TypeError: ``http_client`` is not an ``httpx.Client`` or ``httpx2.Client``.
    """
    # The pools and the senders are imported with the first client, not with the package.
    from animalstore_client._backends.httpx import SyncHttpxSender, family
    from animalstore_client._backends.pool import BorrowedPool, SyncPool

    if http_client is None:
        return SyncPool()
    lib = _httpx_family(http_client, "Client")
    if lib is None:
        raise _refused(
            http_client,
            "an httpx.Client or an httpx2.Client",
            "AsyncClient",
        )
    return BorrowedPool(SyncHttpxSender(http_client, family(lib)))


def async_pool(http_client: object) -> AsyncPool | BorrowedPool[AsyncSender]:
    """Return the pool for an ``AsyncClient`` given ``http_client`` (``None``: the SDK's own).

    Raises:
        TypeError: ``http_client`` is not an ``httpx.AsyncClient``, ``httpx2.AsyncClient`` or
            ``aiohttp.ClientSession``.
        RuntimeError: an aiohttp session under trio.
    """
    from animalstore_client._backends.httpx import AsyncHttpxSender, family
    from animalstore_client._backends.pool import AsyncPool, BorrowedPool

    if http_client is None:
        return AsyncPool()
    lib = _httpx_family(http_client, "AsyncClient")
    if lib is not None:
        return BorrowedPool(AsyncHttpxSender(http_client, family(lib)))
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None and isinstance(http_client, aiohttp.ClientSession):
        from animalstore_client._backends.eventloop import refuse_trio

        refuse_trio("an AsyncClient on aiohttp")
        from animalstore_client._backends.aiohttp import AiohttpSender

        return BorrowedPool(AiohttpSender(http_client))
    raise _refused(
        http_client,
        "an httpx.AsyncClient, an httpx2.AsyncClient or an aiohttp.ClientSession",
        "Client",
    )


def default_timeout(http_client: object) -> object:
    """Return the timeout of an httpx-family ``http_client``, or ``None`` for any other.

    What a client uses when its ``timeout`` is omitted: the one the user gave their client.
    """
    lib = _httpx_family(http_client, "Client") or _httpx_family(http_client, "AsyncClient")
    return None if lib is None else getattr(http_client, "timeout", None)
