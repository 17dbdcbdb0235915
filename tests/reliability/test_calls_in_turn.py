"""Calls in turn on one client, over real sockets, on every backend: each sends its own query,
headers and timeouts, whatever the calls before it sent.

The backends keep what the library would rebuild at every call (the URL with its query, the
headers, the limits) while the next call asks for the same; these tests change them from one
call to the next.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from animalstore_client import APITimeoutError
from tests.reliability.conftest import Api
from tests.reliability.faultserver import FaultServer, Hangup, Reply

EMPTY = Reply(200, json=[])
#: The short timeout of some calls, and how late the others' answers come (within the
#: client's own timeout, 5 s, but past the short one).
SHORT = 0.02
LATE = 0.08


def test_each_call_sends_its_own_query_and_headers(
    make_server: Callable[..., FaultServer], make_client: Callable[..., Api]
) -> None:
    server = make_server(default=EMPTY)
    client = make_client(server)
    tenant = client.with_options(default_headers={"X-Tenant": "t-1"})

    client.list_pets(limit=5)
    client.list_pets(limit=5, extra_headers={"X-Trace": "a"})
    client.list_pets(status="sold")
    tenant.list_pets(status="sold")
    client.list_pets()
    client.list_pets(limit=5, extra_headers={"X-Trace": "b"})

    sent = [
        (request.query, request.header("x-trace"), request.header("x-tenant"))
        for request in server.requests
    ]
    assert sent == [
        ("limit=5", None, None),
        ("limit=5", "a", None),
        ("status=sold", None, None),
        ("status=sold", None, "t-1"),
        ("", None, None),
        ("limit=5", "b", None),
    ]
    assert {request.path for request in server.requests} == {"/v1/pets"}


def test_each_call_keeps_its_own_timeout(
    make_server: Callable[..., FaultServer], make_client: Callable[..., Api]
) -> None:
    # A call with the client's timeout (5 s) gets its answer late: it fails if it took a
    # short timeout from a call before it. A call with a short timeout gets none until the
    # server hangs up (1 s later): APIConnectionError, not APITimeoutError, if it took the
    # client's timeout instead of its own.
    late, never = Reply(200, json=[], delay=LATE), Hangup(delay=1.0)
    server = make_server()
    server.script(late, never, late, never, late)
    client = make_client(server, max_retries=0)

    assert client.list_pets() == []
    with pytest.raises(APITimeoutError):
        client.list_pets(timeout=SHORT)
    assert client.list_pets() == []
    with pytest.raises(APITimeoutError):
        client.with_options(timeout=SHORT).list_pets()
    assert client.list_pets() == []

    assert len(server.requests) == 5
