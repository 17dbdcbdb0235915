"""The forms of the ``Deprecation`` header's earlier drafts, which servers and mocks still send:
``true`` (deprecated, no date given) and an HTTP date."""

from __future__ import annotations

import logging
import warnings
from datetime import datetime, timezone

import pytest
import respx

from animalstore_client import NotFoundError
from animalstore_client._cli import main
from tests.conftest import API_KEY, BASE_URL, Api

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
