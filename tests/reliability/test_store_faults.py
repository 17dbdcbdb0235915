"""Faults scripted in the built-in store give the SDK's documented outcome on every backend.

Each test runs on every kind of client (``kind``) over a real socket (``store.serve()``, one
server for the module, its store reset before and after each test) and, for the clients the
store hands out (httpx sync and async), in process too: the outcome must be the same in both
places. Retry waits pass on the SDK's clock (the ``clock`` fixture), without being slept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from animalstore_client import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    Pet,
    RateLimitError,
)
from animalstore_client.testing import FakeAnimalStore, Fault, retry_floor
from tests.conftest import VirtualClock
from tests.reliability.conftest import Api

API_KEY = "test-key"
#: A Retry-After that would keep a retry quick (waits pass on the SDK's clock anyway).
QUICK = 0.01
#: A timeout or deadline that a delayed answer outlasts, and that delay.
SHORT = 0.05
LONG_DELAY = 1.0


@pytest.fixture(autouse=True)
def _quick_retry_after(clock: VirtualClock) -> Iterator[None]:
    """Each fault's Retry-After (``QUICK``) is waited as written: these tests are not about the
    floor that keeps a client out of a tight loop (``tests/unit/test_retries.py`` is). Every
    wait passes on the SDK's clock."""
    with retry_floor(0.0):
        yield


@pytest.fixture(scope="module")
def served_store() -> Iterator[tuple[FakeAnimalStore, str]]:
    """One store, served over a socket for the whole module."""
    shared = FakeAnimalStore(api_keys=(API_KEY,))
    with shared.serve() as base_url:
        yield shared, base_url


@pytest.fixture
def store(served_store: tuple[FakeAnimalStore, str]) -> Iterator[FakeAnimalStore]:
    """The module's store, as new: no pets, requests or faults, keys not honoured."""
    shared, _ = served_store

    def renew() -> None:
        shared.reset()
        shared.honour_idempotency_keys = False

    renew()
    yield shared
    renew()


@pytest.fixture(params=["socket", "in-process"])
def connect(
    request: pytest.FixtureRequest,
    served_store: tuple[FakeAnimalStore, str],
    store: FakeAnimalStore,
    kind: str,
    make_client: Callable[..., Api],
    aloop: asyncio.AbstractEventLoop,
) -> Iterator[Callable[..., Api]]:
    """Build a client of the test's kind on the store, over a socket or in process."""
    if request.param == "in-process":
        if kind not in ("sync", "async"):
            pytest.skip("the store hands out in-process clients on httpx only")
        made: list[Api] = []

        def in_process(**options: Any) -> Api:
            options.setdefault("timeout", 5.0)
            factory = store.client if kind == "sync" else store.async_client
            api = Api(factory(**options), aloop, kind)
            made.append(api)
            return api

        yield in_process
        for api in made:
            api.close()
        return
    _, base_url = served_store
    yield lambda **options: make_client(base_url, api_key=API_KEY, **options)


ERRORS = [
    (400, BadRequestError),
    (401, AuthenticationError),
    (403, APIStatusError),
    (404, NotFoundError),
    (409, APIStatusError),
    (422, APIStatusError),
    (429, RateLimitError),
    (500, InternalServerError),
    (502, InternalServerError),
    (503, InternalServerError),
    (504, InternalServerError),
]


@pytest.mark.parametrize(("status", "error_class"), ERRORS)
def test_an_error_fault_raises_the_typed_error_with_its_fields(
    store: FakeAnimalStore,
    connect: Callable[..., Api],
    status: int,
    error_class: type[APIStatusError],
) -> None:
    api = connect(max_retries=0)
    store.inject(Fault.error(status, "custom_code", "custom message", operation="create"))

    with pytest.raises(error_class) as caught:
        api.create_pet(name="Rex", category_id=3)

    assert type(caught.value) is error_class
    exc = caught.value
    assert (exc.status_code, exc.code, exc.message) == (status, "custom_code", "custom message")
    assert len(store.requests) == 1
    assert store.pets == []  # an error fault turns the request away
    assert store.faults == []


