"""A client travels to other processes: its settings pickle, its key and its pool never do.

In the process that unpickles it, the key comes from the key provider the client was built
with, else from ``ANIMALSTORE_API_KEY`` there, for each call; neither is a one-line error,
raised before anything is sent. Proved in process (the pickle's bytes, what the copy sends to a
store on a real socket) and in worker processes started by spawn and by fork.
"""

from __future__ import annotations

import asyncio
import copy
import multiprocessing
import pickle
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx
import pytest
import respx

from animalstore_client import (
    APIResponseValidationError,
    AsyncClient,
    AuthenticationError,
    Client,
    RetryPolicy,
)
from animalstore_client.testing import FakeAnimalStore
from tests.conftest import BASE_URL
from tests.field import workers

KEY = "sk-travel-SECRET-91c4"
OTHER_KEY = "sk-travel-ROTATED-5d2e"
PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)
POLICY = RetryPolicy(max_retries=1, initial_delay=0.25, statuses={500, 503})
SETTINGS = {
    "timeout": httpx.Timeout(7.0, connect=2.0),
    "retry": POLICY,
    "default_headers": {"X-Team": "pets"},
    "max_response_bytes": 4096,
    "deadline": 12.5,
}


@pytest.fixture(scope="module")
def store_url() -> Iterator[tuple[FakeAnimalStore, str]]:
    """One store on a real socket for the module; each test resets it."""
    store = FakeAnimalStore(api_keys=(KEY, OTHER_KEY), honour_idempotency_keys=True)
    with store.serve() as base_url:
        yield store, base_url


@pytest.fixture
def store(store_url: tuple[FakeAnimalStore, str]) -> FakeAnimalStore:
    store_url[0].reset()
    store_url[0].add_pet("Rex", 3)
    return store_url[0]


@pytest.fixture
def base_url(store_url: tuple[FakeAnimalStore, str]) -> str:
    return store_url[1]


def settings_of(client: Client | AsyncClient) -> tuple[object, ...]:
    return (
        client.base_url,
        client.timeout,
        client.retry,
        dict(client._options.default_headers),
        client.max_response_bytes,
        client.deadline,
    )


@pytest.mark.parametrize("cls", [Client, AsyncClient])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_settings_travel_and_the_key_does_not(
    cls: type[Client] | type[AsyncClient], protocol: int
) -> None:
    client = cls(api_key=KEY, base_url="https://api.test/v1", **SETTINGS)  # type: ignore[arg-type]
    copied = client.with_options(max_retries=0)

    for original in (client, copied):
        data = pickle.dumps(original, protocol)
        assert KEY.encode() not in data
        assert b"Bearer" not in data
        restored = pickle.loads(data)
        assert type(restored) is cls
        assert settings_of(restored) == settings_of(original)
        assert restored._options.api_key is None  # each call asks for the key
        assert restored._pool is not original._pool
        assert restored._pool.owned


def test_a_raw_view_travels_as_its_client_s_view() -> None:
    client = Client(api_key=KEY, base_url="https://api.test/v1", max_retries=4)

    restored = pickle.loads(pickle.dumps(client.with_raw_response))

    assert type(restored).__name__ == "RawResponses"
    assert restored._client.max_retries == 4
    assert restored._client.with_raw_response is restored


