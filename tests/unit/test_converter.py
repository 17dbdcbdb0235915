"""The converter, exactly: its messages, its error's state, its fast path and its fallbacks.

What these prove, beyond what the models' tests show of it:

- ``WireFormatError`` keeps one argument (and its repr) when its list is complete, two when it
  is not, so that a pickled copy is as incomplete; its message counts the problems it does not
  show, and says "and more" when it does not know how many there are.
- The messages name what came, cut to 40 characters, and what was expected (an int64, a
  string, one of a closed enum's values).
- Valid data never builds the detailed converter (the fast path decides it alone), and an
  invalid list goes through the detailed mode only where it fails: the walk gives each
  element's hook the element's type, which a stock cattrs hook needs.
- The walk over a long list stops once it has more problems than the message shows, even in a
  list of lists, and says the list is incomplete.
- When the fast path fails for a passing reason (a ``RecursionError``) and no part fails when
  looked at again, the detailed mode decides on the whole: it returns the value, or its error.
- The converter does the same for any attrs model, not only the SDK's four: tests build small
  ones of their own for what those do not have (a name of three words, an optional plain
  field, an enum that is not a ``str``, a validator).
"""

from __future__ import annotations

import enum
import pickle
from typing import Any, Literal

import attrs
import pytest
import respx
from cattrs.errors import IterableValidationError, IterableValidationNote

from animalstore_client import Error, NewPet, Pet, PetList, WireFormatError
from animalstore_client._core import converter
from animalstore_client._core.converter import structure, unstructure
from tests.conftest import Api
from tests.unit.conftest import BoolScalar

PET = Pet(id=7, name="Rex", category_id=3)
PET_WIRE: dict[str, object] = {"id": 7, "name": "Rex", "categoryId": 3}
MISSING = "required field is missing"


# --- WireFormatError ------------------------------------------------------------------------


def test_a_complete_error_has_its_one_argument_and_the_repr_it_always_had() -> None:
    error = WireFormatError(["$.id: required field is missing"])

    assert error.args == (["$.id: required field is missing"],)
    assert repr(error) == "WireFormatError(['$.id: required field is missing'])"


def test_an_incomplete_error_says_so_and_pickles_as_incomplete() -> None:
    problems = ["$[0].id: a", "$[0].name: b", "$[1].id: c", "$[1].name: d"]
    error = WireFormatError(problems, complete=False)

    assert error.args == (problems, False)
    assert str(error) == "$[0].id: a; $[0].name: b; $[1].id: c; and more"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.problems, copy.complete, str(copy)) == (problems, False, str(error))


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (1, "p0"),
        (3, "p0; p1; p2"),
        (4, "p0; p1; p2; and 1 more"),
        (5, "p0; p1; p2; and 2 more"),
    ],
)
def test_a_complete_errors_message_counts_the_problems_it_does_not_show(
    count: int, message: str
) -> None:
    assert str(WireFormatError([f"p{i}" for i in range(count)])) == message


