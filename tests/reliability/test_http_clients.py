"""The public ``http_client`` factories, over real sockets: their defaults, the proxies they read
from the environment, the connection gate of ``DefaultAsyncHttpxClient``, the aiohttp session of
``DefaultAioHttpClient``, and what happens without the aiohttp extra.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from animalstore_client import (
    DEFAULT_CONNECTION_LIMITS,
    DEFAULT_TIMEOUT,
    APIConnectionError,
    AsyncClient,
    DefaultAioHttpClient,
    DefaultAsyncHttpxClient,
    DefaultHttpxClient,
    Pet,
)
from animalstore_client._backends.aiohttp import AiohttpSender
from animalstore_client._backends.gate import ConnectionGate
from tests.conftest import run_child, without_our_variables
from tests.reliability.conftest import API_KEY, PET, free_port
from tests.reliability.faultserver import FaultServer, Hangup, Reply
from tests.reliability.heldserver import Held, Together, holding_server

REPO = Path(__file__).resolve().parents[2]
FACTORIES: dict[str, Callable[..., httpx.Client | httpx.AsyncClient]] = {
    "DefaultHttpxClient": DefaultHttpxClient,
    "DefaultAsyncHttpxClient": DefaultAsyncHttpxClient,
}


def sdk_calls_on_aiohttp(base_url: str, calls: int, **session_options: Any) -> list[Any]:
    """Make ``calls`` concurrent ``list_pets`` on a ``DefaultAioHttpClient(**session_options)``;
    return the results or the exceptions."""

    async def main() -> list[Any]:
        async with (
            DefaultAioHttpClient(**session_options) as http,
            AsyncClient(api_key=API_KEY, base_url=base_url, http_client=http) as client,
        ):
            calls_made = (client.list_pets(limit=1) for _ in range(calls))
            results: list[Any] = await asyncio.gather(*calls_made, return_exceptions=True)
            return results

    return asyncio.run(main())


def get_many(http: httpx.Client | httpx.AsyncClient, urls: list[str]) -> list[Any]:
    """GET every URL at once (threads for a sync client, tasks for an async one); return the
    responses or the exceptions, then close the client."""
    if isinstance(http, httpx.Client):
        from concurrent.futures import ThreadPoolExecutor

        def one(url: str) -> Any:
            try:
                return http.get(url)
            except httpx.HTTPError as exc:
                return exc

        with http, ThreadPoolExecutor(len(urls)) as pool:
            return list(pool.map(one, urls))

    async def run() -> list[Any]:
        async with http:
            return await asyncio.gather(*(http.get(url) for url in urls), return_exceptions=True)

    return asyncio.run(run())


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return run_child(
        sys.executable, "-c", textwrap.dedent(code), cwd=REPO, env=without_our_variables()
    )


# -- defaults and overrides --------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FACTORIES))
def test_a_factory_applies_the_sdks_timeout_and_lets_any_argument_replace_a_default(
    name: str,
) -> None:
    factory = FACTORIES[name]
    default = factory()
    tweaked = factory(timeout=2.5, headers={"X-Team": "pets"})
    for http in (default, tweaked):
        if isinstance(http, httpx.Client):
            http.close()
        else:
            asyncio.run(http.aclose())

    assert default.timeout == DEFAULT_TIMEOUT
    assert tweaked.timeout == httpx.Timeout(2.5)
    assert tweaked.headers["x-team"] == "pets"
    expected = httpx.Client if name == "DefaultHttpxClient" else httpx.AsyncClient
    assert isinstance(default, expected)
    assert type(default) is FACTORIES[name]  # a class users can subclass and check


def test_default_aiohttp_client_is_a_session_with_the_sdks_defaults_and_any_can_be_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import aiohttp

    for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(variable, raising=False)
        monkeypatch.delenv(variable.lower(), raising=False)

    async def made() -> tuple[aiohttp.ClientSession, aiohttp.ClientSession, Any]:
        default = DefaultAioHttpClient()
        tweaked = DefaultAioHttpClient(
            timeout=aiohttp.ClientTimeout(total=2.5), headers={"X-Team": "pets"}
        )
        connector = default.connector  # None once closed
        await default.close()
        await tweaked.close()
        return default, tweaked, connector

    default, tweaked, connector = asyncio.run(made())

    assert type(default) is aiohttp.ClientSession
    assert default.timeout == aiohttp.ClientTimeout(
        connect=DEFAULT_TIMEOUT.pool,
        sock_connect=DEFAULT_TIMEOUT.connect,
        sock_read=DEFAULT_TIMEOUT.read,
    )
    assert default.trust_env is False  # no proxy is set: no lookup before every request
    assert isinstance(connector, aiohttp.TCPConnector)
    assert connector.limit == DEFAULT_CONNECTION_LIMITS.max_connections
    assert tweaked.timeout == aiohttp.ClientTimeout(total=2.5)
    assert tweaked.headers["x-team"] == "pets"

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    no_proxy_only, _, _ = asyncio.run(made())
    assert no_proxy_only.trust_env is False  # NO_PROXY alone names no proxy
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    proxied, _, _ = asyncio.run(made())
    assert proxied.trust_env is True  # aiohttp reads the proxy variables only then


def test_default_aiohttp_client_outside_a_loop_or_under_trio_says_why() -> None:
    import trio

    with pytest.raises(RuntimeError) as outside:
        DefaultAioHttpClient()
    assert str(outside.value).startswith(
        "DefaultAioHttpClient() must be called inside a coroutine, as aiohttp binds a session "
        "to the running event loop: async def main(): async with DefaultAioHttpClient() as http"
    )
    assert outside.value.__cause__ is None
    assert outside.value.__suppress_context__

    async def under_trio() -> None:
        DefaultAioHttpClient()

    with pytest.raises(RuntimeError, match=r"^DefaultAioHttpClient needs asyncio: aiohttp does"):
        trio.run(under_trio)


def test_a_connector_limit_bounds_the_sdks_connections_on_aiohttp() -> None:
    import aiohttp

    # The first two answers wait for each other: both connections are busy at once.
    with holding_server(default=Together(200, json=[PET], together=2)) as server:

        async def main() -> list[Any]:
            async with (
                DefaultAioHttpClient(connector=aiohttp.TCPConnector(limit=2)) as http,
                AsyncClient(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
            ):
                results: list[Any] = await asyncio.gather(*(client.list_pets() for _ in range(6)))
                return results

        results = asyncio.run(main())

        assert results == [[Pet.from_dict(PET)]] * 6
        assert len(server.requests) == 6
        assert len({request.connection for request in server.requests}) == 2


def test_the_default_aiohttp_limits_open_a_connection_per_concurrent_call() -> None:
    # No answer goes before all eight requests came: only eight connections at once do it.
    with holding_server(default=Together(200, json=[PET], together=8)) as server:
        results = sdk_calls_on_aiohttp(server.base_url, 8)

        assert results == [[Pet.from_dict(PET)]] * 8
        assert len({request.connection for request in server.requests}) == 8


@pytest.mark.parametrize("name", list(FACTORIES))
def test_max_connections_bounds_the_connections_and_every_call_still_completes(
    name: str,
) -> None:
    # The first two answers wait for each other: both connections are busy at once.
    with holding_server(default=Together(200, json=[PET], together=2)) as server:
        http = FACTORIES[name](limits=httpx.Limits(max_connections=2))
        responses = get_many(http, [f"{server.base_url}/pets"] * 6)

        assert [getattr(r, "status_code", r) for r in responses] == [200] * 6
        assert len({request.connection for request in server.requests}) == 2


@pytest.mark.parametrize("name", list(FACTORIES))
def test_the_default_limits_open_a_connection_per_concurrent_call(name: str) -> None:
    assert DEFAULT_CONNECTION_LIMITS.max_connections == 100
    # No answer goes before all eight requests came: only eight connections at once do it.
    with holding_server(default=Together(200, json=[PET], together=8)) as server:
        responses = get_many(FACTORIES[name](), [f"{server.base_url}/pets"] * 8)

        assert [getattr(r, "status_code", r) for r in responses] == [200] * 8
        assert len({request.connection for request in server.requests}) == 8


# -- proxies from the environment ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(FACTORIES))
def test_http_proxy_from_the_environment_carries_the_calls(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The proxy is a fault server that answers every request itself; the target host does not
    # exist, so only a request through the proxy can succeed.
    with FaultServer(default=Reply(200, json=[PET])) as proxy:
        for variable in ("HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
            monkeypatch.delenv(variable, raising=False)
            monkeypatch.delenv(variable.lower(), raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        (response,) = get_many(FACTORIES[name](), ["http://animalstore.invalid/v1/pets?limit=1"])

    assert getattr(response, "status_code", response) == 200
    (request,) = proxy.requests
    assert request.target == "http://animalstore.invalid/v1/pets?limit=1"  # absolute form


@pytest.mark.parametrize("name", list(FACTORIES))
def test_no_proxy_from_the_environment_goes_direct(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer() as proxy, FaultServer(default=Reply(200, json=[PET])) as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        (response,) = get_many(FACTORIES[name](), [f"{server.base_url}/pets"])

        assert getattr(response, "status_code", response) == 200
        assert proxy.requests == []
        assert [r.target for r in server.requests] == ["/v1/pets"]


def test_no_proxy_from_the_environment_goes_direct_on_aiohttp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FaultServer() as proxy, FaultServer(default=Reply(200, json=[PET])) as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")

        assert sdk_calls_on_aiohttp(server.base_url, 1) == [[Pet.from_dict(PET)]]
        assert proxy.requests == []
        assert [r.target for r in server.requests] == ["/v1/pets?limit=1"]


def test_the_sdk_on_aiohttp_sends_through_the_environments_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FaultServer(default=Reply(200, json=[PET])) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)

        async def main() -> list[Pet]:
            async with (
                DefaultAioHttpClient() as http,
                AsyncClient(
                    api_key=API_KEY, base_url="http://animalstore.invalid/v1", http_client=http
                ) as client,
            ):
                return await client.list_pets(limit=1)

        assert [pet.name for pet in asyncio.run(main())] == ["Rex"]

    (request,) = proxy.requests
    assert request.target == "http://animalstore.invalid/v1/pets?limit=1"
    assert request.header("authorization") == f"Bearer {API_KEY}"


def test_a_session_reading_credentials_from_netrc_fails_clearly_and_sends_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # With trust_env, aiohttp adds a .netrc entry's credentials and then refuses to combine
    # them with the SDK's Authorization header: a plain ValueError, before anything is sent
    # (a session's own auth= does the same). It must come out as the SDK's error.
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password s3cret-pass\n")
    monkeypatch.setenv("NETRC", str(netrc))
    with FaultServer(default=Reply(200, json=[PET])) as server:

        async def main() -> None:
            async with (
                DefaultAioHttpClient(trust_env=True) as http,
                AsyncClient(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
            ):
                await client.create_pet(name="Rex", category_id=3)

        with pytest.raises(APIConnectionError) as caught:
            asyncio.run(main())

    assert type(caught.value) is APIConnectionError
    assert str(caught.value) == (
        f"POST {server.base_url}/pets failed: ValueError: Cannot combine AUTHORIZATION header "
        "with AUTH argument or credentials encoded in URL"
    )
    assert caught.value.__cause__ is None
    assert API_KEY not in repr(caught.value.request.headers)
    assert server.requests == []  # refused before sending, and not retried


def test_the_callers_own_requests_on_a_default_aiohttp_session_keep_aiohttps_errors() -> None:
    # The middleware that makes an SDK call go out once must leave the session's other
    # requests as aiohttp makes them: a hang-up is aiohttp's own ClientError there.
    import aiohttp

    with FaultServer(default=Hangup()) as server:

        async def main() -> BaseException:
            async with DefaultAioHttpClient() as http:
                try:
                    await http.get(f"{server.base_url}/pets")
                except BaseException as exc:
                    return exc
            raise AssertionError("the hang-up raised nothing")

        error = asyncio.run(main())

    assert isinstance(error, aiohttp.ServerDisconnectedError)
    assert len(server.requests) == 2  # aiohttp's own resend of a GET, untouched


def test_a_session_closed_while_a_call_waits_to_retry_is_reported_plainly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The wait before the second attempt lasts until the test has closed the session.
    slept: list[float] = []
    waiting, resumed = asyncio.Event(), asyncio.Event()  # bound to the loop at first use

    async def sleep_until_resumed(delay: float) -> None:
        slept.append(delay)
        waiting.set()
        await resumed.wait()

    monkeypatch.setattr(AiohttpSender, "sleep", staticmethod(sleep_until_resumed))
    with FaultServer() as server:
        server.script(Reply(503, json={"code": "busy", "message": "busy", "status": 503}))

        async def main() -> BaseException:
            async with DefaultAioHttpClient() as http:
                client = AsyncClient(api_key=API_KEY, base_url=server.base_url, http_client=http)
                call = asyncio.ensure_future(client.list_pets())
                await waiting.wait()
                await http.close()  # during the wait before the second attempt
                resumed.set()
                try:
                    await call
                except BaseException as exc:
                    return exc
            raise AssertionError("the call succeeded on a closed session")

        error = asyncio.run(main())

    assert type(error) is RuntimeError
    assert str(error) == "the aiohttp session was closed during the call"
    assert error.__context__ is None
    shown = "".join(
        traceback.TracebackException.from_exception(error, capture_locals=True).format()
    )
    assert API_KEY not in shown
    assert len(server.requests) == 1
    assert len(slept) == 1


# -- the connection gate of DefaultAsyncHttpxClient ----------------------------------------------


def test_a_call_that_finds_no_free_connection_in_time_is_a_pool_timeout_and_is_not_sent() -> None:
    # The first call's answer is held until the others have given up: they can only have
    # waited for the pool timeout.
    with holding_server(default=Held(200, json=[PET])) as server:
        # One connection: the first call holds it, the other two wait in the client's gate
        # (which lets in as many as the pool's size), none in httpx's pool.
        http = DefaultAsyncHttpxClient(
            limits=httpx.Limits(max_connections=1), timeout=httpx.Timeout(5.0, pool=0.05)
        )

        async def main() -> tuple[Any, list[Any], float]:
            async with http:
                first = asyncio.ensure_future(http.get(f"{server.base_url}/pets"))
                # The first one holds the only connection once its request has come.
                assert await asyncio.to_thread(server.wait_for_requests, 1, 5.0)
                started = time.monotonic()
                late = [http.get(f"{server.base_url}/pets") for _ in range(2)]
                others = await asyncio.gather(*late, return_exceptions=True)
                waited = time.monotonic() - started
                server.release.set()
                return await first, others, waited

        first, others, waited = asyncio.run(main())

        assert first.status_code == 200
        assert all(isinstance(other, httpx.PoolTimeout) for other in others)
        assert all("no connection became free" in str(other) for other in others)  # the gate's
        assert all(other.request.url == f"{server.base_url}/pets" for other in others)
        assert waited >= 0.05  # the pool timeout
        assert len(server.requests) == 1  # the others never left


def test_a_streamed_response_keeps_its_place_in_the_gate_until_it_is_closed() -> None:
    # The SDK streams every answer (to cap its size): its place must last as long as the
    # connection is busy, not only until the headers came, or more requests than connections
    # would queue inside httpx's pool.
    with FaultServer(default=Reply(200, json=[PET])) as server:
        http = DefaultAsyncHttpxClient(
            limits=httpx.Limits(max_connections=1), timeout=httpx.Timeout(5.0, pool=0.05)
        )
        url = f"{server.base_url}/pets"

        async def main() -> tuple[BaseException | None, bytes, int]:
            async with http:
                streamed = await http.send(http.build_request("GET", url), stream=True)
                try:
                    await http.get(url)
                except httpx.PoolTimeout as exc:
                    blocked: BaseException | None = exc
                else:
                    blocked = None
                body = await streamed.aread()  # read to the end: closed, the place is back
                after = await http.get(url)
                return blocked, body, after.status_code

        blocked, body, status = asyncio.run(main())

        assert isinstance(blocked, httpx.PoolTimeout)
        assert "no connection became free" in str(blocked)  # the gate's, not httpx's pool's
        assert (json.loads(body), status) == ([PET], 200)
        assert len(server.requests) == 2


def test_the_gate_works_in_one_event_loop_after_another() -> None:
    # A client may outlive an event loop (two asyncio.run calls, a notebook's restarted loop):
    # its gate must not stay bound to the first one.
    gate = ConnectionGate(1)
    request = httpx.Request("GET", "http://127.0.0.1/v1/pets")
    order: list[str] = []

    async def hold(name: str) -> None:
        semaphore = await gate.enter(request)
        order.append(f"{name} in")
        await asyncio.sleep(0)  # the others come to the gate meanwhile
        order.append(f"{name} out")
        semaphore.release()

    async def contend(prefix: str) -> None:
        await asyncio.gather(hold(f"{prefix}1"), hold(f"{prefix}2"), hold(f"{prefix}3"))

    asyncio.run(contend("a"))
    asyncio.run(contend("b"))  # "bound to a different event loop" if the gate kept the first

    assert order == [
        f"{p}{n} {step}" for p in "ab" for n in "123" for step in ("in", "out")
    ]  # one at a time, in order of arrival


def test_with_a_transport_of_its_own_no_request_waits_in_the_client() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200))
    http = DefaultAsyncHttpxClient(transport=transport)
    assert http._gate is None
    gate = DefaultAsyncHttpxClient()._gate
    assert gate is not None
    assert gate.size == 100


# -- without the extra ---------------------------------------------------------------------------


def test_importing_the_package_and_using_the_httpx_backends_never_imports_aiohttp() -> None:
    result = run_python(
        """
        import sys
        import animalstore_client as sdk

        sdk.Client(api_key="k").close()
        sdk.AsyncClient(api_key="k")
        sdk.DefaultHttpxClient().close()
        sdk.DefaultAsyncHttpxClient()
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("aiohttp", "httpx_aiohttp")))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"


