"""A success body that does not fit the schema costs about what a valid one does, over real sockets.

The SDK used to check a failing body again, whole, in cattrs' detailed mode, which raises an
exception with a traceback for every bad field of every element: a 2 MB list of empty objects
took 80 s and 3.8 GB to report three problems. The cost is bounded here by peak memory, as
``tracemalloc`` counts it (the exceptions it kept were what cost the time, too): deterministic
where timings are not. Bodies of 128 KiB show it in the default tier; the deep tier
(``pytest --deep``) checks the same at 2 MiB.
"""

from __future__ import annotations

import json
import pickle
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from animalstore_client import APIResponseValidationError, PetList, WireFormatError
from animalstore_client._core.converter import structure
from tests.conftest import at_scale
from tests.reliability.conftest import PET, Api, json_bytes, raised_exactly
from tests.reliability.faultserver import FaultServer, Reply

SCHEMA = "response body does not fit the schema: "
#: The body's size: 128 KiB in the default tier, 2 MiB (what took 80 s and 3.8 GB) in the deep
#: one. The cost of a check grows with the body, so the ratio to a valid body's peak is the same
#: at both sizes: re-checking the whole list in the detailed mode peaks 13 to 68 times as high
#: as a valid body at 128 KiB already, and a check that does not stop 1.5 to 5 times.
SIZES = at_scale(128 * 1024, 2 * 1024 * 1024, "size")
WRONG_TYPES = {"id": "7", "name": 5, "categoryId": None, "status": "available"}
MISSING = "required field is missing"