# --- the messages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("x" * 38, "'" + "x" * 38 + "'"),  # a repr of 40 characters: whole
        ("x" * 39, "'" + "x" * 36 + "..."),  # of 41: its first 37, and "..."
    ],
    ids=["40", "41"],
)
def test_a_wrong_value_is_shown_up_to_40_characters(value: str, shown: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        Pet.from_dict({**PET_WIRE, "id": value})
    assert caught.value.problems == [f"$.id: expected an integer, got str {shown}"]


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_an_integer_beyond_int64_is_named(value: int) -> None:
    with pytest.raises(WireFormatError) as caught:
        Pet.from_dict({**PET_WIRE, "categoryId": value})
    assert caught.value.problems == [f"$.categoryId: expected an int64, got {value}"]


def test_a_string_field_names_the_value_it_got() -> None:
    with pytest.raises(WireFormatError) as caught:
        Pet.from_dict({**PET_WIRE, "name": 5})
    assert caught.value.problems == ["$.name: expected a string, got int 5"]


def test_a_closed_enum_lists_the_values_it_takes() -> None:
    with pytest.raises(WireFormatError) as caught:
        NewPet.from_dict({"name": "Rex", "categoryId": 3, "status": "lost"})
    assert caught.value.problems == [
        "$.status: expected one of 'available', 'pending', 'sold', got 'lost'"
    ]


def test_a_null_status_in_a_response_body_is_none(api: Api, mock_api: respx.MockRouter) -> None:
    mock_api.get("/pets").respond(200, json=[{**PET_WIRE, "status": None}])

    pets = api.list_pets()

    assert pets == [PET]
    assert pets[0].status is None


def test_from_dict_reads_every_field_after_a_missing_one() -> None:
    # The Python name category_id is still read after id, which is missing.
    with pytest.raises(WireFormatError) as caught:
        Pet.from_dict({"name": "Rex", "category_id": 3})
    assert caught.value.problems == [f"$.id: {MISSING}"]


def test_another_librarys_boolean_is_not_an_integer_even_with_an_index() -> None:
    with pytest.raises(WireFormatError) as caught:
        Pet.from_dict({**PET_WIRE, "id": BoolScalar()})
    assert caught.value.problems == ["$.id: expected an integer, got BoolScalar True"]


# --- the fast path, and the walk over a failing list ----------------------------------------


@pytest.mark.parametrize(
    ("data", "type_", "expected"),
    [
        (PET_WIRE, Pet, PET),
        ([PET_WIRE], list[Pet], [PET]),
        ([PET_WIRE], PetList, PetList([PET])),
        ({"code": "c", "message": "m", "status": 404}, Error, Error("c", "m", 404)),
        ("a", Literal["a", "b"], "a"),  # a stock cattrs hook, which reads the type it is given
    ],
    ids=["pet", "list", "pet-list", "error", "literal"],
)
def test_valid_data_never_builds_the_detailed_converter(
    data: object, type_: Any, expected: object
) -> None:
    converter._detailed.cache_clear()

    result = structure(data, type_)

    assert result == expected
    assert type(result) is type(expected)
    assert converter._detailed.cache_info().currsize == 0


def test_the_walk_gives_each_element_its_type_and_diagnoses_only_the_failing_ones(
    detailed_structured: list[object],
) -> None:
    with pytest.raises(WireFormatError) as caught:
        structure(["a", "c", "b"], list[Literal["a", "b"]])
    assert caught.value.problems == ["$[1]: c not in literal typing.Literal['a', 'b']"]
    assert detailed_structured == ["c"]


def test_the_walk_stops_once_it_has_more_problems_than_the_message_shows() -> None:
    # Three problems an element: the walk checks a second, then stops before the third.
    with pytest.raises(WireFormatError) as caught:
        structure([{}, {}, {}], PetList)

    error = caught.value
    fields = ["id", "name", "categoryId"]
    assert error.problems == [f"$[{i}].{field}: {MISSING}" for i in (0, 1) for field in fields]
    assert error.complete is False
    assert str(error) == "; ".join(error.problems[:3]) + "; and more"


def test_a_stopped_walk_in_an_inner_list_stops_the_outer_one() -> None:
    with pytest.raises(WireFormatError) as caught:
        structure([[{}, {}, {}], [{}]], list[list[Pet]])

    error = caught.value
    fields = ["id", "name", "categoryId"]
    assert error.problems == [f"$[0][{i}].{field}: {MISSING}" for i in (0, 1) for field in fields]
    assert error.complete is False


# --- the fallback: a passing failure of the fast path ---------------------------------------


class Flaky(dict[str, object]):
    """A JSON object whose ``id`` cannot be read at the given reads (counted from 1).

    It stands for a passing failure, such as a ``RecursionError`` near the stack's limit: the
    fast path reads ``id`` first, the walk over a list (in the fast mode) next, the detailed
    mode last.
    """

    def __init__(self, data: dict[str, object], failing: set[int]) -> None:
        super().__init__(data)
        self.failing = failing
        self.reads = 0

    def __getitem__(self, key: str) -> object:
        if key == "id":
            self.reads += 1
            if self.reads in self.failing:
                raise RecursionError("maximum recursion depth exceeded")
        return super().__getitem__(key)


def test_data_that_fits_when_looked_at_again_is_structured_by_the_detailed_mode() -> None:
    assert structure(Flaky(PET_WIRE, failing={1}), Pet) == PET
    pets: PetList = structure([Flaky(PET_WIRE, failing={1}), PET_WIRE], PetList)
    assert (type(pets), pets) == (PetList, [PET, PET])


def test_the_detailed_modes_own_failure_is_reported_with_its_path() -> None:
    # Read 1 fails the fast path; read 2, the walk, passes; read 3, the detailed mode, fails.
    data = [Flaky(PET_WIRE, failing={1, 3}), PET_WIRE]

    with pytest.raises(WireFormatError) as caught:
        structure(data, PetList)

    assert caught.value.problems == ["$[0].id: maximum recursion depth exceeded"]
    assert caught.value.complete is True


# --- models of the tests' own ---------------------------------------------------------------


class Level(enum.Enum):
    """An enum whose values are not strings."""

    LOW = 1
    HIGH = 2


@attrs.frozen
class Record:
    date_of_birth: str
    note: str | None = None
    level: Level | None = None


def test_any_model_is_read_and_written_under_its_wire_names() -> None:
    record = Record(date_of_birth="2020-01-01", note="n", level=Level.HIGH)
    wire = {"dateOfBirth": "2020-01-01", "note": "n", "level": 2}

    assert structure(wire, Record) == record
    assert unstructure(record) == wire
    assert structure({"dateOfBirth": "", "note": None}, Record) == Record(date_of_birth="")
    assert converter.enum_value(Level.LOW) == 1


@attrs.frozen
class Checked:
    count: int = attrs.field(validator=attrs.validators.gt(0))


def test_a_models_own_check_is_reported_at_its_path() -> None:
    with pytest.raises(WireFormatError) as caught:
        structure({"count": 0}, Checked)
    assert caught.value.problems == ["$: 'count' must be > 0: 0"]
    with pytest.raises(WireFormatError) as caught:
        structure([{"count": 1}, {"count": 0}], list[Checked])
    assert caught.value.problems == ["$[1]: 'count' must be > 0: 0"]


# --- the private helpers, where no public path reaches a case -------------------------------


def test_only_a_list_or_a_subclass_of_one_has_an_element_type() -> None:
    assert converter._element_type(list[Pet]) is Pet
    assert converter._element_type(PetList) is Pet
    for other in (Pet, set[Pet], tuple[Pet], frozenset[Pet], dict[str, Pet]):
        assert converter._element_type(other) is None, other


def test_an_iterable_error_without_an_index_is_reported_at_the_lists_path() -> None:
    # cattrs notes every element's error with its index; _problems still reports one that is not.
    indexed = ValueError("bad element")
    indexed.__notes__ = [IterableValidationNote("@ index 2", 2, int)]  # type: ignore[attr-defined]
    error = IterableValidationError("While structuring", [indexed, ValueError("other")], list)

    assert converter._problems(error, "$.pets") == ["$.pets[2]: bad element", "$.pets: other"]
