"""httpx2 as a backend: what differs from httpx, over real sockets.

Everything the reliability suite promises runs on httpx2 through the ``kind`` fixture
(``"httpx2-sync"``, ``"httpx2-async"``); here is what is httpx2's own: its clients and
timeouts accepted where httpx's are, the views typed ``httpx`` on it, the errors for a client
of the wrong kind, and an application that aliases httpx to httpx2 before anything imports it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from animalstore_client import (
    DEFAULT_CONNECTION_LIMITS,
    DEFAULT_TIMEOUT,
    AsyncClient,
    Client,
    DefaultAsyncHttpx2Client,
    DefaultHttpx2Client,
    NotFoundError,
)
from tests.conftest import run_child, without_our_variables
from tests.reliability.conftest import API_KEY, NO_HTTPX2, PET
from tests.reliability.faultserver import FaultServer, Reply

pytestmark = pytest.mark.skipif(NO_HTTPX2 is not None, reason=str(NO_HTTPX2))

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def httpx2() -> Any:
    import httpx2 as module

    return module


def test_an_httpx2_timeout_is_taken_as_an_httpx_one(httpx2: Any) -> None:
    timeout = httpx2.Timeout(2.0, connect=1.0)
    client = Client(api_key=API_KEY, base_url="http://127.0.0.1:9/v1", timeout=timeout)
    assert client.timeout == httpx.Timeout(2.0, connect=1.0)
    copy = client.with_options(timeout=httpx2.Timeout(None, read=4.0))
    assert copy.timeout == httpx.Timeout(None, read=4.0)
    with pytest.raises(ValueError, match=r"timeout \(read\) must be positive"):
        client.with_options(timeout=httpx2.Timeout(1.0, read=-1.0))


def test_a_call_timeout_of_httpx2_is_what_the_request_carries(
    httpx2: Any, server: FaultServer
) -> None:
    server.default = Reply(200, json=[PET])
    seen: list[dict[str, float | None]] = []
    hooks = {"request": [lambda request: seen.append(request.extensions["timeout"])]}
    with (
        httpx2.Client(event_hooks=hooks) as http,
        Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
    ):
        client.list_pets(timeout=httpx2.Timeout(3.0, pool=1.0))
    assert seen == [{"connect": 3.0, "read": 3.0, "write": 3.0, "pool": 1.0}]


def test_an_omitted_timeout_is_the_httpx2_clients_own(httpx2: Any) -> None:
    with httpx2.Client(timeout=7.0) as http:
        client = Client(api_key=API_KEY, base_url="http://127.0.0.1:9/v1", http_client=http)
        assert client.timeout == httpx.Timeout(7.0)


def test_the_default_httpx2_clients_have_the_sdks_defaults(httpx2: Any) -> None:
    limits = DEFAULT_CONNECTION_LIMITS
    with DefaultHttpx2Client() as http:
        assert type(http) is httpx2.Client
        assert http.timeout == httpx2.Timeout(**DEFAULT_TIMEOUT.as_dict())
    with DefaultHttpx2Client(timeout=3.0, headers={"x-team": "pets"}) as http:
        assert http.timeout == httpx2.Timeout(3.0)
        assert http.headers["x-team"] == "pets"

    async def main() -> None:
        async with DefaultAsyncHttpx2Client() as http:
            assert type(http) is httpx2.AsyncClient
            assert http.timeout == httpx2.Timeout(**DEFAULT_TIMEOUT.as_dict())

    asyncio.run(main())
    assert limits.max_connections == 100


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_views_are_httpx_objects_with_the_key_redacted(
    httpx2: Any, server: FaultServer, kind: str
) -> None:
    server.script(
        Reply(200, json=[PET], headers=[("x-request-id", "req_1")]),
        Reply(404, json={"code": "not_found", "message": "no such pet", "status": 404}),
    )

    async def run(client: AsyncClient) -> tuple[Any, Any]:
        raw = await client.with_raw_response.list_pets()
        with pytest.raises(NotFoundError) as caught:
            await client.list_pets()
        return raw, caught.value

    if kind == "sync":
        with (
            httpx2.Client() as http,
            Client(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
        ):
            raw = client.with_raw_response.list_pets()
            with pytest.raises(NotFoundError) as caught:
                client.list_pets()
            error = caught.value
    else:

        async def main() -> tuple[Any, Any]:
            async with (
                httpx2.AsyncClient() as http,
                AsyncClient(api_key=API_KEY, base_url=server.base_url, http_client=http) as client,
            ):
                return await run(client)

        raw, error = asyncio.run(main())

    response = raw.http_response
    assert type(response) is httpx.Response
    assert response.json() == [PET]
    assert response.headers["x-request-id"] == "req_1"
    assert response.request.headers["authorization"] == "[redacted]"
    assert raw.headers["x-request-id"] == "req_1"
    assert type(error.response) is httpx.Response
    assert error.response.status_code == 404
    assert error.request.headers["authorization"] == "[redacted]"
    assert [r.header("authorization") for r in server.requests] == [f"Bearer {API_KEY}"] * 2


def test_a_client_of_the_wrong_kind_is_refused_with_both_names(httpx2: Any) -> None:
    async_http, sync_http = httpx2.AsyncClient(), httpx2.Client()
    refusals: list[tuple[Callable[..., object], object, str]] = [
        (
            Client,
            async_http,
            "http_client must be an httpx.Client or an httpx2.Client; "
            "got httpx2.AsyncClient, which AsyncClient takes",
        ),
        (
            AsyncClient,
            sync_http,
            "http_client must be an httpx.AsyncClient, an httpx2.AsyncClient or an "
            "aiohttp.ClientSession; got httpx2.Client, which Client takes",
        ),
    ]
    for client_class, http, message in refusals:
        with pytest.raises(TypeError) as caught:
            client_class(api_key=API_KEY, http_client=http)
        assert str(caught.value) == message
    with pytest.raises(TypeError, match=r"; got builtins\.object$"):
        Client(api_key=API_KEY, http_client=cast(Any, object()))
    sync_http.close()
    asyncio.run(async_http.aclose())


def test_a_client_of_another_library_is_named_as_its_package_exports_it() -> None:
    # aiohttp.ClientSession, as users import it: not aiohttp.client.ClientSession, where the
    # class is defined (type(session).__module__).
    import aiohttp

    async def refused() -> TypeError:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(TypeError) as caught:
                Client(api_key=API_KEY, http_client=cast(Any, session))
            return caught.value

    assert str(asyncio.run(refused())) == (
        "http_client must be an httpx.Client or an httpx2.Client; got aiohttp.ClientSession"
    )


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_child(
        sys.executable,
        "-c",
        textwrap.dedent(code),
        *args,
        cwd=REPO,
        env=without_our_variables(PYTHONPATH=str(REPO)),
        timeout=120,
    )


def test_a_missing_httpx2_is_named_with_the_command_that_installs_it() -> None:
    done = run_python(
        """
        import sys
        sys.modules["httpx2"] = None  # as if it were not installed
        from animalstore_client import DefaultHttpx2Client
        try:
            DefaultHttpx2Client()
        except ImportError as exc:
            print(exc)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("httpx2 itself with: pip install 'httpx2>=2.0'")
    assert "DefaultHttpx2Client needs httpx2" in done.stdout