def list_of(item: object, size: int) -> list[object]:
    """Copies of ``item``, as many as make a JSON array of about ``size`` bytes."""
    return [item] * (size // (len(json_bytes(item)) + 2))


def peak_of(call: Callable[[], object]) -> tuple[int, object]:
    """Run ``call``; return the peak of memory allocated meanwhile, and what it returned or
    raised (an ``APIResponseValidationError``).

    Only what is allocated after the start is traced: garbage left from before neither counts
    nor needs collecting first (a full collection costs more than the measured call).
    """
    tracemalloc.start()
    try:
        try:
            outcome = call()
        except APIResponseValidationError as exc:
            outcome = exc
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, outcome


def warmed_up(server: FaultServer, make_client: Callable[..., Api]) -> Api:
    """A client that has connected and parsed a valid and an invalid list once already.

    The first parse of each kind builds cattrs' functions, and the first call opens the
    connection: costs that are no part of either body's.
    """
    server.script(Reply(200, json=[PET]), Reply(200, json=[{}, PET]))
    api = make_client(server, max_retries=0)
    api.list_pets()
    with pytest.raises(APIResponseValidationError):
        api.list_pets()
    return api


def assert_costs_about_a_valid_body(
    server: FaultServer, make_client: Callable[..., Api], invalid: list[object]
) -> APIResponseValidationError:
    """Check that ``list_pets`` answered ``invalid`` peaks at most twice as high as when
    answered a valid body of the same size, or as decoding ``invalid`` alone; return its error.

    Decoding alone is the floor: a list of ``{}`` is almost four times the memory of as many
    bytes of pets, and no check after the decoding can make that cheaper.
    """
    api = warmed_up(server, make_client)
    body = json_bytes(invalid)
    valid = json_bytes(list_of(PET, len(body)))
    assert len(body) - 100 < len(valid) <= len(body)
    server.script(Reply(200, body=valid))
    valid_peak, pets = peak_of(api.list_pets)
    assert isinstance(pets, PetList)
    del pets
    decoding_peak, _ = peak_of(lambda: json.loads(body))
    server.script(Reply(200, body=body))

    invalid_peak, error = peak_of(api.list_pets)

    assert type(error) is APIResponseValidationError
    floor = max(valid_peak, decoding_peak)
    assert invalid_peak <= 2 * floor, f"{invalid_peak / floor:.1f} times {floor:,} bytes"
    return error


#: Bodies of about ``size`` bytes whose every element is bad, and the first problems of each.
EVERY_ELEMENT_BAD: dict[str, tuple[Callable[[int], list[object]], list[str]]] = {
    "every-element-empty": (
        lambda size: list_of({}, size),
        [f"$[0].id: {MISSING}", f"$[0].name: {MISSING}", f"$[0].categoryId: {MISSING}"],
    ),
    "every-element-wrong-types": (
        lambda size: list_of(WRONG_TYPES, size),
        [
            "$[0].id: expected an integer, got str '7'",
            "$[0].name: expected a string, got int 5",
            "$[0].categoryId: expected an integer, got null",
        ],
    ),
    "every-element-not-an-object": (
        lambda size: [PET, *list_of(1, size)],
        [f"$[{i}]: expected a JSON object, got int 1" for i in (1, 2, 3)],
    ),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case", list(EVERY_ELEMENT_BAD.values()), ids=list(EVERY_ELEMENT_BAD))
def test_a_list_of_bad_elements_costs_about_a_valid_one(
    server: FaultServer,
    make_client: Callable[..., Api],
    case: tuple[Callable[[int], list[object]], list[str]],
    size: int,
) -> None:
    make_body, problems = case

    error = assert_costs_about_a_valid_body(server, make_client, make_body(size))

    # The first problems by JSON path and wire name; the check stopped after them, and says so.
    assert str(error) == SCHEMA + "; ".join(problems) + "; and more"


def _bad_at_the_end(item: object, size: int) -> list[object]:
    """``size`` bytes of valid pets but the last, which is ``item``."""
    pets = list_of(PET, size)
    pets[-1] = item
    return pets


#: Bodies of about ``size`` bytes with fewer bad elements, cheap before too, and the message
#: each gives.
FEW_ELEMENTS_BAD: dict[str, tuple[Callable[[int], list[object]], Callable[[int], str]]] = {
    "one-bad-element-at-the-end": (
        lambda size: _bad_at_the_end({**PET, "categoryId": "7"}, size),
        lambda size: (
            f"$[{len(list_of(PET, size)) - 1}].categoryId: expected an integer, got str '7'"
        ),
    ),
    "a-huge-string": (
        lambda size: [{**PET, "categoryId": "x" * size}],
        lambda size: "$[0].categoryId: expected an integer, got str '" + "x" * 36 + "...",
    ),
    "a-deeply-nested-element-at-the-end": (
        lambda size: _bad_at_the_end({**PET, "id": json.loads("[" * 400 + "]" * 400)}, size),
        lambda size: (
            f"$[{len(list_of(PET, size)) - 1}].id: expected an integer, got list "
            + "[" * 37
            + "..."
        ),
    ),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case", list(FEW_ELEMENTS_BAD.values()), ids=list(FEW_ELEMENTS_BAD))
def test_other_shapes_of_invalid_body_cost_about_a_valid_one(
    server: FaultServer,
    make_client: Callable[..., Api],
    case: tuple[Callable[[int], list[object]], Callable[[int], str]],
    size: int,
) -> None:
    # Guards for the element-by-element check: it reads a list of good elements again, and
    # must stay cheap whatever one bad element holds.
    make_body, problem = case

    error = assert_costs_about_a_valid_body(server, make_client, make_body(size))

    assert str(error) == SCHEMA + problem(size)


@pytest.mark.parametrize("count", at_scale(5_000, 100_000, "bad"))
def test_many_bad_elements_report_the_first_three_and_say_there_are_more(
    server: FaultServer, make_client: Callable[..., Api], count: int
) -> None:
    bad = {**PET, "categoryId": "7"}
    server.script(Reply(200, json=[PET, *[bad] * count]))
    api = make_client(server, max_retries=0)

    error = raised_exactly(APIResponseValidationError, api.list_pets)

    # Not "and 4997 more": counting them would mean checking every one of them.
    assert (
        str(error)
        == SCHEMA
        + "; ".join(f"$[{i}].categoryId: expected an integer, got str '7'" for i in (1, 2, 3))
        + "; and more"
    )
    assert len(server.requests) == 1


def test_problems_are_the_first_ones_found_and_say_they_are_not_all() -> None:
    data: Any = json.loads(json.dumps([PET, PET, {"id": 1}, *[{}] * 100_000]))

    with pytest.raises(WireFormatError) as caught:
        structure(data, PetList)

    error = caught.value
    # Each failing element is diagnosed whole: the walk stops between elements, once more
    # problems are known than the message shows.
    assert error.problems == [
        f"$[2].name: {MISSING}",
        f"$[2].categoryId: {MISSING}",
        f"$[3].id: {MISSING}",
        f"$[3].name: {MISSING}",
        f"$[3].categoryId: {MISSING}",
    ]
    assert error.complete is False
    assert str(error) == "; ".join(error.problems[:3]) + "; and more"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.problems, copy.complete, str(copy)) == (error.problems, False, str(error))


def test_a_short_list_still_lists_every_problem() -> None:
    # As it was: a list checked to its end counts the problems not shown; now it says so.
    with pytest.raises(WireFormatError) as caught:
        structure([{}, PET, {"id": "7", "name": "Rex", "categoryId": 3}], PetList)

    error = caught.value
    assert error.problems == [
        f"$[0].id: {MISSING}",
        f"$[0].name: {MISSING}",
        f"$[0].categoryId: {MISSING}",
        "$[2].id: expected an integer, got str '7'",
    ]
    assert error.complete is True
    assert str(error) == "; ".join(error.problems[:3]) + "; and 1 more"
    assert repr(error) == f"WireFormatError({error.problems!r})"