def test_an_unpickled_client_reads_its_key_from_the_environment_for_each_call(
    store: FakeAnimalStore, base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Client(api_key=KEY, base_url=base_url) as client:
        restored = pickle.loads(pickle.dumps(client))

    monkeypatch.setenv("ANIMALSTORE_API_KEY", KEY)
    assert [pet.name for pet in restored.list_pets()] == ["Rex"]
    monkeypatch.setenv("ANIMALSTORE_API_KEY", OTHER_KEY)  # rotated between two calls
    assert [pet.name for pet in restored.list_pets()] == ["Rex"]
    restored.close()

    assert [request.headers["authorization"] for request in store.requests] == [
        f"Bearer {KEY}",
        f"Bearer {OTHER_KEY}",
    ]


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_without_a_key_anywhere_a_call_says_so_in_one_line_before_sending(
    cls: type[Client] | type[AsyncClient], store: FakeAnimalStore, base_url: str
) -> None:
    restored = pickle.loads(pickle.dumps(cls(api_key=KEY, base_url=base_url)))

    def call() -> object:
        result = restored.list_pets()
        return asyncio.run(result) if isinstance(restored, AsyncClient) else result

    with pytest.raises(ValueError, match=r"^no API key in this process") as caught:
        call()

    assert str(caught.value) == (
        "no API key in this process: a pickled client carries no key; set ANIMALSTORE_API_KEY "
        "here, or build the client with api_key= a function that returns the key"
    )
    assert store.requests == []


def test_a_key_provider_is_called_for_each_call_and_may_rotate(
    store: FakeAnimalStore, base_url: str, tmp_path: Path
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    calls: list[str] = []

    def provider() -> str:
        calls.append("called")
        return key_file.read_text()

    with Client(api_key=provider, base_url=base_url) as client:
        client.list_pets()
        client.with_options(max_retries=0).list_pets()
        key_file.write_text(OTHER_KEY)
        client.with_raw_response.list_pets()

    assert len(calls) == 3
    assert [request.headers["authorization"] for request in store.requests] == [
        f"Bearer {KEY}",
        f"Bearer {KEY}",
        f"Bearer {OTHER_KEY}",
    ]


def test_a_provider_wins_over_the_environment_after_pickling(
    store: FakeAnimalStore, base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(OTHER_KEY)
    monkeypatch.setenv("ANIMALSTORE_API_KEY", KEY)
    client = Client(api_key=workers.KeyFile(str(key_file)), base_url=base_url)

    data = pickle.dumps(client)
    restored = pickle.loads(data)
    restored.list_pets()
    restored.close()

    assert OTHER_KEY.encode() not in data
    assert store.requests[0].headers["authorization"] == f"Bearer {OTHER_KEY}"


@pytest.mark.parametrize(
    ("returned", "error", "message"),
    [
        (None, TypeError, "the api_key provider's key must be a str, got NoneType"),
        (b"sk-bytes", TypeError, "the api_key provider's key must be a str, got bytes"),
        ("", ValueError, "the api_key provider's key must be non-empty printable ASCII"),
        ("two words", ValueError, "the api_key provider's key must be non-empty printable"),
    ],
)
def test_a_provider_s_unusable_key_is_refused_before_sending(
    store: FakeAnimalStore, base_url: str, returned: object, error: type[Exception], message: str
) -> None:
    client = Client(api_key=lambda: returned, base_url=base_url)  # type: ignore[arg-type,return-value]
    with client, pytest.raises(error) as caught:
        client.list_pets()

    assert str(caught.value).startswith(message)
    assert store.requests == []


def test_a_provider_s_own_error_reaches_the_caller_as_it_is(
    store: FakeAnimalStore, base_url: str
) -> None:
    class VaultDown(Exception):
        pass

    def provider() -> str:
        raise VaultDown("the vault is sealed")

    client = Client(api_key=provider, base_url=base_url)
    with client, pytest.raises(VaultDown, match="the vault is sealed"):
        client.list_pets()

    assert store.requests == []


def test_a_provider_s_key_is_redacted_from_the_errors_of_its_call(
    mock_api: respx.MockRouter,
) -> None:
    # A server that quotes the key it refused: the error of the call, raw or not, shows it
    # redacted.
    key = "sk-not-accepted-7"
    body = {"code": "unauthorized", "message": f"unknown key {key}", "status": 401}
    mock_api.get("/pets").respond(401, json=body)
    client = Client(api_key=lambda: key, base_url=BASE_URL)

    with pytest.raises(AuthenticationError) as caught:
        client.list_pets()
    with pytest.raises(AuthenticationError) as raw:
        client.with_raw_response.list_pets()
    client.close()

    for error in (caught.value, raw.value):
        assert error.message == "unknown key [redacted]"
        assert key not in str(error)


def test_a_client_on_the_user_s_own_http_client_refuses_in_one_line() -> None:
    with httpx.Client() as http, Client(api_key=KEY, http_client=http) as client:
        with pytest.raises(TypeError) as caught:
            pickle.dumps(client)
        with pytest.raises(TypeError):
            pickle.dumps(client.with_options(max_retries=0))

    assert str(caught.value) == (
        "a Client built on your own http_client= cannot be pickled: build the Client in the "
        "process that uses it"
    )


def test_tracing_travels_as_a_setting_and_a_tracer_provider_refuses() -> None:
    from opentelemetry.sdk.trace import TracerProvider

    traced = Client(api_key=KEY, base_url="https://api.test/v1", tracing=True)
    untraced = Client(api_key=KEY, base_url="https://api.test/v1", tracing=False)
    own = Client(api_key=KEY, base_url="https://api.test/v1", tracing=TracerProvider())

    assert pickle.loads(pickle.dumps(traced))._options.tracing is True
    assert pickle.loads(pickle.dumps(untraced))._options.tracing is None
    with pytest.raises(TypeError) as caught:
        pickle.dumps(own)
    assert str(caught.value) == (
        "a Client with tracing= a tracer provider cannot be pickled (the provider belongs to "
        "this process): use tracing=True, the worker's global provider"
    )
    for client in (traced, untraced, own):
        client.close()


def test_copies_are_still_refused() -> None:
    client = Client(api_key=KEY, base_url="https://api.test/v1")
    with pytest.raises(TypeError, match="cannot be copied;"):
        copy.deepcopy(client)
    client.close()


def spawned(variables: dict[str, str]) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=workers.set_environment,
        initargs=(variables,),
    )


@pytest.mark.timeout(60)
def test_a_spawned_worker_takes_its_key_from_its_environment_or_says_it_has_none(
    store: FakeAnimalStore, base_url: str
) -> None:
    client = Client(api_key=KEY, base_url=base_url)
    aclient = AsyncClient(api_key=KEY, base_url=base_url)

    with spawned({"ANIMALSTORE_API_KEY": OTHER_KEY}) as keyed:
        assert keyed.submit(workers.pet_ids, client).result(timeout=30) == [1]
        assert keyed.submit(workers.async_pet_ids, aclient).result(timeout=30) == [1]
    with spawned({}) as keyless, pytest.raises(ValueError, match=r"^no API key in this process"):
        keyless.submit(workers.pet_ids, client).result(timeout=30)

    assert [request.headers["authorization"] for request in store.requests] == [
        f"Bearer {OTHER_KEY}"
    ] * 2
    client.close()


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
@pytest.mark.timeout(60)
def test_forked_workers_create_each_record_exactly_once_with_a_rotating_key_provider(
    store: FakeAnimalStore, base_url: str, tmp_path: Path
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    client = Client(api_key=workers.KeyFile(str(key_file)), base_url=base_url)
    client.list_pets()  # the parent's pool is open: the workers must not use it
    names = [f"pet{n}" for n in range(12)]
    context = multiprocessing.get_context("fork")

    with ProcessPoolExecutor(2, mp_context=context) as pool:
        first = list(pool.map(workers.create, [client] * 6, names[:6]))
        key_file.write_text(OTHER_KEY)
        # Half again, and the rest: a record sent twice is answered from its key, not created.
        second = list(pool.map(workers.create, [client] * 9, names[3:]))

    stored = {pet.name: pet.id for pet in store.pets}
    assert sorted(stored) == sorted(["Rex", *names])
    assert first + second == [stored[name] for name in names[:6] + names[3:]]
    creates = [request for request in store.requests if request.method == "POST"]
    assert [request.headers["authorization"] for request in creates] == (
        [f"Bearer {KEY}"] * 6 + [f"Bearer {OTHER_KEY}"] * 9
    )
    client.close()


def test_a_raw_response_parsed_later_redacts_its_call_s_provider_key(
    mock_api: respx.MockRouter,
) -> None:
    # The options never held this key: the raw response keeps it to redact its own errors.
    key = "sk-provided-only-7777"
    mock_api.get("/pets").respond(200, json=[{"id": key, "name": "Rex", "categoryId": 3}])
    client = Client(api_key=lambda: key, base_url=BASE_URL)
    raw = client.with_raw_response.list_pets()
    client.close()
    del client

    with pytest.raises(APIResponseValidationError) as caught:
        raw.parse()

    assert str(caught.value) == (
        "response body does not fit the schema: $[0].id: expected an integer, got str '[redacted]'"
    )
