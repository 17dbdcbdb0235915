"""The clients themselves: lifecycle, copies, parity of the twins, deprecation, secrets, logs."""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import re
import subprocess
import sys
import typing
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence

import httpx
import pytest
import respx

from animalstore_client import (
    AnimalStoreError,
    AsyncClient,
    AuthenticationError,
    Client,
    InternalServerError,
)
from animalstore_client._core.exchange import AsyncHandler, Handler
from tests.conftest import API_KEY, BASE_URL, Api
from tests.contract.operations import METHOD_NAMES

PET = {"id": 7, "name": "Rex", "categoryId": 3}


def public_members(cls: type) -> dict[str, object]:
    return {name: member for name, member in inspect.getmembers(cls) if not name.startswith("_")}


#: What only one of the clients has, each the other's counterpart.
TWINS = {"close": "aclose", "__enter__": "__aenter__", "__exit__": "__aexit__"}
#: The constructor's arguments whose types differ: each client's HTTP library clients, and its
#: middleware handlers (plain functions for Client, coroutine functions for AsyncClient).
PER_CLIENT: dict[str, dict[type, typing.Any]] = {
    "http_client": {Client: httpx.Client | None, AsyncClient: httpx.AsyncClient | None},
    "middleware": {
        Client: Sequence[Handler] | None,
        AsyncClient: Sequence[AsyncHandler] | None,
    },
}


def test_client_and_async_client_expose_the_same_api() -> None:
    # Each client declares its constructor and methods itself, with its own types (what
    # help() and inspect.signature show); this keeps the two from drifting, as httpx does.
    sync, asynchronous = public_members(Client), public_members(AsyncClient)
    assert set(sync) - {"close"} == set(asynchronous) - {"aclose"}
    for name in ["__init__", *sorted(sync)]:
        if name == "close":
            continue
        sync_member = inspect.getattr_static(Client, name)
        async_member = inspect.getattr_static(AsyncClient, name)
        if sync_member is async_member:  # written once, in the shared base
            continue
        assert inspect.getdoc(sync_member) == inspect.getdoc(async_member), name
        if not inspect.isfunction(sync_member):  # with_raw_response
            continue
        sync_signature, async_signature = map(inspect.signature, (sync_member, async_member))
        sync_hints, async_hints = map(typing.get_type_hints, (sync_member, async_member))
        assert list(sync_signature.parameters) == list(async_signature.parameters), name
        for parameter, shown in sync_signature.parameters.items():
            other = async_signature.parameters[parameter]
            assert (shown.kind, shown.default) == (other.kind, other.default), (name, parameter)
            if parameter in PER_CLIENT:
                assert sync_hints[parameter] == PER_CLIENT[parameter][Client]
                assert async_hints[parameter] == PER_CLIENT[parameter][AsyncClient]
            elif parameter != "self":
                assert sync_hints[parameter] == async_hints[parameter], (name, parameter)
        # The same result: returned by Client's method, awaited from AsyncClient's.
        assert sync_hints["return"] == async_hints["return"], name
        assert not inspect.iscoroutinefunction(sync_member), name
        assert inspect.iscoroutinefunction(async_member) is (name != "__init__"), name
        assert getattr(sync_member, "__deprecated__", None) == getattr(
            async_member, "__deprecated__", None
        )
    for sync_name, async_name in TWINS.items():
        assert inspect.getdoc(getattr(Client, sync_name)) == inspect.getdoc(
            getattr(AsyncClient, async_name)
        )
        assert inspect.iscoroutinefunction(getattr(AsyncClient, async_name))


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_help_shows_the_constructor_and_what_http_client_each_client_takes(cls: type) -> None:
    import pydoc

    # Without the " |" margin, on one line: Python 3.13 spreads a long signature over lines.
    lines = (
        re.sub(r"^ \|  ?", "", line) for line in pydoc.plain(pydoc.render_doc(cls)).splitlines()
    )
    text = re.sub(r"\(\s+", "(", " ".join(" ".join(lines).split()))
    init = text.index("__init__(self, api_key")
    assert text.index("Configure a client; nothing is sent until a method is called.") > init
    for accepted in ("an ``httpx.Client`` or ``httpx2.Client``", "``aiohttp.ClientSession``"):
        assert accepted in text


