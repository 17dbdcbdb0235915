"""Property-based fuzzing of response handling: whatever comes back, the SDK returns a valid
result or raises an ``AnimalStoreError``, and nothing else.

Two paths:

* sans-IO, the whole status range 100..599: ``animalstore_client._core.call.Call`` is handed
  ``httpx.Response(status, content=...)`` objects directly, exactly as the clients hand it what
  they received. 1xx statuses are informational and can never be a final answer over a socket
  (httpx/h11 would keep waiting for one), so only this path covers them.
* real sockets, statuses 200..599, fewer examples: the fault server sends the same kinds of
  bodies to a ``Client`` and an ``AsyncClient``.

Each property runs fewer examples in the default tier (100 to 150 sans-IO, 25 to 30 per
backend over sockets: what makes an example costly is Hypothesis drawing it, not the SDK's
work), and all of them in the deep tier (``pytest --deep``): 300 to 500 sans-IO, 40 to 60 per
backend over sockets.
"""

from __future__ import annotations

import json
import string
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from animalstore_client import (
    AnimalStoreError,
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    Pet,
    PetList,
    PetStatus,
    RateLimitError,
)
from animalstore_client._backends.httpx import family
from animalstore_client._core import operations as ops
from animalstore_client._core.call import Call
from animalstore_client._core.config import resolve_options
from animalstore_client._core.retries import MAX_RETRY_AFTER
from tests.conftest import at_scale, httpx_answer
from tests.reliability.conftest import API_KEY, VALID_ARGUMENTS, Api, close_in, new_http_client
from tests.reliability.faultserver import FaultServer, Reply

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
STATUS_VALUES = st.sampled_from(["available", "pending", "sold", "adopted", ""])
#: Pet-shaped objects, every field sometimes right, sometimes wrong, sometimes missing.
PET_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "id": INT64 | SCALARS,
        "name": st.text(max_size=20) | SCALARS,
        "categoryId": INT64 | SCALARS,
        "status": STATUS_VALUES | SCALARS,
        "extra": JSON_VALUES,
    },
)
VALID_PET = st.fixed_dictionaries(
    {"id": INT64, "name": st.text(max_size=20), "categoryId": INT64},
    optional={"status": STATUS_VALUES | st.none(), "extra": JSON_VALUES},
)
ERROR_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "code": st.text(max_size=20) | SCALARS,
        "message": st.text(max_size=40) | SCALARS,
        "status": st.integers(100, 599) | SCALARS,
    },
)
DOCUMENTS = (
    JSON_VALUES
    | VALID_PET
    | PET_LIKE
    | st.lists(VALID_PET, max_size=3)
    | st.lists(VALID_PET | PET_LIKE, max_size=3)
    | ERROR_LIKE
)
#: Every status, 2xx more often (the statuses where a body is parsed as a result).
STATUSES = st.integers(min_value=200, max_value=299) | st.integers(min_value=100, max_value=599)
BODIES = st.binary(max_size=300) | DOCUMENTS.map(lambda value: json.dumps(value).encode())
HTTP_DATES = st.builds(
    "{}, {} {} {} {:02d}:{:02d}:{:02d} {}".format,
    st.sampled_from(["Mon", "Thu", "Sun", "Xyz"]),
    st.integers(-(10**22), 10**22) | st.integers(0, 40),
    st.sampled_from(["Jan", "Feb", "Dec", "Foo"]),
    st.integers(-(10**25), 10**25) | st.integers(0, 3000) | st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.sampled_from(["GMT", "UT", "-0000", "+9999", "-2400", "EST", ""]),
)
RETRY_AFTER = (
    st.none()
    | st.text(alphabet=string.printable.strip() + " ", max_size=30)
    | HTTP_DATES
    | st.from_regex(r"-?[0-9]{1,400}(\.[0-9]{0,5})?(e[+-]?[0-9]{1,4})?", fullmatch=True)
)
#: Header values as a server may send them: any Latin-1 text without line breaks.
HEADER_VALUES = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=60,
)
#: Headers the SDK reads, or that change how the body is read, with hostile values.
#: (Content-Encoding is decoded while httpx receives the body, so only over sockets.)
HEADERS = st.dictionaries(
    st.sampled_from(
        [
            "Retry-After",
            "X-Request-Id",
            "Content-Type",
            "Content-Language",
            "Deprecation",
            "Sunset",
            "Link",
            "X-Other",
        ]
    ),
    HEADER_VALUES
    | RETRY_AFTER.filter(lambda value: value is not None)
    | st.sampled_from(
        [
            "text/plain; charset=rot13",
            "application/json; charset=hex",
            "text/html; charset=idna",
            "text/html; charset=utf-32",
            "application/json; charset=nonsense",
            "gzip",
            "br, gzip",
            "identity",
        ]
    ),
    max_size=4,
)

