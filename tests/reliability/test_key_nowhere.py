"""The API key is nowhere it was not sent: after a client's calls, errors and close, no object
the process can reach (from its modules or through the garbage collector) holds it.

This is the guard for the next cache: whatever an SDK module, a backend or a library keeps of
what was sent, if it holds the key after the client is gone, the walk below finds it, on every
backend (httpx and httpx2, sync and async, aiohttp) and on the store's in-process clients.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import logging
import operator
import pickle
import secrets
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, compress, filterfalse, repeat
from typing import Any

import httpx
import pytest

from animalstore_client import (
    APIConnectionError,
    APIResponseValidationError,
    AsyncClient,
    AuthenticationError,
    Client,
    DefaultAioHttpClient,
    DefaultAsyncHttpx2Client,
    DefaultHttpx2Client,
    InternalServerError,
)
from animalstore_client._core.wire import REDACTED
from animalstore_client.testing import FakeAnimalStore, retry_floor
from tests.reliability.conftest import (
    PET,
    SYNC_KINDS,
    Api,
    close_in,
    error_body,
    free_port,
)
from tests.reliability.faultserver import FaultServer, Hangup, Reply


class Secret:
    """A fresh random key that the test itself never keeps as a ``str``.

    The walk compares against strings made for it and left out of it by identity; what the
    test holds is the key reversed, which contains no occurrence of it.
    """

    def __init__(self) -> None:
        self._reversed = f"sk-nowhere-{secrets.token_hex(12)}"[::-1]

    def key(self) -> str:
        """A new ``str`` of the key, to hand to a client (which may keep that very object)."""
        return self._reversed[::-1]

    def holders(self) -> list[str]:
        """What, reachable from the modules or the collector, holds the key (str or bytes,
        alone or as ``Bearer <key>``); each found text described by the object holding it.

        Every object the collector tracks is a root (``gc.get_objects()``, after two full
        collections have freed what nothing reaches); what no root is, a string, bytes or a
        container the collector stopped tracking (a tuple or dict of atoms only), is reached
        from the roots through ``gc.get_referents``, level by level, until nothing untracked is
        left. A dict's string keys are searched too: CPython's collector does not visit them
        (strings make no cycles), so ``gc.get_referents`` never gives them. Each level is
        filtered and searched by C loops (``filterfalse``, ``compress``), not one Python step
        per object: the walk costs a few hundred milliseconds on the heap of a whole run of
        the suite, where walking it object by object took seconds.
        """
        needle = self.key()
        raw = needle.encode()
        gc.collect()
        gc.collect()
        # Objects ``gc.freeze()`` set aside are no roots: the walk would not see into them.
        assert gc.get_freeze_count() == 0, "the heap walk needs no frozen objects"
        collecting = gc.isenabled()
        gc.disable()  # no collection (and no finalizer) runs while the walk holds the heap
        try:
            return self._walk(needle, raw)
        finally:
            if collecting:
                gc.enable()

    def _walk(self, needle: str, raw: bytes) -> list[str]:
        level: list[Any] = [sys.modules, *gc.get_objects()]
        walker = sys._getframe()
        found: list[str] = []
        found_ids: set[int] = set()
        while level:
            dicts = instances(level, dict)
            keys = list(chain.from_iterable(map(dict.keys, dicts)))
            referents = gc.get_referents(*level)
            untracked = list(filterfalse(gc.is_tracked, chain(referents, keys)))
            del dicts, keys, referents
            hits: list[Any] = []
            searches: tuple[tuple[Any, Any], ...] = ((needle, str), (raw, bytes), (raw, bytearray))
            for text, kind in searches:
                # Untracked objects are strings, numbers, and tuples and dicts of them (C types,
                # whose ``isinstance`` runs no Python code).
                texts = list(filter(kind.__instancecheck__, untracked))
                hits += compress(texts, map(kind.__contains__, texts, repeat(text)))
            del texts
            new = []
            for hit in hits:
                if hit is not needle and hit is not raw and id(hit) not in found_ids:
                    found_ids.add(id(hit))
                    new.append(hit)
            if new:
                found += map(describe, holders_of(new, level, walker))
            del hits, new
            level = untracked
        return found


def instances(objects: list[Any], kind: type) -> list[Any]:
    """The objects whose type is ``kind`` or a subclass of it, in order; in C loops. By their
    real type: a mock made with ``spec=dict`` says it is a dict, and is none."""
    claimed = list(filter(kind.__instancecheck__, objects))
    return list(compress(claimed, map(issubclass, map(type, claimed), repeat(kind))))


def holders_of(hits: list[Any], level: list[Any], walker: object) -> list[object]:
    """For each of ``hits`` (the walk's findings in ``level``'s referents), an object of
    ``level`` that holds it as a dict's key or as a referent, other than the walk's own frame (a
    root on Python 3.10, whose locals hold each finding in turn); sought by identity, in C
    loops, in one pass over ``level`` for all of them."""
    missing = {id(hit) for hit in hits}
    holders: dict[int, object] = {}
    dicts = instances(level, dict)
    contents: Callable[[Any], Iterable[Any]]
    for candidates, contents in ((dicts, dict.keys), (level, gc.get_referents)):
        if not missing:
            break
        apart = map(missing.isdisjoint, map(map, repeat(id), map(contents, candidates)))
        for candidate in compress(candidates, map(operator.not_, apart)):
            if candidate is not walker:
                for target in missing.intersection(map(id, contents(candidate))):
                    holders.setdefault(target, candidate)
        missing -= holders.keys()
    if missing:
        raise AssertionError(f"no holder found for {len(missing)} of the walk's findings")
    return [holders[id(hit)] for hit in hits]


def describe(holder: object) -> str:
    """The holder's type (a frame shown too, for the function that holds the key)."""
    kind = type(holder)
    shown = repr(holder)[:200] if isinstance(holder, types.FrameType) else ""
    return f"{kind.__module__}.{kind.__qualname__} {shown}".strip()


