"""The service's own deprecation signals: Deprecation, Sunset and Link headers on responses."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from animalstore_client import AsyncClient, Client, NotFoundError, Pet
from animalstore_client._core.deprecation import (
    DeprecationNotices,
    deprecation_date,
    notice,
    sunset_date,
)
from tests.conftest import API_KEY, BASE_URL, Api, httpx_answer

PET = {"id": 7, "name": "Rex", "categoryId": 3}
SIGNALS = {
    "Deprecation": "@1796428800",
    "Sunset": "Thu, 05 Dec 2030 00:00:00 GMT",
    "Link": '<https://docs.example/v1/changes>; rel="deprecation"',
}
LIST_MESSAGE = (
    "GET /pets is deprecated by the service as of 2026-12-05 and will be removed on 2030-12-05;"
    " see https://docs.example/v1/changes"
)


def deprecation_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def check_the_list_warning(caught: list[warnings.WarningMessage], line: int) -> None:
    """Check that ``caught`` is one ``DeprecationWarning`` of ``list_pets``'s signals, made at
    ``line`` of this file."""
    [warning] = caught
    assert warning.category is DeprecationWarning
    assert str(warning.message) == LIST_MESSAGE
    assert (warning.filename, warning.lineno) == (__file__, line)


def test_a_signal_warns_once_at_the_sync_callers_line(mock_api: respx.MockRouter) -> None:
    route = mock_api.get("/pets").respond(200, json=[], headers=SIGNALS)
    client = Client(api_key=API_KEY, base_url=BASE_URL)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        client.list_pets()
        client.list_pets()

    assert route.call_count == 2
    check_the_list_warning(caught, line)
    client.close()


def test_a_signal_warns_once_at_the_async_callers_line(
    mock_api: respx.MockRouter, loop: asyncio.AbstractEventLoop
) -> None:
    mock_api.get("/pets").respond(200, json=[], headers=SIGNALS)
    client = AsyncClient(api_key=API_KEY, base_url=BASE_URL)

    async def caller() -> int:
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        await client.list_pets()
        await client.list_pets()
        return line

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = loop.run_until_complete(caller())

    check_the_list_warning(caught, line)
    loop.run_until_complete(client.aclose())


def test_the_raw_view_warns_at_the_callers_line_too(mock_api: respx.MockRouter) -> None:
    mock_api.post("/pets").respond(201, json=PET, headers=SIGNALS)
    client = Client(api_key=API_KEY, base_url=BASE_URL)

    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    with pytest.warns(DeprecationWarning, match=r"^POST /pets is deprecated") as caught:
        client.with_raw_response.create_pet(name="Rex", category_id=3)

    assert len(caught) == 1
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    client.close()


def test_once_per_client_family_and_operation(api: Api, mock_api: respx.MockRouter) -> None:
    mock_api.get("/pets").respond(200, json=[], headers=SIGNALS)
    mock_api.post("/pets").respond(201, json=PET, headers=SIGNALS)
    copy = Api(api.target.with_options(max_retries=0), api._loop)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api.list_pets()
        copy.list_pets()  # a copy shares what was warned about
        api.with_raw_response.list_pets()  # and so does the raw view
        Api(copy.target.with_options(timeout=1.0), api._loop).list_pets()
        api.create_pet(name="Rex", category_id=3)  # another operation warns on its own
        copy.create_pet(name="Rex", category_id=3)

    assert len(mock_api.calls) == 6
    messages = deprecation_warnings(caught)
    assert [m.split(" is ")[0] for m in messages] == ["GET /pets", "POST /pets"]


def test_another_client_warns_again(
    make_api: Callable[..., Api], mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(200, json=[], headers=SIGNALS)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_api().list_pets()
        make_api().list_pets()

    assert deprecation_warnings(caught) == [LIST_MESSAGE, LIST_MESSAGE]


def warnings_of_threads(count: int, work: Callable[[], object]) -> list[str]:
    """Run ``work`` in ``count`` threads started together; the deprecation warnings they gave."""
    start = threading.Barrier(count)

    def run() -> None:
        start.wait()
        work()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=run) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return deprecation_warnings(caught)


def test_threads_sharing_a_client_warn_once(mock_api: respx.MockRouter) -> None:
    route = mock_api.get("/pets").respond(200, json=[], headers=SIGNALS)
    client = Client(api_key=API_KEY, base_url=BASE_URL)

    def work() -> None:
        for _ in range(5):
            client.list_pets()

    assert warnings_of_threads(8, work) == [LIST_MESSAGE]
    assert route.call_count == 40
    client.close()


def test_two_threads_that_both_find_the_operation_unwarned_still_warn_once() -> None:
    # The race the lock closes, made certain: each thread's first look-up of the warned set
    # waits for the other's, so both are past the first check before either records the
    # operation; without the lock both would warn.
    both_looked = threading.Barrier(2, timeout=5)
    looked = threading.local()

    class SlowSet(set[str]):
        def __contains__(self, item: object) -> bool:
            found = super().__contains__(item)
            if not getattr(looked, "once", False):
                looked.once = True
                both_looked.wait()
            return found

    notices = DeprecationNotices()
    notices._warned = SlowSet()
    answer = httpx_answer(httpx.Response(200, json=[], headers=SIGNALS))

    def work() -> None:
        notices.warn_once("GET /pets", answer)

    assert warnings_of_threads(2, work) == [LIST_MESSAGE]


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        (
            {"Deprecation": "@1796428800"},
            "GET /pets is deprecated by the service as of 2026-12-05",
        ),
        (
            {"Sunset": "Thu, 05 Dec 2030 00:00:00 GMT"},
            "GET /pets will be removed by the service on 2030-12-05",
        ),
        (
            {
                "Sunset": "Thu, 05 Dec 2030 00:00:00 GMT",
                "Link": '<https://a.example/terms>; rel="terms-of-service", '
                '<https://a.example/sunset>; rel="sunset"',
            },
            "GET /pets will be removed by the service on 2030-12-05; see https://a.example/sunset",
        ),
        (
            {
                "Deprecation": "@1796428800",
                "Link": '<https://a.example/sunset>; rel="sunset", '
                '<https://a.example/deprecation>; rel="Deprecation"',
            },
            "GET /pets is deprecated by the service as of 2026-12-05;"
            " see https://a.example/deprecation",
        ),
        (
            # Late in the evening in New York is the next day in UTC.
            {"Sunset": "Wed, 04 Dec 2030 22:00:00 -0500"},
            "GET /pets will be removed by the service on 2030-12-05",
        ),
        (
            {"Deprecation": "garbage", "Sunset": "Thu, 05 Dec 2030 00:00:00 GMT"},
            "GET /pets will be removed by the service on 2030-12-05",
        ),
        (
            {"Deprecation": "@1796428800", "Sunset": "some day"},
            "GET /pets is deprecated by the service as of 2026-12-05",
        ),
        (
            {"Deprecation": "@1796428800", "Link": '<bad url>; rel="deprecation"'},
            "GET /pets is deprecated by the service as of 2026-12-05",
        ),
    ],
    ids=[
        "deprecation-only",
        "sunset-only",
        "sunset-link",
        "deprecation-link-first",
        "sunset-in-another-zone",
        "bad-deprecation",
        "bad-sunset",
        "bad-link",
    ],
)
def test_the_message_names_the_operation_dates_and_link(
    api: Api, mock_api: respx.MockRouter, headers: dict[str, str], message: str
) -> None:
    mock_api.get("/pets").respond(200, json=[], headers=headers)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert api.list_pets() == []

    assert deprecation_warnings(caught) == [message]


@pytest.mark.parametrize(
    "headers",
    [
        {"Deprecation": "false"},  # the drafts' `true` is read: test_deprecation_header_forms
        {"Deprecation": "@"},
        {"Deprecation": "1796428800"},
        {"Deprecation": "@1796428800.5"},
        {"Deprecation": "@999999999999999"},  # beyond the year 9999
        {"Deprecation": "@-999999999999999"},
        {"Deprecation": "@1234567890123456"},  # more digits than a structured-field integer
        {"Sunset": "tomorrow"},
        {"Sunset": ""},
        {"Sunset": "Thu, 05 Dec 99999 00:00:00 GMT"},
        {"Sunset": "Thu, 05 Dec 2030 25:61:00 GMT"},
        {"Sunset": "Thu, 32 Foo 2030 00:00:00 GMT"},
        {"Deprecation": "@abc", "Sunset": "soon"},
    ],
)
def test_malformed_signals_never_break_a_call_and_are_logged_at_debug(
    api: Api,
    mock_api: respx.MockRouter,
    caplog: pytest.LogCaptureFixture,
    headers: dict[str, str],
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")
    route = mock_api.get("/pets").respond(200, json=[PET], headers=headers)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        assert [pet.id for pet in api.list_pets()] == [7]
        raw = api.with_raw_response.list_pets()

    assert (raw.deprecation, raw.sunset) == (None, None)
    assert route.call_count == 2
    ignored = [r.getMessage() for r in caplog.records if "ignoring a malformed" in r.getMessage()]
    assert ignored
    assert all(r.levelno == logging.DEBUG for r in caplog.records if "malformed" in r.getMessage())


def test_an_error_answer_with_signals_warns_then_raises(
    api: Api, mock_api: respx.MockRouter
) -> None:
    body = {"code": "not_found", "message": "gone", "status": 404}
    mock_api.post("/pets").respond(404, json=body, headers=SIGNALS)

    with (
        pytest.raises(NotFoundError) as caught,
        pytest.warns(DeprecationWarning, match="POST /pets") as warned,
    ):
        api.create_pet(name="Rex", category_id=3)

    assert caught.value.status_code == 404
    assert [str(w.message) for w in warned] == [LIST_MESSAGE.replace("GET", "POST")]


def test_get_pet_warns_only_with_the_sdks_own_deprecation(
    api: Api, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets/7").respond(200, json=PET, headers=SIGNALS)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api.get_pet(7)
        api.get_pet(7)
        raw = api.with_raw_response.get_pet(7)

    messages = deprecation_warnings(caught)
    assert len(messages) == 3  # one per call, each the SDK's own
    assert all(m.startswith("get_pet() calls GET /pets/{petId}, which is") for m in messages)
    assert raw.sunset == datetime(2030, 12, 5, tzinfo=timezone.utc)


def test_raw_response_exposes_aware_deprecation_and_sunset(
    api: Api, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(200, json=[], headers=SIGNALS)
    mock_api.post("/pets").respond(201, json=PET)

    with pytest.warns(DeprecationWarning, match="GET /pets"):
        listed = api.with_raw_response.list_pets()
    created = api.with_raw_response.create_pet(name="Rex", category_id=3)

    assert listed.deprecation == datetime(2026, 12, 5, tzinfo=timezone.utc)
    assert listed.sunset == datetime(2030, 12, 5, tzinfo=timezone.utc)
    assert listed.deprecation.tzinfo is not None
    assert listed.sunset.tzinfo is not None
    assert (created.deprecation, created.sunset) == (None, None)


def test_sunset_without_a_zone_is_read_as_utc() -> None:
    headers = httpx.Headers({"Sunset": "Thu, 05 Dec 2030 10:00:00 -0000"})
    assert sunset_date(headers) == datetime(2030, 12, 5, 10, tzinfo=timezone.utc)


def test_a_response_without_signals_is_not_inspected_further(
    api: Api, mock_api: respx.MockRouter
) -> None:
    mock_api.get("/pets").respond(200, json=[], headers={"Link": '<https://x>; rel="next"'})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert api.list_pets() == []
        assert api.with_raw_response.list_pets().deprecation is None


header_values = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=60,
)


@settings(max_examples=100, deadline=None, database=None)
@given(deprecation=header_values, sunset=header_values, link=header_values)
def test_no_header_value_makes_the_parsers_raise(deprecation: str, sunset: str, link: str) -> None:
    # As h11 would hand them over: any byte a header value may hold, decoded as httpx does.
    values = {"deprecation": deprecation, "sunset": sunset, "link": link}
    headers = httpx.Headers(
        [(name.encode(), value.encode("latin-1")) for name, value in values.items()]
    )
    response = httpx.Response(200, headers=headers)
    date = deprecation_date(headers)
    sunset_at = sunset_date(headers)
    message = notice("GET /pets", httpx_answer(response))

    for value in (date, sunset_at):
        assert value is None or value.tzinfo is not None
    assert message is None or message.startswith("GET /pets ")


@settings(max_examples=100, deadline=None, database=None)
@given(st.integers(min_value=-(10**15) + 1, max_value=10**15 - 1))
def test_every_structured_field_date_parses_or_is_ignored(seconds: int) -> None:
    date = deprecation_date(httpx.Headers({"Deprecation": f"@{seconds}"}))
    if date is not None:
        assert date.tzinfo is not None
        assert int(date.timestamp()) == seconds


@pytest.fixture(scope="module")
def builder() -> Iterator[httpx.Client]:
    """An httpx client that only builds requests, made once: making one costs milliseconds
    (its TLS context), far more than an example's checks."""
    with httpx.Client() as client:
        yield client