def test_the_stores_clients_name_the_options_they_take() -> None:
    from animalstore_client.testing import ClientSettings, FakeAnimalStore

    # Typed keyword arguments (PEP 692): editors and type checkers list the six options.
    assert list(typing.get_type_hints(ClientSettings)) == [
        "timeout",
        "max_retries",
        "default_headers",
        "max_response_bytes",
        "deadline",
        "retry",
    ]
    for factory in (FakeAnimalStore.client, FakeAnimalStore.async_client):
        parameters = inspect.signature(factory).parameters
        assert list(parameters) == ["self", "api_key", "settings"]
        assert parameters["settings"].annotation == "Unpack[ClientSettings]"
    with pytest.raises(TypeError, match="proxy"):
        FakeAnimalStore().client(proxy="http://proxy.test")  # type: ignore[call-arg]
    store = FakeAnimalStore(api_keys={"sk-first", "sk-second"})
    store.add_pet("Rex", 3, "available")
    with store.client(
        "sk-second",
        max_retries=0,
        timeout=2.0,
        default_headers={"X-Team": "a"},
        max_response_bytes=1000,
        deadline=5,
    ) as c:
        assert c.max_retries == 0
        assert c.timeout == httpx.Timeout(2.0)
        assert (c.max_response_bytes, c.deadline) == (1000, 5.0)
        assert [pet.name for pet in c.list_pets()] == ["Rex"]
    (request,) = store.requests
    assert request.headers["authorization"] == "Bearer sk-second"
    assert request.headers["x-team"] == "a"


def test_raw_views_expose_the_same_methods(loop: asyncio.AbstractEventLoop) -> None:
    with Client(api_key=API_KEY) as client:
        sync_view = client.with_raw_response
    async_view = AsyncClient(api_key=API_KEY).with_raw_response
    for name in METHOD_NAMES:
        sync_signature = inspect.signature(getattr(sync_view, name))
        assert sync_signature.parameters == inspect.signature(getattr(async_view, name)).parameters
    assert client.with_raw_response is sync_view


def test_get_pet_is_marked_deprecated_for_type_checkers() -> None:
    for cls in (Client, AsyncClient):
        message = inspect.getattr_static(cls, "get_pet").__deprecated__
        assert "5 December 2030" in message
        assert "list_pets() with a status filter" in message


@pytest.fixture
def rex_client(mock_api: respx.MockRouter) -> Iterator[Client]:
    """A client of the mocked API, whose pet 7 is Rex; closed after the test."""
    mock_api.get("/pets/7").respond(200, json=PET)
    with Client(api_key=API_KEY, base_url=BASE_URL) as client:
        yield client


def test_get_pet_warns_at_the_callers_line(rex_client: Client) -> None:
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    with pytest.warns(DeprecationWarning, match="5 December 2030") as caught:
        rex_client.get_pet(7)  # type: ignore[deprecated]

    assert len(caught) == 1
    assert caught[0].filename == __file__
    assert caught[0].lineno == line
    assert "list_pets() with a status filter" in str(caught[0].message)


def test_get_pet_warns_once_per_callers_line_under_the_default_filter(
    rex_client: Client, mock_api: respx.MockRouter
) -> None:
    # Made as warnings.warn makes it at the caller's line: its module, and its registry,
    # which the "default" action reads to show a warning once per place.
    shown: list[tuple[str, int]] = []

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: typing.TextIO | None = None,
        line: str | None = None,
    ) -> None:
        shown.append((filename, lineno))
        registry = globals()["__warningregistry__"]  # where warnings.warn keeps it, by place
        assert (str(message), category, lineno) in registry

    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.filterwarnings("error", category=DeprecationWarning)  # anywhere else
        warnings.filterwarnings("default", category=DeprecationWarning, module=__name__)
        warnings.showwarning = show
        globals().pop("__warningregistry__", None)
        first = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
        for _ in range(3):
            rex_client.get_pet(7)  # type: ignore[deprecated]
        second = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        rex_client.get_pet(7)  # type: ignore[deprecated]

    assert shown == [(__file__, first), (__file__, second)]
    assert mock_api.calls.call_count == 4


