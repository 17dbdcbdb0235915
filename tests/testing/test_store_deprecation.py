"""The fake store's deprecation signals: its defaults, set_deprecation, and the SDK end to end."""

from __future__ import annotations

import asyncio
import inspect
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from animalstore_client import Client, NotFoundError
from animalstore_client.testing import FakeAnimalStore
from tests.contract.operations import operations

KEY = "test-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
GET_PET_SIGNALS = {"deprecation": "@1796428800", "sunset": "Thu, 05 Dec 2030 00:00:00 GMT"}
UTC = timezone.utc


@pytest.fixture
def store() -> FakeAnimalStore:
    store = FakeAnimalStore(api_keys=[KEY])
    store.add_pet("Rex", 3, "available")
    return store


@pytest.fixture
def http(store: FakeAnimalStore) -> Iterator[httpx.Client]:
    with httpx.Client(
        transport=store.transport(), base_url="http://fake.test/v1", headers=AUTH
    ) as client:
        yield client


def signals(response: httpx.Response) -> dict[str, str]:
    return {
        name: response.headers[name]
        for name in ("deprecation", "sunset", "link")
        if name in response.headers
    }


def test_get_pet_answers_carry_the_specs_signals_by_default(http: httpx.Client) -> None:
    assert signals(http.get("/pets/1")) == GET_PET_SIGNALS
    assert signals(http.get("/pets/99")) == GET_PET_SIGNALS  # a 404 too
    assert signals(http.get("/pets")) == {}
    assert signals(http.post("/pets", json={"name": "Tom", "categoryId": 1})) == {}
    # A 401 comes before routing, a 405 is no operation: neither carries them.
    assert signals(http.get("/pets/1", headers={"Authorization": "Bearer wrong"})) == {}
    assert signals(http.delete("/pets/1")) == {}


def test_set_deprecation_announces_any_operation(
    store: FakeAnimalStore, http: httpx.Client
) -> None:
    store.set_deprecation(
        "GET /pets",
        deprecation=datetime(2027, 1, 1, tzinfo=UTC),
        sunset=datetime(2028, 2, 29, 12, 30, tzinfo=UTC),
        link="https://example.com/deprecations#list?x=1",
    )
    store.set_deprecation(
        "POST /pets", sunset=datetime(2031, 6, 1, 2, 0, tzinfo=timezone(timedelta(hours=3)))
    )

    assert signals(http.get("/pets")) == {
        "deprecation": "@1798761600",
        "sunset": "Tue, 29 Feb 2028 12:30:00 GMT",
        "link": '<https://example.com/deprecations#list?x=1>; rel="deprecation"',
    }
    assert signals(http.get("/pets", params={"limit": "0"})) == signals(http.get("/pets"))
    assert signals(http.post("/pets", json={"name": "Tom", "categoryId": 1})) == {
        "sunset": "Sat, 31 May 2031 23:00:00 GMT"
    }
    assert signals(http.get("/pets/1")) == GET_PET_SIGNALS


def test_a_link_without_a_deprecation_date_is_a_sunset_link(
    store: FakeAnimalStore, http: httpx.Client
) -> None:
    store.set_deprecation("GET /pets", sunset=datetime(2030, 1, 1, tzinfo=UTC), link="https://x/s")
    assert http.get("/pets").headers["link"] == '<https://x/s>; rel="sunset"'