@settings(max_examples=100, deadline=None, database=None)
@given(
    status=st.integers(min_value=200, max_value=599),
    deprecation=st.none() | header_values | st.integers(-(10**16), 10**16).map(lambda n: f"@{n}"),
    sunset=st.none() | header_values,
    link=st.none() | header_values,
)
def test_any_signal_on_any_answer_gives_the_usual_outcome_and_at_most_a_deprecation_warning(
    builder: httpx.Client,
    status: int,
    deprecation: str | None,
    sunset: str | None,
    link: str | None,
) -> None:
    from animalstore_client._backends.httpx import family
    from animalstore_client._core import operations as ops
    from animalstore_client._core.call import DONE, Call
    from animalstore_client._core.config import resolve_options
    from animalstore_client._core.deprecation import DeprecationNotices
    from animalstore_client._core.exceptions import status_error_class

    options = resolve_options(
        API_KEY,
        environment=None,
        base_url=BASE_URL,
        timeout=5.0,
        max_retries=0,
        default_headers=None,
        environ={},
    )
    values = {"deprecation": deprecation, "sunset": sunset, "link": link}
    headers = [(name.encode(), value.encode("latin-1")) for name, value in values.items() if value]
    call: Call[list[Pet]] = Call(
        ops.list_pets(limit=None, status=None),
        options,
        notices=DeprecationNotices(),
    )
    request = family(httpx).build(builder, call.begin(), lambda r: r.headers)
    response = httpx_answer(httpx.Response(status, json=[], headers=headers, request=request))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if 200 <= status < 300:
            assert call.after(response) is DONE
            assert call.result == []
        else:  # the usual outcome: the status's own error, whatever the signals
            with pytest.raises(status_error_class(status)) as caught_error:
                call.after(response)
            assert caught_error.value.status_code == status

    # A warning exactly when a signal can be read, naming the operation and what was read.
    deprecated, sunset_at = deprecation_date(response.headers), sunset_date(response.headers)
    # `Deprecation: true` (any case) has no date, and warns all the same.
    undated = (deprecation or "").strip().lower() == "true"
    assert [w.category for w in caught] == (
        [] if deprecated is None and sunset_at is None and not undated else [DeprecationWarning]
    )
    if caught:
        message = str(caught[0].message)
        assert message.startswith("GET /pets ")
        for date in (deprecated, sunset_at):
            assert date is None or date.date().isoformat() in message
