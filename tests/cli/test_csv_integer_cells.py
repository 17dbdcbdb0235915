"""A CSV record's ``categoryId`` cell: any text is a record or an invalid line, never a crash.

``int()`` refuses a string of more than 4,300 digits with a ``ValueError`` (CPython's limit on
integer conversion), takes ``+7``, `` 7``, ``7_0`` and other scripts' digits; the reader must
look at the cell before ``int()`` does.
"""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from animalstore_client._cli.records import Invalid, Record, read_records
from tests.cli.test_bulk import animalstore
from tests.cli.test_cli import Server

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Past CPython's default limit on converting a string of digits to an int (4,300).
HUGE = "9" * 5_000


def is_int64(cell: str) -> bool:
    """Whether ``cell`` is an integer written the plain way (ASCII digits) within int64."""
    digits = cell[1:] if cell.startswith("-") else cell
    if not digits or len(digits) > 30 or not all("0" <= c <= "9" for c in digits):
        return False
    return INT64_MIN <= int(cell) <= INT64_MAX


cells = st.one_of(
    # Any text a UTF-8 file can hold (NUL aside: Python 3.10's csv refuses it in any cell).
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=30),
    st.from_regex(r"-?[0-9]{1,25}", fullmatch=True),
    st.integers(min_value=1, max_value=6_000).map(lambda n: "1" * n),
    st.integers(min_value=INT64_MIN - 10, max_value=INT64_MAX + 10).map(str),
)


@settings(max_examples=300, deadline=None)
@given(cell=cells)
@example(cell=HUGE)
@example(cell="-" + HUGE)
@example(cell="1" * 4_301)
@example(cell=str(INT64_MAX + 1))
@example(cell="+7")
@example(cell="7_0")
@example(cell="\u0665")
def test_any_category_cell_gives_a_record_or_an_invalid_line_and_reading_goes_on(
    cell: str,
) -> None:
    quoted = '"' + cell.replace('"', '""') + '"'
    source = f"name,categoryId\nfirst,1\nRex,{quoted}\nlast,2\n".encode()
    read = list(read_records(io.BytesIO(source), "csv"))

    assert [item.line for item in read][:1] == [2]
    assert isinstance(read[0], Record)
    assert isinstance(read[-1], Record)
    assert read[-1].pet.name == "last"
    middle = read[1:-1]
    assert len(middle) == 1, middle  # the cell's own line, whatever it holds
    [item] = middle
    if is_int64(cell):
        assert isinstance(item, Record)
        assert item.pet.category_id == int(cell)
    else:
        assert isinstance(item, Invalid)
        assert item.line == 3
        assert "categoryId" in item.message


def test_a_category_of_5000_digits_is_an_invalid_line_and_the_others_are_created(
    api: Server, tmp_path: Path
) -> None:
    source = tmp_path / "pets.csv"
    source.write_text(f"name,categoryId\nfirst,1\nRex,{HUGE}\nlast,2\n")

    run = animalstore(f"pets create --from-file {source}", api.base_url)

    assert run.returncode == 2, run.stderr  # an invalid line, nothing else wrong
    printed = run.by_line()
    assert {line: record["status"] for line, record in printed.items()} == {
        2: "created",
        3: "invalid",
        4: "created",
    }
    assert printed[3]["error"]["message"] == (
        "categoryId must be an int64 integer, got '" + "9" * 37 + "'..."
    )
    assert sorted(request.json()["name"] for request in api.store.requests) == ["first", "last"]