@pytest.mark.parametrize("missing", ["aiohttp"])
def test_without_the_extra_default_aio_http_client_says_how_to_install_it(missing: str) -> None:
    result = run_python(
        f"""
        import sys
        sys.modules[{missing!r}] = None  # what an environment without it looks like to import

        import animalstore_client
        from animalstore_client import AsyncClient

        try:
            animalstore_client.DefaultAioHttpClient()
        except ImportError as exc:
            print(type(exc).__name__)
            print(exc)
        # What sphinx-autodoc-typehints or pydantic read: the annotation naming the library.
        import typing
        try:
            typing.get_type_hints(animalstore_client.DefaultAioHttpClient)
        except ImportError as exc:
            print(exc)
        AsyncClient(api_key="k")  # the default backend is unaffected
        """
    )
    assert result.returncode == 0, result.stderr
    kind, message, annotation_message = result.stdout.splitlines()
    assert kind == "ImportError"
    assert "install the SDK's aiohttp extra, or aiohttp itself with: " in message
    assert message.endswith("pip install 'aiohttp>=3.12'")
    assert missing in message
    assert annotation_message == (
        "the SDK's factory for it needs aiohttp (aiohttp is missing): install the SDK's aiohttp "
        "extra, or aiohttp itself with: pip install 'aiohttp>=3.12'"
    )


