"""An httpx transport, sync and async in one class, that answers from a ``FakeAnimalStore``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    from animalstore_client.testing._store import FakeAnimalStore, RawResponse

__all__ = ["FakeTransport"]


class FakeTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Answers httpx requests from a :class:`FakeAnimalStore`, without any socket.

    Pass it as ``transport=`` to ``httpx.Client`` or ``httpx.AsyncClient``; get one from
    :meth:`FakeAnimalStore.transport`.

    Args:
        store: the store that answers the requests.
    """

    def __init__(self, store: FakeAnimalStore) -> None:
        self._store = store

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answer one request from a sync ``httpx.Client``.

        Args:
            request: the request to answer; its body is read in full.

        Returns:
            The store's response, with its body already loaded.
        """
        return _to_httpx(self._store_handle(request, request.read()))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer one request from an ``httpx.AsyncClient``.

        Args:
            request: the request to answer; its body is read in full.

        Returns:
            The store's response, with its body already loaded.
        """
        return _to_httpx(self._store_handle(request, await request.aread()))

    def _store_handle(self, request: httpx.Request, body: bytes) -> RawResponse:
        return self._store.handle(
            request.method,
            request.url.path,
            request.url.query.decode("ascii"),
            request.headers,
            body,
        )


def _to_httpx(response: RawResponse) -> httpx.Response:
    status, headers, body = response
    return httpx.Response(status, headers=headers, content=body)
