"""Property-based: the reference store against the OpenAPI document, through ``store.handle``.

Requests are generated from the document's own constraints (the limit bounds, the PetStatus
enum, NewPet's required fields and types, int64): valid ones, and invalid ones of every kind
(out-of-range or non-numeric limits, unknown statuses, bodies that are any JSON value, objects
missing fields, wrong-typed fields, booleans as integers, non-UTF-8 bytes, random paths and
methods, missing or wrong credentials). For each:

* where the generator knows, openapi-core agrees the request is valid, or invalid, per the
  document (not asked where the document cannot say: a wrong key, a repeated parameter, text
  that Python's ``int`` would read as a number but HTTP would not);
* the response is never a 5xx; where the document lists the operation and status, it fits the
  document; otherwise it is an Error body whose ``status`` is the HTTP status;
* valid requests succeed (200/201, or 404 for an id nobody has), invalid ones get the 4xx the
  spec names (400 for a bad body, 401 for bad credentials), or at least a 4xx.

Lone surrogates (escaped, or encoded as bytes), UTF-16/32 bodies and very deep nesting are
left to the explicit tests in ``test_store_responses.py`` (each currently exposes a store bug):
hypothesis' text is well-formed Unicode, its JSON shallow, and none of its random bytes hit
those exact forms, so these properties stay a stable check of everything else.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from animalstore_client import PetStatus
from animalstore_client.testing import FakeAnimalStore
from tests.conftest import at_scale

from .conftest import API_KEY, Contract, OpenAPIRequest, OpenAPIResponse, describe

DOCUMENT = yaml.safe_load(Path(__file__).with_name("openapi.yaml").read_text(encoding="utf-8"))
_LIST = DOCUMENT["paths"]["/pets"]["get"]
LIMIT = next(p for p in _LIST["parameters"] if p["name"] == "limit")["schema"]
STATUSES: list[str] = DOCUMENT["components"]["schemas"]["PetStatus"]["enum"]
NEW_PET = DOCUMENT["components"]["schemas"]["NewPet"]
REQUIRED: list[str] = NEW_PET["required"]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # format: int64

SEEDED = 25  # more than the default page size
SEED_STATUSES = [*map(PetStatus, STATUSES), None]
JSON_HEADERS = {"Content-Type": "application/json"}
# Bytes that can appear nowhere in UTF-8: 0xFF, 0xFE, an overlong lead byte, a 5-byte form.
NEVER_UTF8 = [b"\xff", b"\xfe", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80"]

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@attrs.frozen
class Case:
    """One generated request and what must come of it.

    Attributes:
        expect: ``"200"``, ``"201"``, ``"400"``, ``"401"``, ``"404"``; ``"get"`` (200 when the
            id is a seeded pet's, else 404); ``"4xx"`` (any client error); or ``"any"`` (only
            the checks every response gets).
        document_valid: what openapi-core must say of the request; ``None``: not asked.
    """

    method: str
    path: str
    query: str = ""
    headers: dict[str, str] = attrs.field(factory=dict)
    body: bytes = b""
    expect: str = "4xx"
    document_valid: bool | None = None
    sent: Any = None  # the decoded body or the list parameters, for the success checks


def seeded_store() -> FakeAnimalStore:
    store = FakeAnimalStore(api_keys=(API_KEY,))
    for number in range(SEEDED):
        store.add_pet(f"seed {number}", number, SEED_STATUSES[number % len(SEED_STATUSES)])
    return store


def exercise(contract: Contract, case: Case) -> None:
    store = seeded_store()
    request = OpenAPIRequest.from_store(
        case.method, case.path, case.query, case.headers, case.body, contract.production_host
    )
    if case.document_valid is not None:
        errors = contract.request_errors(request)
        assert (not errors) == case.document_valid, describe(errors) or "valid per the document"

    raw = store.handle(case.method, case.path, case.query, case.headers, case.body)
    response = OpenAPIResponse.from_store(raw)
    contract.check_store_response(request, response, case.path)  # never 5xx; fits or Error

    status = response.status_code
    if case.expect == "any":
        return
    if case.expect == "4xx":
        assert 400 <= status < 500
    elif case.expect == "get":
        pet_id = int(case.path.rsplit("/", 1)[1])
        assert status == (200 if 1 <= pet_id <= SEEDED else 404)
    else:
        assert status == int(case.expect)
    if status >= 400:
        assert len(store.pets) == SEEDED  # a rejected request changes nothing
    else:
        SUCCESS_CHECKS[case.method, case.path.count("/")](store, case, json.loads(response.data))


def check_list(store: FakeAnimalStore, case: Case, pets: list[dict[str, Any]]) -> None:
    limit, status = case.sent
    matching = [pet for pet in store.pets if status is None or pet.status == status]
    assert len(pets) == min(limit or LIMIT["default"], len(matching))
    assert all(status is None or pet["status"] == status for pet in pets)


def check_create(store: FakeAnimalStore, case: Case, pet: dict[str, Any]) -> None:
    assert pet["id"] not in range(1, SEEDED + 1)
    assert {key: pet.get(key) for key in ("name", "categoryId", "status")} == {
        key: case.sent.get(key) for key in ("name", "categoryId", "status")
    }
    assert len(store.pets) == SEEDED + 1


def check_get(store: FakeAnimalStore, case: Case, pet: dict[str, Any]) -> None:
    assert pet["id"] == int(case.path.rsplit("/", 1)[1])


SUCCESS_CHECKS: dict[tuple[str, int], Callable[[FakeAnimalStore, Case, Any], None]] = {
    ("GET", 2): check_list,
    ("POST", 2): check_create,
    ("GET", 3): check_get,
}

# -- strategies ---------------------------------------------------------------------------

int64 = st.integers(INT64_MIN, INT64_MAX)
not_int64 = st.integers(INT64_MAX + 1) | st.integers(max_value=INT64_MIN - 1)
header_text = st.text(st.characters(exclude_categories=("Cc", "Cs")), max_size=20)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
param_names = st.text(string.ascii_letters + "_", min_size=1, max_size=8)

valid_auth = st.sampled_from([f"Bearer {API_KEY}", f"bearer {API_KEY}", f"BEARER {API_KEY}"]).map(
    lambda value: {"Authorization": value}
)

# (headers, whether the document itself can tell they are wrong)
invalid_auth: st.SearchStrategy[tuple[dict[str, str], bool | None]] = st.one_of(
    st.just(({}, False)),
    st.sampled_from(["", "Bearer", "Bearer ", API_KEY, f"Basic {API_KEY}", f"Token {API_KEY}"]).map(
        lambda value: ({"Authorization": value}, None)
    ),
    st.builds(lambda t: f"Bearer {t}", header_text).map(lambda v: ({"Authorization": v}, None)),
    header_text.map(lambda value: ({"Authorization": value}, None)),
).filter(lambda pair: API_KEY not in pair[0].get("Authorization", ""))


def not_an_int(text: str) -> bool:
    """Whether no reading of ``text`` as an integer exists (not even Python's lenient ``int``)."""
    try:
        int(text)
    except ValueError:
        return True
    return False


@st.composite
def list_valid(draw: st.DrawFn) -> Case:
    limit = draw(st.none() | st.integers(LIMIT["minimum"], LIMIT["maximum"]))
    status = draw(st.none() | st.sampled_from(STATUSES))
    params = [
        (name, value) for name, value in (("limit", limit), ("status", status)) if value is not None
    ]
    extra = st.tuples(
        param_names.filter(lambda n: n not in ("limit", "status")), st.text(max_size=8)
    )
    params += draw(st.lists(extra, max_size=2))
    return Case(
        "GET",
        "/v1/pets",
        urlencode(draw(st.permutations(params))),
        draw(valid_auth),
        expect="200",
        document_valid=True,
        sent=(limit, status),
    )


@st.composite
def list_invalid(draw: st.DrawFn) -> Case:
    limit = st.integers(LIMIT["minimum"], LIMIT["maximum"]).map(str)
    status = st.sampled_from(STATUSES)
    bad, document_valid = draw(
        st.one_of(
            st.integers()
            .filter(lambda n: not LIMIT["minimum"] <= n <= LIMIT["maximum"])
            .map(lambda n: ([("limit", str(n))], False)),
            st.text(max_size=10).filter(not_an_int).map(lambda t: ([("limit", t)], False)),
            # Text only HTTP calls non-numeric (" 5", "+5", "٣"): openapi-core casts with int().
            st.sampled_from([" 5", "5 ", "+5", "1_0", "٣", "05.0"]).map(
                lambda t: ([("limit", t)], None)
            ),
            st.text(max_size=12)
            .filter(lambda s: s not in STATUSES)
            .map(lambda s: ([("status", s)], False)),
            # A parameter given twice: the document cannot say (openapi-core reads one).
            st.tuples(limit, limit).map(lambda p: ([("limit", p[0]), ("limit", p[1])], None)),
            st.tuples(status, status).map(lambda p: ([("status", p[0]), ("status", p[1])], None)),
        )
    )
    other = draw(st.sampled_from([[], [("status", "sold")], [("limit", "5")]]))
    params = bad + [pair for pair in other if pair[0] not in {name for name, _ in bad}]
    return Case(
        "GET",
        "/v1/pets",
        urlencode(draw(st.permutations(params))),
        draw(valid_auth),
        expect="4xx",
        document_valid=document_valid,
    )


@st.composite
def new_pets(draw: st.DrawFn) -> dict[str, Any]:
    pet: dict[str, Any] = {"name": draw(st.text()), "categoryId": draw(int64)}
    if draw(st.booleans()):
        pet["status"] = draw(st.sampled_from(STATUSES))
    unknown = st.text(max_size=8).filter(lambda k: k not in NEW_PET["properties"])
    pet |= draw(st.dictionaries(unknown, json_values, max_size=2))  # open to extra fields
    return dict(draw(st.permutations(list(pet.items()))))


def encoded(value: Any, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode()


@st.composite
def create_valid(draw: st.DrawFn) -> Case:
    pet = draw(new_pets())
    headers = draw(valid_auth) | JSON_HEADERS
    body = encoded(pet, draw(st.booleans()))
    return Case("POST", "/v1/pets", "", headers, body, "201", document_valid=True, sent=pet)


def with_field(pet: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    return pet | {name: value}


@st.composite
def create_invalid(draw: st.DrawFn) -> Case:
    pet = draw(new_pets())
    ascii_only = draw(st.booleans())
    not_str = json_values.filter(lambda v: not isinstance(v, str))
    not_int = st.one_of(
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
        st.none(),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        not_int64,
    )
    bad_status = st.text(max_size=10).filter(lambda s: s not in STATUSES) | not_str
    document_invalid = st.one_of(
        json_values.filter(lambda v: not isinstance(v, dict)),
        st.sets(st.sampled_from(REQUIRED), min_size=1).map(
            lambda names: {k: v for k, v in pet.items() if k not in names}
        ),
        not_str.map(lambda v: with_field(pet, "name", v)),
        not_int.map(lambda v: with_field(pet, "categoryId", v)),
        bad_status.map(lambda v: with_field(pet, "status", v)),
    ).map(lambda value: encoded(value, ascii_only))
    body, document_valid = draw(
        st.one_of(
            document_invalid.map(lambda b: (b, False)),
            # Not UTF-8: random bytes, or a valid body with a stray byte inside the name.
            st.tuples(st.binary(max_size=30), st.sampled_from(NEVER_UTF8), st.integers(0, 30)).map(
                lambda t: (t[0][: t[2]] + t[1] + t[0][t[2] :], False)
            ),
            # (An encoded surrogate, b"\xed\xa0\x80", and UTF-16/32 bodies, which Python's
            # json and so openapi-core and the store all accept, are explicit tests in
            # test_store_responses.py.)
            st.sampled_from(NEVER_UTF8).map(
                lambda byte: (
                    encoded(pet, True).replace(b'"name": "', b'"name": "' + byte, 1),
                    False,
                )
            ),
            st.just((b"", False)),
            # Not JSON at all (NaN and Infinity included, which Python and openapi-core take).
            st.sampled_from([b"{", b"{'name': 'x'}", b"NaN", b"Infinity", b'{"name": "x",}']).map(
                lambda b: (b, None)
            ),
            st.integers(1, 20).map(lambda n: (encoded(pet, True)[:-n], None)),
        )
    )
    headers = draw(valid_auth) | JSON_HEADERS
    return Case("POST", "/v1/pets", "", headers, body, "400", document_valid=document_valid)


@st.composite
def get_any(draw: st.DrawFn) -> Case:
    url_safe = string.ascii_letters + string.digits + "-._~+_"
    pet_id, expect, document_valid = draw(
        st.one_of(
            st.integers(-2, SEEDED + 3).map(lambda n: (str(n), "get", True)),
            int64.map(lambda n: (str(n), "get", True)),
            not_int64.map(lambda n: (str(n), "404", False)),
            st.text(url_safe, min_size=1, max_size=10)
            .filter(lambda t: not_an_int(t) and t not in (".", ".."))
            .map(lambda t: (t, "4xx", False)),
        )
    )
    return Case("GET", f"/v1/pets/{pet_id}", "", draw(valid_auth), b"", expect, document_valid)


@st.composite
def random_route(draw: st.DrawFn) -> Case:
    method = draw(
        st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "get"])
        | st.text(string.ascii_uppercase, min_size=1, max_size=7)
    )
    segment = st.text(
        st.characters(exclude_categories=["Cs"], exclude_characters="/?#"), min_size=1, max_size=8
    ).filter(lambda s: s not in (".", ".."))
    path = draw(
        st.one_of(
            st.lists(segment, max_size=4).map(lambda segments: "/" + "/".join(segments)),
            st.lists(segment, min_size=1, max_size=3).map(lambda s: "/v1/pets/" + "/".join(s)),
            st.sampled_from(["/v1/pets", "/v1/pets/1", "/v1", "/v1/", "/v1/pets/", "/pets", "/"]),
        )
    )
    body = draw(st.just(b"") | st.binary(max_size=20) | new_pets().map(lambda p: encoded(p, True)))
    query = draw(st.just("") | st.lists(st.tuples(param_names, st.text(max_size=5))).map(urlencode))
    headers = draw(valid_auth) | JSON_HEADERS
    return Case(method, path, query, headers, body, expect="any")


def _expect_any(contract: Contract, case: Case) -> Case:
    # A random request that happens to reach a documented operation may succeed or not; one
    # that reaches none must be a client error.
    expect = "any" if contract.operation(case.method, case.path) else "4xx"
    return attrs.evolve(case, expect=expect)


@st.composite
def unauthorized(draw: st.DrawFn) -> Case:
    case = draw(
        st.one_of(list_valid(), list_invalid(), create_valid(), create_invalid(), get_any())
    )
    headers, document_valid = draw(invalid_auth)
    content_type = {k: v for k, v in case.headers.items() if k.lower() == "content-type"}
    return attrs.evolve(
        case,
        headers=headers | content_type,
        expect="401",
        # Only a missing header is wrong per the document whatever else the request holds.
        document_valid=False if document_valid is False else None,
    )


# -- the properties -----------------------------------------------------------------------


def examples(small: int, full: int) -> pytest.MarkDecorator:
    """Examples a property is checked on: ``small`` in the default tier (each kind of request
    its generator makes is still drawn several times over), ``full`` in the deep one."""
    return pytest.mark.parametrize("examples", at_scale(small, full, "examples"))


def holds(
    contract: Contract,
    cases: st.SearchStrategy[Case],
    examples: int,
    expect: Callable[[Contract, Case], Case] = lambda contract, case: case,
) -> None:
    """Check ``exercise`` on ``examples`` generated cases."""

    @settings(SETTINGS, max_examples=examples)
    @given(case=cases)
    def check(case: Case) -> None:
        exercise(contract, expect(contract, case))

    check()


@examples(30, 120)
def test_valid_lists_succeed_and_fit_the_document(contract: Contract, examples: int) -> None:
    holds(contract, list_valid(), examples)


@examples(30, 120)
def test_invalid_lists_are_client_errors(contract: Contract, examples: int) -> None:
    holds(contract, list_invalid(), examples)


@examples(30, 120)
def test_valid_creates_succeed_and_fit_the_document(contract: Contract, examples: int) -> None:
    holds(contract, create_valid(), examples)


@examples(50, 200)
def test_invalid_creates_are_400s(contract: Contract, examples: int) -> None:
    holds(contract, create_invalid(), examples)


@examples(30, 120)
def test_gets_are_200_or_404_and_fit_the_document(contract: Contract, examples: int) -> None:
    holds(contract, get_any(), examples)


@examples(30, 120)
def test_bad_credentials_are_401s_on_every_operation(contract: Contract, examples: int) -> None:
    holds(contract, unauthorized(), examples)


@examples(30, 120)
def test_random_methods_and_paths_never_break_the_store(contract: Contract, examples: int) -> None:
    holds(contract, random_route(), examples, _expect_any)