with pytest.warns(DeprecationWarning, match=r"^get_pet\(\) calls GET /pets/\{petId\}"):
    OPERATIONS: dict[str, ops.Operation[Any]] = {
        "list_pets": ops.list_pets(),
        "create_pet": ops.create_pet(name="Rex", category_id=3),
        "get_pet": ops.get_pet(1),  # its recipe warns, as the client's method does
    }
RETRYABLE = {"GET": {408, 429, 500, 502, 503, 504}, "POST": {429, 503}}


def expected_error_class(status: int) -> type[AnimalStoreError]:
    if 200 <= status < 300:
        return APIResponseValidationError
    by_status: dict[int, type[APIStatusError]] = {
        400: BadRequestError,
        401: AuthenticationError,
        404: NotFoundError,
        429: RateLimitError,
    }
    return by_status.get(status, InternalServerError if 500 <= status <= 599 else APIStatusError)


def is_valid_pet(value: object) -> bool:
    return (
        type(value) is Pet
        and type(value.id) is int
        and -(2**63) <= value.id < 2**63
        and type(value.name) is str
        and type(value.category_id) is int
        and -(2**63) <= value.category_id < 2**63
        and (value.status is None or isinstance(value.status, (PetStatus, str)))
    )


def check_outcome(operation: str, status: int, outcome: object) -> None:
    """The property: a valid result for a 2xx, else exactly the class the status maps to."""
    event(f"{operation}: {type(outcome).__name__}")
    if isinstance(outcome, BaseException):
        assert isinstance(outcome, AnimalStoreError), repr(outcome)
        assert type(outcome) is expected_error_class(status), (status, repr(outcome))
        if isinstance(outcome, APIStatusError):
            assert outcome.status_code == status
        assert isinstance(str(outcome), str)
        assert isinstance(repr(outcome), str)
        return
    assert 200 <= status < 300, (status, outcome)
    if operation == "list_pets":
        assert type(outcome) is PetList  # a list[Pet] that Jupyter shows as a table
        assert all(is_valid_pet(p) for p in outcome)
    else:
        assert is_valid_pet(outcome)


# -- sans-IO: the whole status range ----------------------------------------------------------

OPTIONS = {
    retries: resolve_options(
        API_KEY,
        environment=None,
        base_url="http://127.0.0.1:9/v1",
        timeout=5.0,
        max_retries=retries,
        default_headers=None,
        environ={},
    )
    for retries in (0, 2)
}


@pytest.fixture(scope="module")
def builder() -> Iterator[httpx.Client]:
    """An httpx client used only for ``build_request``, as the SDK's clients use theirs."""
    with httpx.Client() as client:
        yield client