def test_set_deprecation_without_dates_turns_the_signals_off_and_reset_keeps_them(
    store: FakeAnimalStore, http: httpx.Client
) -> None:
    store.set_deprecation("GET /pets", deprecation=datetime(2027, 1, 1, tzinfo=UTC))
    store.set_deprecation("GET /pets/{petId}")
    store.reset()
    store.add_pet("Rex", 3)

    assert signals(http.get("/pets/1")) == {}
    assert signals(http.get("/pets")) == {"deprecation": "@1798761600"}


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        (
            {"operation": "GET /pets/7"},
            ValueError,
            "operation must be one of "
            + ", ".join(repr(operation.route) for operation in operations())
            + ", got",
        ),
        ({"operation": "get /pets"}, ValueError, "operation must be one of"),
        (
            {"operation": "GET /pets", "deprecation": datetime(2027, 1, 1)},
            ValueError,
            "deprecation must be timezone-aware",
        ),
        (
            {"operation": "GET /pets", "sunset": "Thu, 05 Dec 2030 00:00:00 GMT"},
            TypeError,
            "sunset must be a datetime, got str",
        ),
        (
            {"operation": "GET /pets", "link": "https://x"},
            ValueError,
            "link needs a deprecation or sunset date",
        ),
        (
            {"operation": "GET /pets", "sunset": datetime(2030, 1, 1, tzinfo=UTC), "link": "a b"},
            ValueError,
            "link must be printable ASCII",
        ),
        (
            {"operation": "GET /pets", "sunset": datetime(2030, 1, 1, tzinfo=UTC), "link": "a>"},
            ValueError,
            "link must be printable ASCII",
        ),
        (
            {"operation": "GET /pets", "sunset": datetime(2030, 1, 1, tzinfo=UTC), "link": 7},
            TypeError,
            "link must be a str",
        ),
    ],
)
def test_set_deprecation_checks_its_arguments_and_changes_nothing_when_refused(
    store: FakeAnimalStore,
    http: httpx.Client,
    arguments: dict[str, object],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=f"^{message}") as caught:
        store.set_deprecation(**arguments)  # type: ignore[arg-type]

    assert caught.type is error
    assert signals(http.get("/pets")) == {}
    assert signals(http.get("/pets/1")) == GET_PET_SIGNALS


# -- through the SDK, end to end -----------------------------------------------------------------


def test_the_sdk_warns_once_about_a_deprecated_operation_of_the_store_at_the_callers_line(
    store: FakeAnimalStore,
) -> None:
    store.set_deprecation(
        "GET /pets",
        deprecation=datetime(2027, 1, 1, tzinfo=UTC),
        sunset=datetime(2028, 1, 1, tzinfo=UTC),
        link="https://example.com/deprecations",
    )

    with store.client() as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        pets = client.list_pets()
        client.list_pets(limit=1)
        raw = client.with_raw_response.list_pets()

    assert [pet.name for pet in pets] == ["Rex"]
    [warning] = caught
    assert warning.category is DeprecationWarning
    assert str(warning.message) == (
        "GET /pets is deprecated by the service as of 2027-01-01 and will be removed on"
        " 2028-01-01; see https://example.com/deprecations"
    )
    assert (warning.filename, warning.lineno) == (__file__, line)
    assert raw.deprecation == datetime(2027, 1, 1, tzinfo=UTC)
    assert raw.sunset == datetime(2028, 1, 1, tzinfo=UTC)
    assert len(store.requests) == 3


def test_get_pet_over_a_socket_warns_once_and_exposes_the_specs_dates(
    store: FakeAnimalStore,
) -> None:
    with (
        store.serve() as base_url,
        Client(api_key=KEY, base_url=base_url) as client,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        raw = client.with_raw_response.get_pet(1)  # type: ignore[deprecated]
        with pytest.raises(NotFoundError):
            client.get_pet(99)  # type: ignore[deprecated]

    assert [str(w.message).split(",")[0] for w in caught] == [
        "get_pet() calls GET /pets/{petId}"
    ] * 2
    assert raw.parse().name == "Rex"
    assert raw.deprecation == datetime(2026, 12, 5, tzinfo=UTC)
    assert raw.sunset == datetime(2030, 12, 5, tzinfo=UTC)


def test_the_async_client_warns_at_the_callers_line(store: FakeAnimalStore) -> None:
    store.set_deprecation("POST /pets", sunset=datetime(2029, 3, 1, tzinfo=UTC))
    client = store.async_client()

    async def caller() -> int:
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        await client.create_pet(name="Tom", category_id=1)
        await client.create_pet(name="Kit", category_id=1)
        await client.aclose()
        return line

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = asyncio.run(caller())

    [warning] = caught
    assert str(warning.message) == "POST /pets will be removed by the service on 2029-03-01"
    assert (warning.filename, warning.lineno) == (__file__, line)
    assert [pet.name for pet in store.pets] == ["Rex", "Tom", "Kit"]
