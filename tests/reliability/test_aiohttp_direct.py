"""``DefaultAioHttpClient`` sends plain requests around httpx's client machinery: over real
sockets, the same requests reach the server and the same responses come back as through
``httpx.AsyncClient.send``, and whatever needs that machinery still goes through it.

The oracle is the same client class with a no-op event hook, which sends every request through
httpx's own ``send`` and httpx-aiohttp's transport.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest
from httpx_aiohttp import AiohttpTransport

from animalstore_client import DefaultAioHttpClient
from tests.reliability.faultserver import FaultServer, Reply

PETS = [{"id": 1, "name": "Rex", "categoryId": 3}]


async def _noop(_: object) -> None:
    pass


def through_httpx() -> httpx.AsyncClient:
    """The oracle: a hook sends every request through httpx's own ``send``."""
    return DefaultAioHttpClient(event_hooks={"request": [_noop]})


def run(work: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(work())


@pytest.fixture
def transport_calls(monkeypatch: pytest.MonkeyPatch) -> list[httpx.Request]:
    """Requests that went through httpx-aiohttp's transport (httpx's own path)."""
    calls: list[httpx.Request] = []
    original = AiohttpTransport.handle_async_request

    async def counted(self: AiohttpTransport, request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return await original(self, request)

    monkeypatch.setattr(AiohttpTransport, "handle_async_request", counted)
    return calls


def response_facts(response: httpx.Response) -> tuple[Any, ...]:
    next_url = None if response.next_request is None else str(response.next_request.url)
    return (
        response.status_code,
        [(k, v) for k, v in response.headers.raw if k.lower() != b"date"],
        response.content,
        response.http_version,
        response.reason_phrase,
        str(response.request.url),
        response.is_closed,
        next_url,
    )


REPLIES = {
    "json": Reply(200, json=PETS),
    "error": Reply(404, json={"code": "not_found", "message": "no", "status": 404}),
    "gzip": Reply(200, json=PETS, gzip=True),
    "empty": Reply(204, content_type=None),
    "redirect": Reply(302, headers={"Location": "/v1/elsewhere?x=1"}),
    "cookie": Reply(200, json=[], headers={"Set-Cookie": "session=abc; Path=/"}),
    "non-ascii header": Reply(200, json=[], headers={"X-Name": "caf\u00e9"}),
}


@pytest.mark.parametrize("reply", list(REPLIES.values()), ids=list(REPLIES))
def test_the_direct_path_sends_and_returns_what_httpxs_own_path_does(
    server: FaultServer, reply: Reply, transport_calls: list[httpx.Request]
) -> None:
    server.default = reply

    async def twice(http: httpx.AsyncClient) -> list[tuple[Any, ...]]:
        async with http:
            facts = []
            for _ in range(2):  # the second one is assembled from the first one's parts
                response = await http.get(
                    f"{server.base_url}/pets", params={"limit": 5}, headers={"X-Trace": "t"}
                )
                facts.append(response_facts(response))
            facts.append(tuple(sorted((c.name, c.value) for c in http.cookies.jar)))
            return facts

    direct = run(lambda: twice(DefaultAioHttpClient()))
    sent_direct = [(r.method, r.target, r.headers, r.body) for r in server.requests]
    assert transport_calls == []
    via_httpx = run(lambda: twice(through_httpx()))
    sent_via_httpx = [(r.method, r.target, r.headers, r.body) for r in server.requests][2:]

    assert len(transport_calls) == 2
    assert direct == via_httpx
    assert sent_direct == sent_via_httpx
    if reply is REPLIES["cookie"]:
        # Stored from the first answer, sent with the second, as httpx does.
        assert direct[-1] == (("session", "abc"),)
        assert dict(sent_direct[1][2])["cookie"] == "session=abc"


def test_a_post_with_a_body_goes_direct_and_arrives_whole(
    server: FaultServer, transport_calls: list[httpx.Request]
) -> None:
    server.default = Reply(201, json=PETS[0])

    async def post() -> httpx.Response:
        async with DefaultAioHttpClient() as http:
            return await http.post(f"{server.base_url}/pets", json={"name": "Rex"})

    response = run(post)

    assert transport_calls == []
    assert response.status_code == 201
    (request,) = server.requests
    assert request.json() == {"name": "Rex"}
    assert request.header("content-type") == "application/json"
    assert request.header("content-length") == str(len(request.body))


def test_headers_changed_on_a_built_request_are_sent_on_that_request_only(
    server: FaultServer,
) -> None:
    server.default = Reply(200, json=[])
    url = f"{server.base_url}/pets"

    async def send() -> None:
        async with DefaultAioHttpClient(headers={"X-Team": "blue"}) as http:
            await http.send(http.build_request("GET", url))
            changed = http.build_request("GET", url)
            changed.headers["X-Changed"] = "yes"
            del changed.headers["x-team"]
            await http.send(changed)
            await http.send(http.build_request("GET", url))

    run(send)

    first, changed, last = server.requests
    assert changed.header("x-changed") == "yes"
    assert changed.header("x-team") is None
    assert first.headers == last.headers
    assert last.header("x-changed") is None
    assert last.header("x-team") == "blue"


def test_the_clients_own_headers_apply_when_they_change(server: FaultServer) -> None:
    server.default = Reply(200, json=[])
    url = f"{server.base_url}/pets"

    async def send() -> None:
        async with DefaultAioHttpClient(headers={"X-Team": "blue"}) as http:
            await http.get(url)
            http.headers["X-Team"] = "green"
            await http.get(url)

    run(send)

    assert [r.header("x-team") for r in server.requests] == ["blue", "green"]


@pytest.mark.parametrize(
    "options",
    [
        {"auth": ("user", "secret")},
        {"follow_redirects": True},
        {"event_hooks": {"response": [_noop]}},
    ],
    ids=["auth", "follow-redirects", "response-hook"],
)
def test_what_needs_httpxs_machinery_goes_through_it(
    server: FaultServer, options: dict[str, Any], transport_calls: list[httpx.Request]
) -> None:
    server.script(Reply(302, headers={"Location": "/v1/pets?page=2"}), Reply(200, json=[]))

    async def get() -> httpx.Response:
        async with DefaultAioHttpClient(**options) as http:
            return await http.get(f"{server.base_url}/pets")

    response = run(get)

    assert transport_calls
    if "auth" in options:
        assert server.requests[0].header("authorization") == "Basic dXNlcjpzZWNyZXQ="
    if options.get("follow_redirects"):
        assert response.status_code == 200
        assert [r.target for r in server.requests] == ["/v1/pets", "/v1/pets?page=2"]


def test_a_closed_client_refuses_to_send_as_httpx_does(server: FaultServer) -> None:
    async def send() -> None:
        http = DefaultAioHttpClient()
        request = http.build_request("GET", f"{server.base_url}/pets")
        await http.aclose()
        await http.send(request)

    with pytest.raises(RuntimeError, match="client has been closed"):
        run(send)
    assert server.requests == []


def test_the_direct_path_logs_httpxs_line_and_times_the_answer(
    server: FaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.default = Reply(200, json=[])

    async def get() -> httpx.Response:
        async with DefaultAioHttpClient() as http:
            return await http.get(f"{server.base_url}/pets")

    with caplog.at_level(logging.INFO, logger="httpx"):
        response = run(get)

    assert [r.getMessage() for r in caplog.records if r.name == "httpx"] == [
        f'HTTP Request: GET {server.base_url}/pets "HTTP/1.1 200 OK"'
    ]
    assert response.elapsed.total_seconds() > 0


def test_equal_but_differently_written_parameters_build_their_own_urls() -> None:
    # 1, True and 1.0 are equal (and hash alike), yet httpx writes them differently: none may
    # be served the URL assembled for another.
    values: list[Any] = [1, True, 1.0, "1", 1, True]
    http, plain = DefaultAioHttpClient(), httpx.AsyncClient()
    url = "http://api.test/v1/pets"

    built = [str(http.build_request("GET", url, params={"limit": v}).url) for v in values]

    assert built == [str(plain.build_request("GET", url, params={"limit": v}).url) for v in values]
    assert built[:3] == [f"{url}?limit=1", f"{url}?limit=true", f"{url}?limit=1.0"]