def drive(
    builder: httpx.Client,
    operation: str,
    status: int,
    body: bytes,
    retry_after: str | None,
    max_retries: int,
    headers: dict[str, str] | None = None,
) -> tuple[object, float | None]:
    """Feed one response to a fresh ``Call``; return (result or exception, retry delay)."""
    call: Call[Any] = Call(OPERATIONS[operation], OPTIONS[max_retries])
    request = family(httpx).build(builder, call.begin(), lambda r: r.headers)
    headers = dict(headers or {})
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    # As bytes, the way they come off the wire: httpx would refuse non-ASCII str values.
    raw_headers = [(name.encode(), value.encode("latin-1")) for name, value in headers.items()]
    response = httpx.Response(status, content=body, headers=raw_headers, request=request)
    try:
        step = call.after(httpx_answer(response))
    except Exception as exc:
        return exc, None
    return (call.result, None) if step.done else (None, step.delay)


#: Any of the operations, by name.
OPERATION = st.sampled_from(list(OPERATIONS))


def holds(
    count: int, check: Callable[..., None], *first: Any, **strategies: st.SearchStrategy[Any]
) -> None:
    """Run ``check(*first, **drawn)`` on ``count`` examples, ``drawn`` from ``strategies`` by
    argument name; with no deadline and no example database."""

    def example(**drawn: Any) -> None:
        check(*first, **drawn)

    settings(max_examples=count, deadline=None, database=None)(given(**strategies)(example))()


def examples(small: int, full: int) -> list[Any]:
    """How many examples a property runs: ``small`` in the default tier, ``full`` deep."""
    return at_scale(small, full, "examples")


@pytest.mark.parametrize("count", examples(100, 300))
def test_sans_io_any_status_and_body_gives_a_result_or_an_sdk_error(
    builder: httpx.Client, count: int
) -> None:
    def check(operation: str, status: int, body: bytes) -> None:
        outcome, _ = drive(builder, operation, status, body, None, max_retries=0)
        check_outcome(operation, status, outcome)

    holds(count, check, operation=OPERATION, status=STATUSES, body=BODIES)


@pytest.mark.parametrize("count", examples(100, 300))
def test_sans_io_with_retries_left_only_retryable_answers_wait_and_within_the_cap(
    builder: httpx.Client, count: int
) -> None:
    def check(operation: str, status: int, body: bytes, retry_after: str | None) -> None:
        outcome, delay = drive(builder, operation, status, body, retry_after, max_retries=2)
        method = OPERATIONS[operation].method
        if status in RETRYABLE[method]:
            assert delay is not None
            # Never 0: a server cannot make the client retry in a tight loop.
            assert 0.0 < delay <= MAX_RETRY_AFTER
        else:
            assert delay is None
            check_outcome(operation, status, outcome)

    holds(count, check, operation=OPERATION, status=STATUSES, body=BODIES, retry_after=RETRY_AFTER)


@pytest.mark.parametrize("count", examples(150, 500))
def test_sans_io_any_headers_give_a_result_an_sdk_error_or_a_bounded_wait(
    builder: httpx.Client, count: int
) -> None:
    def check(
        operation: str, status: int, body: bytes, headers: dict[str, str], max_retries: int
    ) -> None:
        outcome, delay = drive(builder, operation, status, body, None, max_retries, headers)
        if delay is not None:
            assert status in RETRYABLE[OPERATIONS[operation].method]
            assert 0.0 < delay <= MAX_RETRY_AFTER
        else:
            check_outcome(operation, status, outcome)

    holds(
        count,
        check,
        operation=OPERATION,
        status=STATUSES,
        body=BODIES,
        headers=HEADERS,
        max_retries=st.sampled_from([0, 2]),
    )


@pytest.mark.parametrize("count", examples(100, 300))
def test_sans_io_a_valid_pet_list_round_trips(builder: httpx.Client, count: int) -> None:
    def check(body: Any) -> None:
        # Whatever a 200 list body is, a result is only ever returned when it is all valid
        # pets, and then it equals the pets the body describes.
        outcome, _ = drive(
            builder, "list_pets", 200, json.dumps(body).encode(), None, max_retries=0
        )
        check_outcome("list_pets", 200, outcome)
        if isinstance(outcome, list):
            assert [p.to_dict() for p in outcome] == [
                {
                    key: item[key]
                    for key in ("id", "name", "categoryId", "status")
                    if key in item and not (key == "status" and item[key] is None)
                }
                for item in body
            ]

    holds(count, check, body=DOCUMENTS)


