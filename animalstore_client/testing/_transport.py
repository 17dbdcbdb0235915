"""An httpx transport, sync and async in one class, that answers from a ``FakeAnimalStore``.

It carries out the store's plan for each request (see ``_faults.Plan``) as a network would
show it to httpx: a delay is a wait (cut short by the request's read timeout, which then
raises ``httpx.ReadTimeout``), a dropped connection is the error httpx raises for one, and a
truncated body fails while it is read.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import httpx

from animalstore_client.testing._faults import Answering, Plan

__all__ = ["FakeTransport"]

#: What httpx (through httpcore) says for a server that closes the connection unanswered, and
#: for a reset: both "maybe sent" to the SDK, as on a real socket.
_HUNG_UP = "Server disconnected without sending a response."
_RESET = "[Errno 104] Connection reset by peer"


class FakeTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Answers httpx requests from a :class:`FakeAnimalStore`, without any socket.

    Pass it as ``transport=`` to ``httpx.Client`` or ``httpx.AsyncClient``; get one from
    :meth:`FakeAnimalStore.transport`. Faults scripted with ``FakeAnimalStore.inject`` apply:
    a dropped connection raises ``httpx.RemoteProtocolError`` (``httpx.ReadError`` for a
    reset), as httpx does on a socket; a delay longer than the request's read timeout raises
    ``httpx.ReadTimeout`` once that timeout has passed.

    Args:
        store: the ``FakeAnimalStore`` that answers the requests.
    """

    def __init__(self, store: Answering) -> None:
        self._store = store

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answer one request from a sync ``httpx.Client``.

        Args:
            request: the request to answer; its body is read in full.

        Returns:
            The store's response; its body is loaded, unless a fault truncates it.

        Raises:
            httpx.RemoteProtocolError: a scripted fault dropped the connection.
            httpx.ReadError: a scripted fault reset the connection.
            httpx.ReadTimeout: a scripted delay outlasted the request's read timeout.
        """
        plan = self._plan(request, request.read())
        if plan.delay:
            time.sleep(_wait(plan, request))
        return _respond(plan, request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer one request from an ``httpx.AsyncClient``, under asyncio or trio.

        Args:
            request: the request to answer, as :meth:`handle_request` does.

        Returns:
            The store's response, as :meth:`handle_request`'s.

        Raises:
            httpx.TransportError: as :meth:`handle_request` raises.
        """
        plan = self._plan(request, await request.aread())
        if plan.delay:
            import anyio  # httpx's own dependency; needed only by a delay

            await anyio.sleep(_wait(plan, request))
        return _respond(plan, request)

    def _plan(self, request: httpx.Request, body: bytes) -> Plan:
        return self._store._exchange(
            request.method,
            request.url.path,
            request.url.query.decode("ascii"),
            request.headers,
            body,
        )


def _read_timeout(request: httpx.Request) -> float | None:
    timeout: dict[str, float | None] = request.extensions.get("timeout", {})
    return timeout.get("read")


def _wait(plan: Plan, request: httpx.Request) -> float:
    """How long to wait: the delay, or the read timeout when that comes first."""
    limit = _read_timeout(request)
    return plan.delay if limit is None else min(plan.delay, limit)


def _respond(plan: Plan, request: httpx.Request) -> httpx.Response:
    """Turn the plan, after its wait, into httpx's response or httpx's error."""
    limit = _read_timeout(request)
    if plan.delay and limit is not None and plan.delay > limit:
        raise httpx.ReadTimeout("timed out", request=request)
    if plan.response is None:
        if plan.reset:
            raise httpx.ReadError(_RESET, request=request)
        raise httpx.RemoteProtocolError(_HUNG_UP, request=request)
    status, headers, body = plan.response
    if not plan.truncate:
        return httpx.Response(status, headers=headers, content=body)
    return httpx.Response(status, headers=headers, stream=_Truncated(body, request))


class _Truncated(httpx.SyncByteStream, httpx.AsyncByteStream):
    """Half a body, then the error httpx raises when the peer closes before the rest."""

    def __init__(self, body: bytes, request: httpx.Request) -> None:
        self._part = body[: len(body) // 2]
        self._expected = len(body)
        self._request = request

    def _cut(self) -> httpx.RemoteProtocolError:
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body: "
            f"received {len(self._part)} bytes, expected {self._expected}",
            request=self._request,
        )

    def __iter__(self) -> Iterator[bytes]:
        yield self._part
        raise self._cut()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._part
        raise self._cut()