#: The walk over the whole heap crashes CPython 3.12.1 (a segmentation fault inside
#: ``gc.get_referents``, after aiohttp's calls, in a full run); it runs on 3.10, 3.11 and 3.13.
walks_the_heap = pytest.mark.skipif(
    sys.version_info[:2] == (3, 12),
    reason="gc.get_referents over the whole heap crashes CPython 3.12.1 after aiohttp's calls",
)


@pytest.fixture
def secret() -> Secret:
    return Secret()


def http_client_of(kind: str, **options: Any) -> Any:
    """The ``http_client`` for a client of ``kind`` (``None``: the SDK's own pool).

    For ``"aiohttp"``, call it inside a coroutine.
    """
    factories: dict[str, Callable[..., Any]] = {
        "aiohttp": DefaultAioHttpClient,
        "httpx2-sync": DefaultHttpx2Client,
        "httpx2-async": DefaultAsyncHttpx2Client,
        "sync": httpx.Client,
        "async": httpx.AsyncClient,
    }
    if not options and kind in ("sync", "async"):
        return None
    return factories[kind](**options)


@pytest.fixture
def sdk_debug_log() -> Iterator[None]:
    """The SDK logs at DEBUG, each attempt's outcome included, to a handler that keeps them."""
    logger = logging.getLogger("animalstore_client")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    yield
    logger.setLevel(level)


@walks_the_heap
def test_no_object_holds_the_key_after_a_clients_calls_errors_refusal_and_close(
    kind: str, aloop: asyncio.AbstractEventLoop, secret: Secret, sdk_debug_log: None
) -> None:
    """Both of a backend's stories, then one walk (a walk costs most of a test): a client's
    calls, errors and close against a server, and a client whose connection is refused."""
    with retry_floor(0.0):
        server = FaultServer().start()
        try:
            run_on_backend(kind, aloop, secret.key(), server)
            assert server.requests[0].header("authorization") == f"Bearer {secret.key()}"
        finally:
            server.close()
    del server
    refused_on_backend(kind, aloop, secret.key())

    assert secret.holders() == []


def run_on_backend(
    kind: str, aloop: asyncio.AbstractEventLoop, key: str, server: FaultServer
) -> None:
    """Make a client of ``kind`` with ``key``, exercise it, close it and its library's client."""

    async def make_http() -> Any:
        return http_client_of(kind)

    http = aloop.run_until_complete(make_http())
    options: dict[str, Any] = {"api_key": key, "base_url": server.base_url, "http_client": http}
    client = Client(**options) if kind in SYNC_KINDS else AsyncClient(**options)
    api = Api(client, aloop, kind)
    try:
        calls(api, server)
    finally:
        api.close()
        if http is not None:
            close_in(aloop, http)


def calls(api: Api, server: FaultServer) -> None:
    """Calls that succeed, retry, fail with an answer and fail without one; raw ones too."""
    server.script(
        Reply(200, json=[PET]),
        Reply(503, headers={"Retry-After": "0.01"}),
        Reply(201, json=PET),
        Reply(200, json=[PET]),
        Reply(401, json=error_body(401, "unauthorized")),
        Hangup(),
    )
    assert len(api.list_pets()) == 1
    api.create_pet(name="Rex", category_id=3)
    raw = api.raw.list_pets()
    assert raw.status_code == 200
    assert raw.http_response.request.method == "GET"  # views are built when first read
    del raw
    with pytest.raises(AuthenticationError):
        api.list_pets()
    with pytest.raises(APIConnectionError):
        api.with_options(max_retries=0).list_pets()
    assert len(server.requests) == 6


