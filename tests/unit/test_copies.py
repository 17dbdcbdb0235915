"""Copies of a client: ``with_options()`` makes them; ``copy`` and ``deepcopy`` refuse.

A shallow copy used to own the original's pool (closing it closed the original), and a deep
copy failed deep in ``copy`` with the key in deepcopy's memo, which a traceback shown with its
locals (pytest ``--showlocals``, Sentry) prints. The refusal is one line that names the class
and ``with_options()``, and holds no setting. Pickling a client is another matter: it carries
the settings to another process (tests/field/test_client_pickle.py).
"""

from __future__ import annotations

import copy
import traceback
from collections.abc import Callable

import pytest
import respx

from animalstore_client import Client
from tests.conftest import API_KEY, BASE_URL, Api

PET = {"id": 7, "name": "Rex", "categoryId": 3, "status": "available"}


COPIES: dict[str, Callable[[object], object]] = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "deepcopy of a dict": lambda target: copy.deepcopy({"client": target, "n": [1]}),
}


@pytest.fixture(params=list(COPIES.values()), ids=list(COPIES))
def make_copy(request: pytest.FixtureRequest) -> Callable[[object], object]:
    """Each way of copying: ``copy``, ``deepcopy``."""
    made: Callable[[object], object] = request.param
    return made


def client_message(name: str) -> str:
    return (
        f"{name} objects cannot be copied; client.with_options() gives a {name} that shares "
        "this client's connection pool (closing the copy leaves the pool open)"
    )


def view_message(name: str) -> str:
    return (
        f"{name} objects cannot be copied; read the with_raw_response of the client to call "
        "(one of client.with_options() has its own)"
    )


def refusal(make_copy: Callable[[object], object], target: object) -> tuple[str, str]:
    """The message of the ``TypeError`` ``make_copy(target)`` raises, and its traceback as a
    traceback shown with its locals reads (every frame's locals by ``repr``)."""
    with pytest.raises(TypeError) as caught:
        make_copy(target)
    error = caught.value
    shown = "".join(
        traceback.TracebackException(
            type(error), error, error.__traceback__, capture_locals=True
        ).format()
    )
    return str(error), shown


def test_copying_a_client_refuses_in_one_line_that_holds_no_setting(
    make_api: Callable[..., Api], mock_api: respx.MockRouter, make_copy: Callable[[object], object]
) -> None:
    route = mock_api.get("/pets").respond(200, json=[PET])
    api = make_api(default_headers={"X-Team": "team-secret-header"})
    name = type(api.target).__name__

    message, shown = refusal(make_copy, api.target)

    assert message == client_message(name)
    assert "\n" not in message
    for setting in (API_KEY, "api.test", "team-secret-header"):
        assert setting not in message
    assert API_KEY not in shown
    assert "cannot pickle" not in shown  # refused before copy reached the state
    # The original keeps its pool: still usable, with its own key.
    assert [pet.id for pet in api.list_pets()] == [7]
    assert route.calls.last.request.headers["authorization"] == f"Bearer {API_KEY}"


def test_copying_a_with_options_copy_refuses_likewise(
    api: Api, mock_api: respx.MockRouter, make_copy: Callable[[object], object]
) -> None:
    mock_api.get("/pets").respond(200, json=[PET])
    options_copy = api.target.with_options(api_key="sk-other-key-4321", max_retries=0)

    message, shown = refusal(make_copy, options_copy)

    assert message == client_message(type(api.target).__name__)
    assert "sk-other-key-4321" not in shown
    assert API_KEY not in shown
    assert [pet.id for pet in Api(options_copy, api._loop).list_pets()] == [7]
    assert [pet.id for pet in api.list_pets()] == [7]


def test_copying_a_raw_view_refuses_naming_the_view(
    api: Api, mock_api: respx.MockRouter, make_copy: Callable[[object], object]
) -> None:
    mock_api.get("/pets").respond(200, json=[PET])
    view = api.target.with_raw_response

    message, shown = refusal(make_copy, view)

    name = "RawResponses" if isinstance(api.target, Client) else "AsyncRawResponses"
    assert message == view_message(name)
    assert API_KEY not in shown
    assert api.with_raw_response.list_pets().status_code == 200
    assert api.target.with_raw_response is view


def test_a_subclass_is_named_in_the_refusal() -> None:
    class TeamClient(Client):
        pass

    client = TeamClient(api_key=API_KEY, base_url=BASE_URL)
    with pytest.raises(TypeError) as caught:
        copy.copy(client)
    assert str(caught.value) == client_message("TeamClient")
    with pytest.raises(TypeError) as caught:
        copy.deepcopy(client.with_options(max_retries=1))
    assert str(caught.value) == client_message("TeamClient")
    client.close()


def test_a_copy_attempt_in_a_with_block_leaves_the_original_open(
    mock_api: respx.MockRouter, make_api: Callable[..., Api]
) -> None:
    # What `with copy.copy(client) as c:` did: the copy owned the pool and closed it on exit.
    mock_api.get("/pets").respond(200, json=[PET])
    api = make_api()
    with pytest.raises(TypeError, match="cannot be copied;"), copy.copy(api.target):
        pass  # pragma: no cover - never reached
    assert [pet.id for pet in api.list_pets()] == [7]
    assert not api.target._closed
    assert not api.target._pool.closed