def test_get_pet_called_by_code_without_a_module_name_warns_as_python_would(
    rex_client: Client,
) -> None:
    # Code run by exec() with globals of its own (a notebook's cell, a template): no __name__,
    # which warnings.warn calls "<string>".
    code = compile("\nclient.get_pet(7)\n", "<cell 3>", "exec")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(code, {"client": rex_client})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"<string>\Z")
        exec(code, {"client": rex_client})  # not raised: the filter saw the module "<string>"

    [warning] = caught
    assert (warning.filename, warning.lineno) == ("<cell 3>", 2)


def test_async_get_pet_warns_at_the_callers_line(
    mock_api: respx.MockRouter, loop: asyncio.AbstractEventLoop
) -> None:
    mock_api.get("/pets/7").respond(200, json=PET)
    client = AsyncClient(api_key=API_KEY, base_url=BASE_URL)

    async def caller() -> int:
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        await client.get_pet(7)  # type: ignore[deprecated]
        return line

    with pytest.warns(DeprecationWarning, match="5 December 2030") as caught:
        line = loop.run_until_complete(caller())

    assert len(caught) == 1
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    loop.run_until_complete(client.aclose())


def get_pet(client: Client | AsyncClient, pet_id: object, options: dict[str, object]) -> object:
    """Call ``get_pet``; await it when it is ``AsyncClient``'s."""
    result = client.get_pet(pet_id, **options)  # type: ignore[arg-type, deprecated]
    return asyncio.run(result) if inspect.iscoroutine(result) else result