def refused_on_backend(kind: str, aloop: asyncio.AbstractEventLoop, key: str) -> None:
    """Make a client of ``kind`` with ``key``, call where nothing listens, close it and its
    library's client."""

    async def make_http() -> Any:
        return http_client_of(kind)

    http = aloop.run_until_complete(make_http())
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    options: dict[str, Any] = {"api_key": key, "base_url": base_url, "http_client": http}
    client = Client(**options) if kind in SYNC_KINDS else AsyncClient(**options)
    api = Api(client, aloop, kind)
    with pytest.raises(APIConnectionError):
        api.with_options(max_retries=0).list_pets()
    api.close()
    if http is not None:
        close_in(aloop, http)


@walks_the_heap
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_no_object_holds_the_key_after_the_stores_in_process_clients_are_dropped(
    flavour: str, aloop: asyncio.AbstractEventLoop, secret: Secret, sdk_debug_log: None
) -> None:
    store = FakeAnimalStore(api_keys={secret.key()})
    api = Api(store.client() if flavour == "sync" else store.async_client(), aloop, flavour)
    api.create_pet(name="Rex", category_id=3)
    assert len(api.list_pets()) == 1
    assert api.raw.list_pets().status_code == 200
    with pytest.raises(AuthenticationError):
        api.with_options(api_key=secret.key() + "-wrong").list_pets()
    assert store.requests[0].headers["authorization"] == f"Bearer {secret.key()}"
    api.close()
    del api, store

    assert secret.holders() == []


@pytest.fixture
def module_state(secret: Secret) -> Iterator[types.ModuleType]:
    """A module that keeps the key (as the httpx family's cache did): as a str, as bytes,
    inside a ``Bearer`` value, and as a dict's key (a cache by credentials: the collector never
    shows a dict's string keys)."""
    module = types.ModuleType("tests_reliability_fake_cache")
    module.caches = [  # type: ignore[attr-defined]
        {"authorization": secret.key()},
        {"authorization": secret.key().encode()},
        {"authorization": f"Bearer {secret.key()}"},
        {f"Bearer {secret.key()}": "a pool"},
    ]
    module.pools = {secret.key(): "a pool"}  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


@walks_the_heap
def test_the_walk_finds_a_key_that_a_module_keeps(
    secret: Secret, module_state: types.ModuleType
) -> None:
    """The guard guards: each text that holds the key is found, described by its holder."""
    assert secret.holders() == ["builtins.dict"] * 5


@walks_the_heap
def test_the_walk_finds_no_key_once_the_module_drops_it(
    secret: Secret, module_state: types.ModuleType
) -> None:
    del module_state.caches, module_state.pools
    assert secret.holders() == []


# -- a raw response pickles without the key ---------------------------------------------------


PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)


def check_pickled_raw_responses(api: Api, key: str) -> None:
    """A raw response to each operation pickles and copies without the key, and keeps what a
    user reads of it: status, headers, body, the parsed result, the request's method and URL."""
    raws = [
        api.raw.list_pets(),
        api.raw.create_pet(name="Rex", category_id=3),
    ]
    for raw in raws:
        copies = [pickle.loads(pickle.dumps(raw, protocol)) for protocol in PROTOCOLS]
        for protocol in PROTOCOLS:
            data = pickle.dumps(raw, protocol)
            assert key.encode() not in data
        copies.append(copy.deepcopy(raw))
        for copied in copies:
            assert type(copied) is type(raw)
            assert copied.status_code == raw.status_code
            assert copied.content == raw.content
            assert copied.headers == raw.headers
            assert copied.request_id == raw.request_id
            assert copied.retries_taken == raw.retries_taken
            assert copied.parse() == raw.parse()
            request = copied.http_response.request
            assert (request.method, request.url) == (
                raw.http_response.request.method,
                raw.http_response.request.url,
            )
            assert "authorization" not in copied.http_response.request.headers


def test_a_raw_response_pickles_without_the_key(
    server: FaultServer, make_client: Callable[..., Api], secret: Secret
) -> None:
    server.script(Reply(200, json=[PET], headers={"x-request-id": "req_9"}), Reply(201, json=PET))
    api = make_client(server, api_key=secret.key())

    check_pickled_raw_responses(api, secret.key())

    assert [r.header("authorization") for r in server.requests] == [f"Bearer {secret.key()}"] * 2


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_raw_response_of_the_stores_in_process_clients_pickles_without_the_key(
    flavour: str, aloop: asyncio.AbstractEventLoop, secret: Secret
) -> None:
    store = FakeAnimalStore(api_keys={secret.key()})
    api = Api(store.client() if flavour == "sync" else store.async_client(), aloop, flavour)
    try:
        check_pickled_raw_responses(api, secret.key())
    finally:
        api.close()