# -- the SDK on both async backends ---------------------------------------------------------------


@pytest.mark.parametrize("backend", ["httpx", "aiohttp"])
def test_a_refused_create_is_retried_and_then_reported_as_a_connection_error(
    backend: str, sleeps: list[float]
) -> None:
    async def main() -> APIConnectionError:
        http = DefaultAioHttpClient() if backend == "aiohttp" else None
        url = f"http://127.0.0.1:{free_port()}/v1"
        async with AsyncClient(api_key=API_KEY, base_url=url, http_client=http) as client:
            try:
                await client.create_pet(name="Rex", category_id=3)
            except APIConnectionError as exc:
                return exc
            finally:
                if http is not None:
                    await http.close()
        raise AssertionError("no error")

    error = asyncio.run(main())

    assert type(error) is APIConnectionError  # a refusal is not a timeout
    assert str(error).endswith(
        "failed: ConnectionRefusedError: connection refused "
        "(nothing accepts connections at that address); not sent, so the animal was not "
        "created: the request provably never reached the service, and calling again is safe"
    )
    assert len(sleeps) == 2  # nothing was sent, so both retries were allowed


def test_a_create_is_sent_once_even_through_httpx_aiohttps_own_client(sleeps: list[float]) -> None:
    # httpx_aiohttp.HttpxAiohttpClient (not DefaultAioHttpClient) reports this hang-up, after
    # the server read the POST, as ConnectTimeout: the SDK must not take it for "not sent".
    import httpx_aiohttp

    with FaultServer() as server:
        server.script(Hangup(), Reply(201, json=PET))

        async def main() -> BaseException:
            async with httpx_aiohttp.HttpxAiohttpClient() as http:
                client = AsyncClient(
                    api_key=API_KEY, base_url=server.base_url, http_client=http, max_retries=2
                )
                try:
                    await client.create_pet(name="Rex", category_id=3)
                except APIConnectionError as exc:
                    return exc
            raise AssertionError("created")

        error = asyncio.run(main())

        assert "failed: ConnectTimeout: " in str(error)  # httpx-aiohttp's label
        assert [r.method for r in server.requests] == ["POST"]
        assert sleeps == []


# -- one TLS context -----------------------------------------------------------------------------


def test_clients_built_with_the_defaults_load_the_ca_bundle_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ssl

    import certifi

    from animalstore_client._backends import defaults as _http_clients

    loaded: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loaded.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(_http_clients, "_ssl_contexts", {})
    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    clients: list[Any] = [DefaultHttpxClient(), DefaultAsyncHttpxClient(), DefaultHttpxClient()]
    assert len(loaded) == 1  # the CA bundle loaded once, not once per client

    # What httpx reads from the environment still applies: another bundle, another context.
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    clients.append(DefaultHttpxClient())
    assert len(loaded) == 2
    # A client given its own TLS settings keeps them.
    clients.append(DefaultHttpxClient(verify=False))
    assert len(loaded) == 2
    for client in clients:
        if isinstance(client, httpx.Client):
            client.close()
