"""Hostile arguments over real sockets: each is either refused before anything is sent (a
``TypeError`` or ``ValueError`` naming the argument) or sent correctly encoded, to exactly the
operation's path; never a request anywhere else.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from animalstore_client import PetStatus
from tests.reliability.conftest import PET, Api
from tests.reliability.faultserver import FaultServer, Reply

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


class Plain(int, enum.Enum):
    """An int-valued enum that is not an IntEnum: ``format()`` gives ``'Plain.SEVEN'``."""

    SEVEN = 7


class Numbers(enum.IntEnum):
    SEVEN = 7


class Sneaky(int):
    """An int whose text forms try a traversal."""

    def __str__(self) -> str:
        return "1/../admin?x=y"

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return "1/../admin?x=y"


@dataclass(frozen=True)
class Refused:
    """Refused before sending: ``error`` raised, with ``argument`` named in its message."""

    error: type[Exception]
    argument: str


@dataclass(frozen=True)
class Sent:
    """Sent to exactly ``target`` (raw path and query), with exactly ``body`` (JSON) if given."""

    target: str
    body: Any = None


@dataclass(frozen=True)
class RefusedOrSent:
    """Either is acceptable."""

    refused: Refused
    sent: Sent


Expectation = Refused | Sent | RefusedOrSent
NEW = {"name": "Rex", "category_id": 3}


def created(**fields: Any) -> dict[str, Any]:
    body = {"name": "Rex", "categoryId": 3}
    body.update(fields)
    return body


CASES: list[tuple[str, str, dict[str, Any], Expectation]] = [
    # get_pet(pet_id)
    ("traversal", "get_pet", {"pet_id": "1/../admin"}, Refused(TypeError, "pet_id")),
    ("query-injection", "get_pet", {"pet_id": "1?x=y"}, Refused(TypeError, "pet_id")),
    ("encoded-dots", "get_pet", {"pet_id": "%2e%2e"}, Refused(TypeError, "pet_id")),
    ("digit-string", "get_pet", {"pet_id": "1"}, Refused(TypeError, "pet_id")),
    ("float", "get_pet", {"pet_id": 1.0}, Refused(TypeError, "pet_id")),
    ("bool", "get_pet", {"pet_id": True}, Refused(TypeError, "pet_id")),
    ("none", "get_pet", {"pet_id": None}, Refused(TypeError, "pet_id")),
    ("bytes", "get_pet", {"pet_id": b"1"}, Refused(TypeError, "pet_id")),
    ("above-int64", "get_pet", {"pet_id": INT64_MAX + 1}, Refused(ValueError, "pet_id")),
    ("below-int64", "get_pet", {"pet_id": INT64_MIN - 1}, Refused(ValueError, "pet_id")),
    ("huge", "get_pet", {"pet_id": 10**100}, Refused(ValueError, "pet_id")),
    ("int64-max", "get_pet", {"pet_id": INT64_MAX}, Sent(f"/v1/pets/{INT64_MAX}")),
    ("int64-min", "get_pet", {"pet_id": INT64_MIN}, Sent(f"/v1/pets/{INT64_MIN}")),
    ("zero", "get_pet", {"pet_id": 0}, Sent("/v1/pets/0")),
    ("intenum", "get_pet", {"pet_id": Numbers.SEVEN}, Sent("/v1/pets/7")),
    (
        "int-mixin-enum",
        "get_pet",
        {"pet_id": Plain.SEVEN},
        RefusedOrSent(Refused(TypeError, "pet_id"), Sent("/v1/pets/7")),
    ),
    (
        "int-subclass-with-hostile-format",
        "get_pet",
        {"pet_id": Sneaky(1)},
        RefusedOrSent(Refused(TypeError, "pet_id"), Sent("/v1/pets/1")),
    ),
    # list_pets(limit, status)
    ("limit-query-injection", "list_pets", {"limit": "1?x=y"}, Refused(TypeError, "limit")),
    ("limit-digit-string", "list_pets", {"limit": "5"}, Refused(TypeError, "limit")),
    ("limit-float", "list_pets", {"limit": 5.0}, Refused(TypeError, "limit")),
    ("limit-bool", "list_pets", {"limit": True}, Refused(TypeError, "limit")),
    ("limit-zero", "list_pets", {"limit": 0}, Refused(ValueError, "limit")),
    ("limit-101", "list_pets", {"limit": 101}, Refused(ValueError, "limit")),
    ("limit-huge", "list_pets", {"limit": 2**64}, Refused(ValueError, "limit")),
    ("status-injection", "list_pets", {"status": "sold&limit=1"}, Refused(ValueError, "status")),
    ("status-traversal", "list_pets", {"status": "../admin"}, Refused(ValueError, "status")),
    ("status-encoded", "list_pets", {"status": "%73old"}, Refused(ValueError, "status")),
    ("status-int", "list_pets", {"status": 1}, Refused(TypeError, "status")),
    ("status-bytes", "list_pets", {"status": b"sold"}, Refused(TypeError, "status")),
    ("no-arguments", "list_pets", {}, Sent("/v1/pets")),
    ("both", "list_pets", {"limit": 100, "status": "sold"}, Sent("/v1/pets?limit=100&status=sold")),
    ("enum-status", "list_pets", {"status": PetStatus.PENDING}, Sent("/v1/pets?status=pending")),
    ("intenum-limit", "list_pets", {"limit": Numbers.SEVEN}, Sent("/v1/pets?limit=7")),
    (
        "int-mixin-enum-limit",
        "list_pets",
        {"limit": Plain.SEVEN},
        RefusedOrSent(Refused(TypeError, "limit"), Sent("/v1/pets?limit=7")),
    ),
    (
        "int-subclass-limit",
        "list_pets",
        {"limit": Sneaky(1)},
        RefusedOrSent(Refused(TypeError, "limit"), Sent("/v1/pets?limit=1")),
    ),
    # create_pet(name, category_id, status)
    ("name-none", "create_pet", {**NEW, "name": None}, Refused(TypeError, "name")),
    ("name-int", "create_pet", {**NEW, "name": 123}, Refused(TypeError, "name")),
    ("name-bytes", "create_pet", {**NEW, "name": b"Rex"}, Refused(TypeError, "name")),
    ("name-list", "create_pet", {**NEW, "name": ["Rex"]}, Refused(TypeError, "name")),
    ("category-str", "create_pet", {**NEW, "category_id": "3"}, Refused(TypeError, "category_id")),
    (
        "category-float",
        "create_pet",
        {**NEW, "category_id": 3.0},
        Refused(TypeError, "category_id"),
    ),
    (
        "category-bool",
        "create_pet",
        {**NEW, "category_id": True},
        Refused(TypeError, "category_id"),
    ),
    (
        "category-none",
        "create_pet",
        {**NEW, "category_id": None},
        Refused(TypeError, "category_id"),
    ),
    (
        "category-huge",
        "create_pet",
        {**NEW, "category_id": INT64_MAX + 1},
        Refused(ValueError, "category_id"),
    ),
    ("status-unknown", "create_pet", {**NEW, "status": "adopted"}, Refused(ValueError, "status")),
    ("status-int", "create_pet", {**NEW, "status": 1}, Refused(TypeError, "status")),
    (
        "name-traversal",
        "create_pet",
        {**NEW, "name": "../../admin?x=y#frag"},
        Sent("/v1/pets", created(name="../../admin?x=y#frag")),
    ),
    (
        "name-header-injection",
        "create_pet",
        {**NEW, "name": "\x00\r\nX-Injected: 1\r\n\r\nGET /admin HTTP/1.1\r\n"},
        Sent("/v1/pets", created(name="\x00\r\nX-Injected: 1\r\n\r\nGET /admin HTTP/1.1\r\n")),
    ),
    (
        "name-control-characters",
        "create_pet",
        {**NEW, "name": "".join(map(chr, range(32))) + "\x7f\u2028\u2029"},
        Sent("/v1/pets", created(name="".join(map(chr, range(32))) + "\x7f\u2028\u2029")),
    ),
    (
        "name-percent-encoding",
        "create_pet",
        {**NEW, "name": "%2e%2e/%0d%0a"},
        Sent("/v1/pets", created(name="%2e%2e/%0d%0a")),
    ),
    (
        "name-unicode",
        "create_pet",
        {**NEW, "name": "Rëx 🐕 名前"},
        Sent("/v1/pets", created(name="Rëx 🐕 名前")),
    ),
    (
        "name-100kb",
        "create_pet",
        {**NEW, "name": "R" * 100_000},
        Sent("/v1/pets", created(name="R" * 100_000)),
    ),
    (
        "name-lone-surrogate",
        "create_pet",
        {**NEW, "name": "Rex\ud800"},
        RefusedOrSent(Refused(ValueError, "name"), Sent("/v1/pets", created(name="Rex\ud800"))),
    ),
    ("name-empty", "create_pet", {**NEW, "name": ""}, Sent("/v1/pets", created(name=""))),
    (
        "category-int64-bounds",
        "create_pet",
        {**NEW, "category_id": INT64_MIN},
        Sent("/v1/pets", created(categoryId=INT64_MIN)),
    ),
    (
        "category-int-mixin-enum",
        "create_pet",
        {**NEW, "category_id": Plain.SEVEN},
        Sent("/v1/pets", created(categoryId=7)),
    ),
    (
        "status-enum",
        "create_pet",
        {**NEW, "status": PetStatus.SOLD},
        Sent("/v1/pets", created(status="sold")),
    ),
]

ANSWERS = {
    "get_pet": Reply(200, json=PET),
    "list_pets": Reply(200, json=[PET]),
    "create_pet": Reply(201, json=PET),
}


@pytest.mark.parametrize(
    ("operation", "arguments", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_hostile_argument_is_refused_or_sent_exactly(
    server: FaultServer,
    make_client: Callable[..., Api],
    operation: str,
    arguments: dict[str, Any],
    expected: Expectation,
) -> None:
    server.default = ANSWERS[operation]
    api = make_client(server, max_retries=0)
    arguments = dict(arguments)
    args = (arguments.pop("pet_id"),) if operation == "get_pet" else ()

    try:
        api.call(operation, *args, **arguments)
    except (TypeError, ValueError) as exc:
        outcome: BaseException | None = exc
    else:
        outcome = None

    requests = server.requests
    if isinstance(expected, RefusedOrSent):
        expected = expected.refused if outcome is not None else expected.sent
    if isinstance(expected, Refused):
        assert outcome is not None, f"sent {[r.target for r in requests]} instead of refusing"
        assert isinstance(outcome, expected.error), repr(outcome)
        assert expected.argument in str(outcome), f"{outcome!r} does not name the argument"
        assert requests == []
    else:
        assert outcome is None, repr(outcome)
        assert [r.target for r in requests] == [expected.target]
        (request,) = requests
        if expected.body is not None:
            assert request.json() == expected.body
            assert request.header("content-type") == "application/json"
        assert not {"x-injected"} & request.header_names()


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Trace": "v\r\nX-Injected: 1"},
        {"X-Trace": "v\nX-Injected: 1"},
        {"X-Trace\r\nX-Injected": "1"},
        {"Bad Name": "1"},
        {"X-Trace": "caf\u00e9"},
    ],
    ids=["crlf-in-value", "lf-in-value", "crlf-in-name", "space-in-name", "non-ascii-value"],
)
def test_hostile_default_headers_are_refused_before_sending(
    server: FaultServer, make_client: Callable[..., Api], headers: dict[str, str]
) -> None:
    server.default = Reply(200, json=[])
    try:
        api = make_client(server, default_headers=headers, max_retries=0)
    except (TypeError, ValueError):
        pass  # refused at construction: the best outcome
    else:
        with pytest.raises((TypeError, ValueError)):
            api.list_pets()

    assert server.requests == []


@pytest.mark.parametrize(
    "headers",
    [{"Content-Length": "0"}, {"content-length": "999"}, {"Transfer-Encoding": "chunked"}],
    ids=["content-length-short", "content-length-long", "transfer-encoding"],
)
def test_body_framing_headers_are_refused_before_sending(
    server: FaultServer, make_client: Callable[..., Api], headers: dict[str, str]
) -> None:
    # Sent as given, a stale Content-Length made h11 itself raise (LocalProtocolError), a raw
    # exception from outside the SDK's hierarchy.
    server.default = Reply(201, json=PET)
    (name,) = headers
    with pytest.raises(ValueError, match=f"^default_headers must not set '{name}'"):
        make_client(server, default_headers=headers)
    api = make_client(server, max_retries=0)
    with pytest.raises(ValueError, match=f"^extra_headers must not set '{name}'"):
        api.create_pet(name="Rex", category_id=3, extra_headers=headers)

    assert server.requests == []


@pytest.mark.parametrize("key", ["key\r\nX-Injected: 1", "key\n", "key with space", "k\u00e9y", ""])
def test_a_hostile_api_key_is_refused_at_construction(
    server: FaultServer, make_client: Callable[..., Api], key: str
) -> None:
    with pytest.raises(ValueError, match="api_key") as caught:
        make_client(server, api_key=key)

    assert key not in str(caught.value) or not key
    assert server.requests == []