# -- a message the SDK takes from elsewhere has no key ------------------------------------------


def quoting_hook_client(kind: str, error: type[Exception]) -> Any:
    """A user's own client whose request hook (middleware, for aiohttp) refuses every request
    with an ``error`` whose message quotes its ``Authorization`` header, as text and as bytes."""

    def refusal(value: str) -> Exception:
        return error(f"refused {value} (raw {value.encode()!r})")

    def hook(request: Any) -> None:
        raise refusal(request.headers["authorization"])

    async def async_hook(request: Any) -> None:
        raise refusal(request.headers["authorization"])

    async def middleware(request: Any, handler: Any) -> Any:
        raise refusal(request.headers["Authorization"])

    if kind == "aiohttp":
        return DefaultAioHttpClient(middlewares=(middleware,))
    hooks = {"request": [hook if kind in SYNC_KINDS else async_hook]}
    return http_client_of(kind, event_hooks=hooks)


@pytest.mark.parametrize("hook_error", [ValueError, RuntimeError, TypeError])
def test_a_hooks_message_quoting_the_key_reaches_no_exception_pickle_or_log_line(
    server: FaultServer,
    kind: str,
    hook_error: type[Exception],
    aloop: asyncio.AbstractEventLoop,
    secret: Secret,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")

    async def make_http() -> Any:
        return quoting_hook_client(kind, hook_error)

    http = aloop.run_until_complete(make_http())
    options: dict[str, Any] = {
        "api_key": secret.key(),
        "base_url": server.base_url,
        "http_client": http,
        "max_retries": 2,
    }
    api = Api(Client(**options) if kind in SYNC_KINDS else AsyncClient(**options), aloop, kind)
    try:
        with pytest.raises(APIConnectionError) as caught:
            api.list_pets()
    finally:
        api.close()
        close_in(aloop, http)

    error = caught.value
    assert type(error) is APIConnectionError
    # What the hook said is there, the key replaced by the marker (the Bearer value whole).
    assert f"{hook_error.__name__}: refused {REDACTED} (raw b'{REDACTED}')" in error.message
    shown = [str(error), repr(error), repr(error.args), error.message]
    shown += [pickle.dumps(error, protocol).decode("latin-1") for protocol in PROTOCOLS]
    lines = [r.getMessage() for r in caplog.records if r.name == "animalstore_client"]
    assert any(REDACTED in line for line in lines)  # the attempt's DEBUG line
    shown += lines
    assert [text for text in shown if secret.key() in text] == []
    assert server.requests == []  # the hook refused before anything was sent


def test_a_server_that_echoes_the_key_gets_it_redacted_in_the_sdks_errors(
    server: FaultServer, make_client: Callable[..., Api], secret: Secret
) -> None:
    key = secret.key()
    server.script(
        Reply(401, json=error_body(401, f"bad_{key}", f"invalid key Bearer {key}")),
        Reply(200, json={"id": key, "name": "Rex", "categoryId": 3}),
        Reply(502, body=f"<html>proxy: upstream refused {key}</html>".encode()),
    )
    api = make_client(server, api_key=key, max_retries=0)

    with pytest.raises(AuthenticationError) as refused:
        api.list_pets()
    with pytest.raises(APIResponseValidationError) as invalid:
        api.get_pet(1)
    with pytest.raises(InternalServerError) as failed:
        api.get_pet(1)
    errors: list[Exception] = [refused.value, invalid.value, failed.value]

    assert refused.value.message == f"invalid key {REDACTED}"
    assert refused.value.error is not None
    assert (refused.value.error.code, refused.value.error.message) == (
        f"bad_{REDACTED}",
        f"invalid key {REDACTED}",
    )
    assert str(refused.value) == f"401 bad_{REDACTED}: invalid key {REDACTED}"
    assert str(invalid.value).endswith(f"expected an integer, got str '{REDACTED}'")
    assert failed.value.message == f"<html>proxy: upstream refused {REDACTED}</html>"
    shown = [text for error in errors for text in (str(error), repr(error), repr(error.args))]
    assert [text for text in shown if key in text] == []


def test_a_raw_response_whose_body_echoes_the_key_parses_to_a_redacted_error(
    server: FaultServer, make_client: Callable[..., Api], secret: Secret
) -> None:
    key = secret.key()
    server.script(Reply(200, json={"id": key, "name": "Rex", "categoryId": 3}))
    api = make_client(server, api_key=key, max_retries=0)
    raw = api.raw.call("get_pet", 1)

    with pytest.raises(APIResponseValidationError) as invalid:
        raw.parse()

    assert str(invalid.value).endswith(f"expected an integer, got str '{REDACTED}'")
    assert key not in repr(invalid.value.args)