ALIASED = """
    import asyncio, sys, warnings
    import httpx2
    httpx2.alias_httpx()  # first, as the application that calls it does

    import httpx
    from animalstore_client import APITimeoutError, AsyncClient, Client, NotFoundError
    from animalstore_client.testing import retry_floor
    from tests.reliability.faultserver import FaultServer, Reply

    assert httpx is httpx2, "alias_httpx() did not take"
    pet = {"id": 1, "name": "Rex", "categoryId": 3}
    # Each retry waits the Retry-After as written (0.01 s), not the 0.3 s floor.
    with FaultServer() as server, retry_floor(0.0):
        # A 503 is retried, a 404 is typed, a stalled answer meets the deadline, and the pet.
        server.script(
            Reply(503, headers=[("Retry-After", "0.01")]),
            Reply(200, json=[pet]),
            Reply(404, json={"code": "not_found", "message": "none", "status": 404}),
            Reply(200, json=[], delay=5),
            Reply(201, json=pet),
        )
        with Client(api_key="k", base_url=server.base_url) as client:
            print("sync", client.list_pets()[0].name)
            try:
                client.list_pets()
            except NotFoundError as exc:
                print("sync", type(exc).__name__, exc.status_code)
            try:
                client.list_pets(deadline=0.05)
            except APITimeoutError as exc:
                print("sync", type(exc).__name__)
            print("sync", client.create_pet(name="Rex", category_id=3).id)
        print("sync requests", len(server.requests))

        async def main() -> None:
            server.script(Reply(503, headers=[("Retry-After", "0.01")]), Reply(200, json=[pet]))
            async with AsyncClient(api_key="k", base_url=server.base_url) as client:
                print("async", (await client.list_pets())[0].name)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    server.script(Reply(200, json=pet))
                    print("async", (await client.get_pet(1)).id)

        asyncio.run(main())
        print("all requests", len(server.requests))
"""


def test_the_sdk_works_on_its_default_backend_under_alias_httpx(httpx2: Any) -> None:
    if not hasattr(httpx2, "alias_httpx"):  # the extra's lower bound, 2.0, has not
        pytest.skip(f"httpx2 2.9 added alias_httpx; this is {httpx2.__version__}")
    done = run_python(ALIASED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "sync Rex",
        "sync NotFoundError 404",
        "sync APITimeoutError",
        "sync 1",
        "sync requests 5",
        "async Rex",
        "async 1",
        "all requests 8",
    ]
