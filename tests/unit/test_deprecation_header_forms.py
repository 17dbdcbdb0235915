"""The forms of the ``Deprecation`` header's earlier drafts, which servers and mocks still send:
``true`` (deprecated, no date given) and an HTTP date."""

from __future__ import annotations

import logging
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import NoReturn

import httpx
import pytest
import respx

import animalstore_client
from animalstore_client import NotFoundError
from animalstore_client._cli import main
from animalstore_client._core.deprecation import (
    DeprecationNotices,
    deprecation_date,
    deprecation_link,
    notice,
    sunset_date,
    warn_deprecated,
)
from animalstore_client._core.wire import Answer
from tests.conftest import API_KEY, BASE_URL, Api, httpx_answer

PET = {"id": 7, "name": "Rex", "categoryId": 3}
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"
LINK = '<https://docs.example/v1/changes>; rel="deprecation"'


def deprecation_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("value", ["true", "TRUE", "True", " true "])
def test_deprecation_true_warns_that_the_operation_is_deprecated_without_a_date(
    api: Api, mock_api: respx.MockRouter, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")
    mock_api.get("/pets").respond(200, json=[PET], headers={"Deprecation": value})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [pet.id for pet in api.list_pets()] == [7]
        api.list_pets()  # the same client and operation: no second warning
        raw = api.with_raw_response.list_pets()

    assert deprecation_warnings(caught) == ["GET /pets is deprecated by the service"]
    # No date to give; the header itself says what was sent.
    assert (raw.deprecation, raw.sunset) == (None, None)
    assert raw.headers["deprecation"] == value
    assert not [r for r in caplog.records if "malformed" in r.getMessage()]


def test_deprecation_true_with_a_sunset_and_a_link_names_them(
    api: Api, mock_api: respx.MockRouter
) -> None:
    headers = {"Deprecation": "true", "Sunset": SUNSET, "Link": LINK}
    mock_api.get("/pets").respond(200, json=[], headers=headers)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = api.with_raw_response.list_pets()

    assert deprecation_warnings(caught) == [
        "GET /pets is deprecated by the service and will be removed on 2030-12-05;"
        " see https://docs.example/v1/changes"
    ]
    assert (raw.deprecation, raw.sunset) == (None, datetime(2030, 12, 5, tzinfo=timezone.utc))


def test_deprecation_true_on_an_error_answer_warns_then_raises(
    api: Api, mock_api: respx.MockRouter
) -> None:
    body = {"code": "not_found", "message": "gone", "status": 404}
    mock_api.post("/pets").respond(404, json=body, headers={"Deprecation": "true"})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(NotFoundError) as error:
            api.create_pet(name="Rex", category_id=3)

    assert error.value.status_code == 404
    assert deprecation_warnings(caught) == ["POST /pets is deprecated by the service"]


@pytest.mark.parametrize(
    "value",
    [
        "Sun, 11 Nov 2018 23:59:59 GMT",
        "Sunday, 11-Nov-18 23:59:59 GMT",
        "Sun Nov 11 23:59:59 2018",
    ],
)
def test_deprecation_as_an_http_date_gives_its_date(
    api: Api, mock_api: respx.MockRouter, value: str
) -> None:
    mock_api.get("/pets").respond(200, json=[], headers={"Deprecation": value})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = api.with_raw_response.list_pets()

    assert deprecation_warnings(caught) == [
        "GET /pets is deprecated by the service as of 2018-11-11"
    ]
    assert raw.deprecation == datetime(2018, 11, 11, 23, 59, 59, tzinfo=timezone.utc)


@pytest.mark.parametrize("value", ["false", "yes", "?1", "truee", "@true"])
def test_other_words_are_still_malformed_ignored_and_logged_at_debug(
    api: Api, mock_api: respx.MockRouter, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")
    mock_api.get("/pets").respond(200, json=[], headers={"Deprecation": value})

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        raw = api.with_raw_response.list_pets()

    assert raw.deprecation is None
    # Logged each time it is read: for the warning, and by raw.deprecation.
    assert {r.getMessage() for r in caplog.records if "malformed" in r.getMessage()} == {
        f"ignoring a malformed Deprecation header: {value!r}"
    }


def test_the_command_line_prints_deprecation_true_as_a_notice(
    mock_api: respx.MockRouter, capsys: pytest.CaptureFixture[str]
) -> None:
    mock_api.get("/pets").respond(200, json=[PET], headers={"Deprecation": "true"})

    assert main(["--base-url", BASE_URL, "--api-key", API_KEY, "pets", "list"]) == 0

    assert capsys.readouterr().err == "notice: GET /pets is deprecated by the service\n"


# -- the readers themselves, without a client --------------------------------------------------


def malformed_records(caplog: pytest.LogCaptureFixture) -> list[tuple[str, int, str]]:
    return [r for r in caplog.record_tuples if "malformed" in r[2]]


def test_a_malformed_sunset_is_logged_under_its_own_name(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")

    assert sunset_date(httpx.Headers({"Sunset": "next spring"})) is None

    assert malformed_records(caplog) == [
        ("animalstore_client", logging.DEBUG, "ignoring a malformed Sunset header: 'next spring'")
    ]


def test_a_long_malformed_value_is_logged_cut_to_its_first_200_characters(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")
    value = "a" * 199 + "bc" + "d" * 99  # 300 characters: the 200th is "b", the 201st "c"

    assert deprecation_date(httpx.Headers({"Deprecation": value})) is None

    assert malformed_records(caplog) == [
        (
            "animalstore_client",
            logging.DEBUG,
            "ignoring a malformed Deprecation header: '" + "a" * 199 + "b'",
        )
    ]


@pytest.mark.parametrize(
    ("target", "logged"),
    [("", "''"), ("https://docs.example/a\tb", "'https://docs.example/a\\tb'")],
)
def test_an_empty_or_unprintable_link_is_ignored_and_logged_as_a_link(
    caplog: pytest.LogCaptureFixture, target: str, logged: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="animalstore_client")
    response = httpx.Response(200, headers={"Link": f'<{target}>; rel="deprecation"'})

    assert deprecation_link(response) is None

    assert malformed_records(caplog) == [
        ("animalstore_client", logging.DEBUG, f"ignoring a malformed Link header: {logged}")
    ]


def not_needed() -> NoReturn:
    raise AssertionError("the answer's httpx view was built without a Link header to read")


def test_a_notice_without_a_link_header_does_not_build_the_httpx_response() -> None:
    headers = httpx.Headers({"Deprecation": "true", "Sunset": SUNSET})
    answer = Answer(200, headers, b"[]", details=not_needed, view=not_needed, signals=True)

    assert notice("GET /pets", answer) == (
        "GET /pets is deprecated by the service and will be removed on 2030-12-05"
    )


def sdk_files(caught: list[warnings.WarningMessage]) -> list[str]:
    package = Path(animalstore_client.__file__).resolve().parent
    return [w.filename for w in caught if package in Path(w.filename).resolve().parents]


# These name no line (a mutation run's trampoline adds frames, and the tests of the very line
# are left out of it): they hold that a warning never points inside the SDK.
def test_the_sdks_own_deprecation_warning_points_outside_the_sdk() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_deprecated("get_pet is deprecated")

    assert deprecation_warnings(caught) == ["get_pet is deprecated"]
    assert sdk_files(caught) == []


def test_a_service_deprecation_warning_points_outside_the_sdk() -> None:
    response = httpx.Response(200, headers={"Deprecation": "true"})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DeprecationNotices().warn_once("GET /pets", httpx_answer(response))

    assert deprecation_warnings(caught) == ["GET /pets is deprecated by the service"]
    assert sdk_files(caught) == []