# -- over real sockets: 200..599 --------------------------------------------------------------


@pytest.mark.parametrize("count", examples(25, 40))
def test_over_sockets_any_status_and_body_gives_a_result_or_an_sdk_error(
    server: FaultServer, make_client: Callable[..., Api], count: int
) -> None:
    holds(
        count,
        status_and_body_over_sockets,
        server,
        make_client,
        operation=OPERATION,
        status=st.integers(min_value=200, max_value=299)
        | st.integers(min_value=200, max_value=599),
        body=BODIES | st.binary(min_size=1000, max_size=20_000),
        content_type=st.sampled_from(["application/json", "text/html", None]),
    )


def status_and_body_over_sockets(
    server: FaultServer,
    make_client: Callable[..., Api],
    operation: str,
    status: int,
    body: bytes,
    content_type: str | None,
) -> None:
    api = make_client(server, max_retries=0)
    sent_before = len(server.requests)
    server.script(Reply(status, body=body, content_type=content_type))
    try:
        if operation == "get_pet":
            outcome: object = api.get_pet(1)
        elif operation == "create_pet":
            outcome = api.create_pet(name="Rex", category_id=3)
        else:
            outcome = api.list_pets()
    except Exception as exc:
        outcome = exc
    finally:
        api.close()

    check_outcome(operation, status, outcome)
    assert len(server.requests) == sent_before + 1


@pytest.mark.parametrize("count", examples(30, 60))
def test_over_sockets_any_headers_give_a_result_or_an_sdk_error(
    server: FaultServer, make_client: Callable[..., Api], kind: str, aloop: Any, count: int
) -> None:
    holds(
        count,
        headers_over_sockets,
        server,
        make_client,
        kind,
        aloop,
        operation=OPERATION,
        status=st.integers(min_value=200, max_value=599),
        body=BODIES,
        headers=HEADERS,
        content_encoding=st.none()
        | st.sampled_from(["gzip", "GZIP", "br", "deflate", "zstd", "x"]),
    )


def headers_over_sockets(
    server: FaultServer,
    make_client: Callable[..., Api],
    kind: str,
    aloop: Any,
    operation: str,
    status: int,
    body: bytes,
    headers: dict[str, str],
    content_encoding: str | None,
) -> None:
    if content_encoding is not None:
        headers = {**headers, "Content-Encoding": content_encoding}
    # A user's client of this example's own, closed with it: the server serves 64 connections
    # at most, and the examples of one test would otherwise keep theirs open until its end.
    http = None if kind in ("sync", "async") else new_http_client(kind, aloop)
    api = make_client(server, max_retries=0, **({} if http is None else {"http_client": http}))
    sent_before = len(server.requests)
    server.script(Reply(status, body=body, headers=tuple(headers.items()), content_type=None))
    # Deprecation and Sunset values that parse make the call warn; recorded, not raised.
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            outcome: object = getattr(api, operation)(
                *VALID_ARGUMENTS[operation][0], **VALID_ARGUMENTS[operation][1]
            )
        except Exception as exc:
            outcome = exc
        finally:
            api.close()
            if http is not None:
                close_in(aloop, http)

    assert len(server.requests) == sent_before + 1
    event(type(outcome).__name__)
    # Only a body that cannot be decoded (Content-Encoding) is an APIConnectionError: no usable
    # answer, and never retried. Any other answer, whatever its headers, has the usual outcome.
    if isinstance(outcome, APIConnectionError) and content_encoding is not None:
        assert type(outcome) is APIConnectionError
    else:
        check_outcome(operation, status, outcome)