@pytest.mark.parametrize(
    ("pet_id", "options", "error"),
    [
        ("7", {}, TypeError),
        (2**63, {}, ValueError),
        (7, {"deadline": -1}, ValueError),
        (7, {"extra_headers": {"Authorization": "x"}}, ValueError),
    ],
)
@pytest.mark.parametrize("client_class", [Client, AsyncClient])
def test_get_pet_checks_its_arguments_before_it_warns(
    mock_api: respx.MockRouter,
    client_class: type[Client | AsyncClient],
    pet_id: object,
    options: dict[str, object],
    error: type[Exception],
) -> None:
    client = client_class(api_key=API_KEY, base_url=BASE_URL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(error):
            get_pet(client, pet_id, options)
    assert caught == []  # a refused call is not a use of the deprecated operation
    assert not mock_api.calls


def test_with_options_shares_the_pool_and_only_the_owner_closes_it(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    route = mock_api.get("/pets").mock(return_value=httpx.Response(500))
    fast = Api(api.target.with_options(timeout=2.0, max_retries=0), api._loop)

    assert fast.target._pool is api.target._pool
    assert fast.max_retries == 0
    assert fast.timeout == httpx.Timeout(2.0)
    assert api.max_retries == 2
    with pytest.raises(InternalServerError):
        fast.list_pets()
    assert route.call_count == 1
    assert route.calls.last.request.extensions["timeout"] == httpx.Timeout(2.0).as_dict()

    http = api.target._pool.http
    fast.close()
    assert not http.is_closed
    route.mock(return_value=httpx.Response(200, json=[]))
    assert api.list_pets() == []
    assert api.target._pool.http is http
    api.close()
    assert http.is_closed


def test_a_closed_client_refuses_calls_without_sending(
    api: Api, mock_api: respx.MockRouter
) -> None:
    route = mock_api.get("/pets").respond(200, json=[])
    copy = Api(api.target.with_options(max_retries=0), api._loop)

    api.close()
    api.close()  # closing twice is harmless

    for client in (api, copy):
        with pytest.raises(RuntimeError, match="is closed; create a new one"):
            client.list_pets()
    assert route.call_count == 0


def test_context_managers_close_the_pool(
    mock_api: respx.MockRouter, loop: asyncio.AbstractEventLoop
) -> None:
    mock_api.get("/pets").respond(200, json=[])
    with Client(api_key=API_KEY, base_url=BASE_URL) as client:
        client.list_pets()
        http = client._pool.http
        assert not http.is_closed
    assert http.is_closed

    async def use() -> httpx.AsyncClient:
        async with AsyncClient(api_key=API_KEY, base_url=BASE_URL) as async_client:
            await async_client.list_pets()
            async_http: httpx.AsyncClient = async_client._pool.http
            assert not async_http.is_closed
        return async_http

    assert loop.run_until_complete(use()).is_closed


def test_aclose_lets_go_of_the_closed_pool(
    mock_api: respx.MockRouter, loop: asyncio.AbstractEventLoop
) -> None:
    # A closed httpx.AsyncClient kept by the pool would hold its connection pool, its
    # transport and its headers for as long as the SDK client lives.
    mock_api.get("/pets").respond(200, json=[])
    client = AsyncClient(api_key=API_KEY, base_url=BASE_URL)

    async def use_then_close() -> weakref.ref[httpx.AsyncClient]:
        await client.list_pets()
        http = client._pool.http
        assert http is not None
        assert not http.is_closed
        await client.aclose()
        assert http.is_closed
        return weakref.ref(http)

    http = loop.run_until_complete(use_then_close())
    gc.collect()

    assert client._pool.http is None
    assert http() is None


def test_an_unclosed_client_is_collected_without_warnings_and_its_connection_closed() -> None:
    from tests.reliability.faultserver import FaultServer, Reply

    with FaultServer(default=Reply(200, json=[])) as server:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            client = Client(api_key=API_KEY, base_url=server.base_url)
            assert client.list_pets() == []
            assert server.open_connections == 1  # kept alive in the client's pool
            del client
            gc.collect()
        # Its pool was closed with it: the server saw the connection end.
        assert server.wait_until_closed(timeout=5.0)
    assert [str(w.message) for w in caught] == []


def test_the_key_is_in_no_repr_message_or_log(
    make_api: Callable[..., Api],
    mock_api: respx.MockRouter,
    sleeps: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    api = make_api(max_retries=1)
    mock_api.get("/pets").mock(
        side_effect=[
            httpx.ConnectError("refused"),
            httpx.Response(401, json={"code": "unauthorized", "message": "bad key", "status": 401}),
        ]
    )

    with pytest.raises(AuthenticationError) as caught:
        api.list_pets()

    exc = caught.value
    exposed = [
        repr(api.target),
        str(api.target._options),
        repr(exc),
        str(exc),
        repr(exc.request),
        repr(exc.request.headers),
        repr(api.with_raw_response.target),
        caplog.text,
    ]
    for text in exposed:
        assert API_KEY not in text
    # The request view an error carries shows that a key was sent, never which.
    assert exc.request.headers["authorization"] == "[redacted]"


def test_each_attempt_is_logged_at_debug_and_each_retry_at_info(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")
    mock_api.get("/pets").mock(
        side_effect=[httpx.ReadTimeout("slow"), httpx.Response(503), httpx.Response(200, json=[])]
    )

    api.list_pets(limit=3)

    records = [
        (r.levelname, r.getMessage()) for r in caplog.records if r.name == "animalstore_client"
    ]
    url = "https://api.test/v1/pets?limit=3"
    debug = [message for level, message in records if level == "DEBUG"]
    info = [message for level, message in records if level == "INFO"]
    assert [m.split(" in ")[0] for m in debug] == [
        f"GET {url} -> ReadTimeout: slow",
        f"GET {url} -> 503",
        f"GET {url} -> 200",
    ]
    assert [m.rsplit("(", 1)[1] for m in debug] == ["retry 0)", "retry 1)", "retry 2)"]
    assert all(" ms (retry " in message for message in debug)
    assert [m.startswith(f"retrying GET {url} in ") for m in info] == [True, True]
    assert [re.sub(r"in \d+\.\d s", "in N s", m) for m in info] == [
        f"retrying GET {url} in N s after ReadTimeout (attempt 2 of 3)",
        f"retrying GET {url} in N s after 503 (attempt 3 of 3)",
    ]


def test_every_call_failure_is_an_animalstore_error(
    api: Api, mock_api: respx.MockRouter, sleeps: list[float]
) -> None:
    mock_api.get("/pets").mock(side_effect=httpx.ConnectError("refused"))
    mock_api.post("/pets").respond(200, content=b"{")
    mock_api.get("/pets/1").respond(404)

    for call in (api.list_pets, lambda: api.create_pet(name="x", category_id=1)):
        with pytest.raises(AnimalStoreError):
            call()
    with pytest.raises(AnimalStoreError), pytest.warns(DeprecationWarning, match="5 December 2030"):
        api.get_pet(1)


def test_async_get_pet_is_a_coroutine_that_warns_when_awaited(
    mock_api: respx.MockRouter, loop: asyncio.AbstractEventLoop
) -> None:
    mock_api.get("/pets/7").respond(200, json=PET)
    client = AsyncClient(api_key=API_KEY, base_url=BASE_URL)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pending = client.get_pet(7)  # type: ignore[deprecated]
    assert caught == []
    assert inspect.iscoroutine(pending)
    with pytest.warns(DeprecationWarning, match="5 December 2030"):
        assert loop.run_until_complete(pending).id == 7
    loop.run_until_complete(client.aclose())


def test_importing_the_package_imports_no_more_than_a_call_needs() -> None:
    watched = (
        "asyncio",
        "uuid",
        "email.utils",
        "animalstore_client.testing",
        "argparse",
        "animalstore_client._cli",
        "html",
        "animalstore_client._core.display",
        "opentelemetry",
        "concurrent.futures",
    )

    def loaded_by(imports: str) -> str:
        code = f"import sys, {imports}; print(sorted(m for m in {watched!r} if m in sys.modules))"
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        return result.stdout.strip()

    # Only what the dependencies load themselves: email.utils comes with httpx (through
    # urllib.request), and uuid and html with click where it is installed (Dask brings it),
    # which httpx imports for its command line. argparse, asyncio and the rest wait for their
    # first use (html, a table of 2,000 entities, until a notebook first displays a model).
    assert loaded_by("animalstore_client") == loaded_by("httpx, attrs, cattrs, typing_extensions")
    assert "'email.utils'" in loaded_by("animalstore_client")


def test_a_closed_clients_raw_view_refuses_calls_even_with_a_pool_passed_in(
    mock_api: respx.MockRouter, loop: asyncio.AbstractEventLoop
) -> None:
    route = mock_api.get("/pets").respond(200, json=[])
    http, async_http = httpx.Client(), httpx.AsyncClient()
    client = Client(api_key=API_KEY, base_url=BASE_URL, http_client=http)
    async_client = AsyncClient(api_key=API_KEY, base_url=BASE_URL, http_client=async_http)
    views = (client.with_raw_response, async_client.with_raw_response)

    client.close()
    loop.run_until_complete(async_client.aclose())

    with pytest.raises(RuntimeError, match="this Client is closed"):
        views[0].list_pets()
    with pytest.raises(RuntimeError, match="this AsyncClient is closed"):
        loop.run_until_complete(views[1].list_pets())
    assert route.call_count == 0
    assert not http.is_closed
    http.close()
    loop.run_until_complete(async_http.aclose())


def test_async_list_pets_and_create_pet_check_their_arguments_when_awaited(
    loop: asyncio.AbstractEventLoop, mock_api: respx.MockRouter
) -> None:
    client = AsyncClient(api_key=API_KEY, base_url=BASE_URL)
    pending_list = client.list_pets(limit="7")  # type: ignore[arg-type]
    pending_create = client.create_pet(name="Rex", category_id="3")  # type: ignore[arg-type]

    for awaitable in (pending_list, pending_create):
        with pytest.raises(TypeError):
            loop.run_until_complete(awaitable)
    assert len(mock_api.calls) == 0
    loop.run_until_complete(client.aclose())