def test_a_503_then_success_is_retried_once_with_the_same_idempotency_key(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    api = connect(max_retries=2)
    store.inject(Fault.error(503, retry_after=QUICK, operation="create"))

    pet = api.create_pet(name="Rex", category_id=3)

    assert pet == Pet(id=1, name="Rex", category_id=3)
    first, second = store.requests
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    assert store.pets == [pet]


def test_a_429_with_times_is_retried_until_max_retries_then_raises(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    api = connect(max_retries=2)
    store.inject(Fault.error(429, retry_after=QUICK, times=None))

    with pytest.raises(RateLimitError) as caught:
        api.list_pets()

    assert caught.value.response.headers["retry-after"] == "0.01"
    assert len(store.requests) == 3  # the call and its 2 retries
    assert len(store.faults) == 1  # times=None stays until reset
    store.reset()
    assert store.faults == []
    assert api.list_pets() == []


@pytest.mark.parametrize("reset", [False, True], ids=["hang-up", "reset"])
@pytest.mark.parametrize(
    ("processed", "key", "stored"),
    [
        pytest.param(False, None, [], id="before processing"),
        # Stored; the answer was lost. Even with a key of the caller's, not resent.
        pytest.param(True, "restock-rex", ["Rex"], id="after processing"),
    ],
)
def test_a_dropped_create_raises_maybe_sent_and_is_not_resent(
    store: FakeAnimalStore,
    connect: Callable[..., Api],
    reset: bool,
    processed: bool,
    key: str | None,
    stored: list[str],
) -> None:
    api = connect(max_retries=2)
    store.inject(Fault.drop(processed=processed, reset=reset, operation="create"))

    with pytest.raises(APIConnectionError) as caught:
        api.create_pet(name="Rex", category_id=3, idempotency_key=key)

    assert not isinstance(caught.value, APITimeoutError)
    assert len(store.requests) == 1  # no blind resend of a create
    assert [pet.name for pet in store.pets] == stored


def test_the_callers_own_retry_with_the_same_key_stores_one_animal_when_keys_are_honoured(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    store.honour_idempotency_keys = True
    api = connect(max_retries=2)
    store.inject(Fault.drop(processed=True, operation="create"))
    with pytest.raises(APIConnectionError):
        api.create_pet(name="Rex", category_id=3, idempotency_key="restock-rex")

    pet = api.create_pet(name="Rex", category_id=3, idempotency_key="restock-rex")

    assert store.pets == [pet]
    assert [r.headers["idempotency-key"] for r in store.requests] == ["restock-rex"] * 2


def test_without_honoured_keys_the_same_retry_stores_the_animal_twice(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    api = connect(max_retries=2)
    store.inject(Fault.drop(processed=True, operation="create"))
    with pytest.raises(APIConnectionError):
        api.create_pet(name="Rex", category_id=3, idempotency_key="restock-rex")

    api.create_pet(name="Rex", category_id=3, idempotency_key="restock-rex")

    assert [pet.id for pet in store.pets] == [1, 2]  # what the docs warn of


@pytest.mark.parametrize(
    "fault", [Fault.drop(processed=False), Fault.drop(processed=True, reset=True)]
)
def test_a_dropped_list_is_retried(
    store: FakeAnimalStore, connect: Callable[..., Api], fault: Fault
) -> None:
    api = connect(max_retries=1)
    store.add_pet("Rex", 3)
    store.inject(fault)

    assert [pet.name for pet in api.list_pets()] == ["Rex"]
    assert len(store.requests) == 2


def test_a_delay_past_the_deadline_raises_a_timeout_and_the_create_is_stored(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    api = connect(max_retries=2)
    store.inject(Fault.delay(LONG_DELAY, operation="create"))

    with pytest.raises(APITimeoutError):
        api.create_pet(name="Rex", category_id=3, deadline=SHORT)

    assert store.wait_for_requests(1, timeout=5)  # over a socket, maybe read after the deadline
    assert len(store.requests) == 1
    assert [pet.name for pet in store.pets] == ["Rex"]  # processed, answered too late


def test_a_short_delay_is_only_slow(store: FakeAnimalStore, connect: Callable[..., Api]) -> None:
    api = connect(max_retries=0)
    store.inject(Fault.delay(0.05))

    assert api.list_pets() == []


def test_a_delay_past_the_read_timeout_is_retried_for_a_list(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    api = connect(max_retries=1, timeout=SHORT)
    store.inject(Fault.delay(LONG_DELAY, operation="list"))

    assert api.list_pets() == []
    assert len(store.requests) == 2


@pytest.mark.parametrize(
    "fault", [Fault.malformed("not_json"), Fault.malformed("wrong_schema")], ids=lambda f: f.kind
)
def test_a_malformed_answer_raises_response_validation_error(
    store: FakeAnimalStore, connect: Callable[..., Api], fault: Fault
) -> None:
    api = connect(max_retries=2)
    store.inject(fault)

    with pytest.raises(APIResponseValidationError):
        api.create_pet(name="Rex", category_id=3)

    assert len(store.requests) == 1
    assert len(store.pets) == 1


def test_a_truncated_create_answer_is_maybe_sent_and_a_list_is_retried(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    api = connect(max_retries=1)
    store.inject(
        Fault.malformed("truncated", operation="create"),
        Fault.malformed("truncated", operation="list"),
    )

    with pytest.raises(APIConnectionError):
        api.create_pet(name="Rex", category_id=3)
    assert [pet.name for pet in api.list_pets()] == ["Rex"]

    assert [request.method for request in store.requests] == ["POST", "GET", "GET"]


def test_faults_apply_in_order_to_their_operation_only(
    store: FakeAnimalStore, connect: Callable[..., Api]
) -> None:
    api = connect(max_retries=0)
    store.inject(
        Fault.error(500, operation="create"),
        Fault.error(404, operation="list", times=2),
        Fault.error(400),
    )

    with pytest.raises(NotFoundError):
        api.list_pets()
    with pytest.raises(InternalServerError):
        api.create_pet(name="Rex", category_id=3)
    with pytest.raises(NotFoundError):
        api.list_pets()
    with pytest.raises(BadRequestError):
        api.list_pets()
    assert api.list_pets() == []
