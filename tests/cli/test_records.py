"""``pets create --from-file``'s reader, in process: each input gives exactly these records.

The command's tests (``test_bulk.py``) run it for real; these pin what the reader makes of each
kind of line, message for message: the messages are what a user reads to fix a line.
"""

from __future__ import annotations

import io
import json
import tracemalloc

import pytest

from animalstore_client import NewPet, PetStatus
from animalstore_client._cli.records import (
    MAX_LINE_BYTES,
    InputError,
    Invalid,
    Record,
    format_of,
    read_records,
)

KNOWN = "name, categoryId, category_id, status, idempotency_key"
#: The digest of ``{"name": "Rex", "categoryId": 3}`` without a key: journals written by
#: earlier versions hold it, and a resume compares it with the record read again.
REX_3 = "c3546311dc257e5d"


def read(format: str, data: bytes) -> list[Record | Invalid]:
    return list(read_records(io.BytesIO(data), format))


def pet(
    line: int, name: str, category: int, status: PetStatus | None = None, key: str | None = None
) -> Record:
    """The record at ``line``, with the digest the same record has in JSONL: one per record."""
    fields: dict[str, object] = {"name": name, "categoryId": category}
    if status is not None:
        fields["status"] = status.value
    if key is not None:
        fields["idempotency_key"] = key
    [record] = read("jsonl", json.dumps(fields).encode())
    assert isinstance(record, Record)
    return Record(line, NewPet(name, category, status), key, record.digest)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            b'{"name":"Rex","categoryId":3}\n',
            [Record(1, NewPet("Rex", 3), None, REX_3)],
            id="the wire's names",
        ),
        pytest.param(
            b'\xef\xbb\xbf{"name":"Rex","category_id":3}\r\n',
            [Record(1, NewPet("Rex", 3), None, REX_3)],
            id="a byte order mark, the SDK's name, CRLF",
        ),
        pytest.param(
            b'\n  \n{"name":"Rex","categoryId":3}',
            [Record(3, NewPet("Rex", 3), None, REX_3)],
            id="blank lines skipped but counted, no last newline",
        ),
        pytest.param(
            b'{"name":"A","categoryId":1,"extra":2}\n',
            [Invalid(1, f"unknown field 'extra' (known: {KNOWN})")],
            id="an unknown field",
        ),
        pytest.param(
            b'{"name":"A","categoryId":1,"category_id":1}\n',
            [Invalid(1, "categoryId and category_id are the same field, given twice")],
            id="both names of one field",
        ),
        pytest.param(
            b'{"name":"A","name":"B","categoryId":1}\n',
            [Invalid(1, "not valid JSON: the field 'name' is given twice")],
            id="a field twice",
        ),
        pytest.param(
            b'{"categoryId":1,"name":"A","name":"B"}\n',
            [Invalid(1, "not valid JSON: the field 'name' is given twice")],
            id="the field given twice named, not the first",
        ),
        pytest.param(
            b'{"name":"Rex","categoryId":3}XX\n',
            [Invalid(1, "not valid JSON: Extra data at column 30")],
            id="text after the object",
        ),
        pytest.param(
            b'{"name":"A",   \r\n',
            [
                Invalid(
                    1,
                    "not valid JSON: Expecting property name enclosed in double quotes "
                    "at column 16",
                )
            ],
            id="the column counts the spaces before the line end",
        ),
        pytest.param(
            b'{"name":"A","categoryId":NaN}\n{"name":"A","categoryId":-Infinity}\n',
            [
                Invalid(1, "not valid JSON: NaN is not valid JSON"),
                Invalid(2, "not valid JSON: -Infinity is not valid JSON"),
            ],
            id="Python's non-JSON constants",
        ),
        pytest.param(
            b'{"name":"A",\n',
            [
                Invalid(
                    1,
                    "not valid JSON: Expecting property name enclosed in double quotes "
                    "at column 13",
                )
            ],
            id="not JSON, its column",
        ),
        pytest.param(
            b'[1]\n"x"\n1\nnull\ntrue\n1.5\n',
            [
                Invalid(1, "expected a JSON object, got an array"),
                Invalid(2, "expected a JSON object, got a string"),
                Invalid(3, "expected a JSON object, got a number"),
                Invalid(4, "expected a JSON object, got null"),
                Invalid(5, "expected a JSON object, got a boolean"),
                Invalid(6, "expected a JSON object, got a number"),
            ],
            id="JSON that is no object",
        ),
        pytest.param(
            b"[" * 100_000 + b"\n",
            [Invalid(1, "not a JSON object: nested too deeply")],
            id="nested too deeply",
        ),
        pytest.param(
            b'{"name":"A","categoryId":"x"}\n',
            [Invalid(1, "$.categoryId: expected an integer, got str 'x'")],
            id="the model's own check",
        ),
        pytest.param(
            b'{"name":"\\ud800","categoryId":1}\n',
            [Invalid(1, "name must be valid Unicode text, got a lone surrogate")],
            id="create_pet's check beyond the model",
        ),
        pytest.param(
            b'{"name":"A","categoryId":1,"idempotency_key":""}\n',
            [
                Invalid(
                    1,
                    "idempotency_key must be 1 to 255 printable ASCII characters without "
                    "whitespace, got ''",
                )
            ],
            id="an empty own key",
        ),
        pytest.param(
            b'{"name":"\xff","categoryId":1}\n{"name":"Rex","categoryId":3}\n',
            [Invalid(1, "the line is not valid UTF-8"), Record(2, NewPet("Rex", 3), None, REX_3)],
            id="not UTF-8, and the next line read",
        ),
    ],
)
def test_jsonl_lines(data: bytes, expected: list[Record | Invalid]) -> None:
    assert read("jsonl", data) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"name,categoryId\nRex,3\n", [Record(2, NewPet("Rex", 3), None, REX_3)]),
        pytest.param(
            b"name,category_id,status,idempotency_key\r\nRex,3,,\r\nMax,-4,sold,k2\r\n",
            [
                Record(2, NewPet("Rex", 3), None, REX_3),
                pet(3, "Max", -4, PetStatus.SOLD, "k2"),
            ],
            id="the SDK's names, empty status and key are none",
        ),
        pytest.param(b"", [], id="an empty input"),
        pytest.param(b"name,categoryId\n,3\n", [pet(2, "", 3)], id="an empty name is a name"),
        pytest.param(
            b"name,categoryId\n\nRex,3\n",
            [Record(3, NewPet("Rex", 3), None, REX_3)],
            id="a blank line skipped but counted",
        ),
        pytest.param(
            b'name,categoryId\n"Re\nx",3\nMax,4\n',
            [pet(2, "Re\nx", 3), pet(4, "Max", 4)],
            id="a record over two lines: the next one's number",
        ),
        pytest.param(
            b"name,categoryId\nRex\nMax,1,2\n",
            [Invalid(2, "1 cells for 2 columns"), Invalid(3, "3 cells for 2 columns")],
            id="too few and too many cells",
        ),
        pytest.param(
            b"name,categoryId\nRex,+3\nRex," + b"9" * 41 + b"\n",
            [
                Invalid(2, "categoryId must be an int64 integer, got '+3'"),
                Invalid(3, "categoryId must be an int64 integer, got '" + "9" * 37 + "'..."),
            ],
            id="not an integer; a long cell shown cut",
        ),
        pytest.param(
            b"name,category_id\nRex,3.0\n",
            [Invalid(2, "category_id must be an int64 integer, got '3.0'")],
            id="the column's own name",
        ),
        pytest.param(
            b"name,categoryId\nRex," + b"9" * 20 + b"\n",
            [Invalid(2, "$.categoryId: expected an int64, got 99999999999999999999")],
            id="twenty digits: the model's range check",
        ),
        pytest.param(
            b'name,categoryId\n"Rex,3\n',
            [Invalid(2, "not valid CSV: unexpected end of data")],
            id="not CSV",
        ),
        pytest.param(
            b'name,categoryId\n"Re"x,3\nMax,4\n',
            [Invalid(2, "not valid CSV: ',' expected after '\"'"), pet(3, "Max", 4)],
            id="not CSV, and the next row read",
        ),
        pytest.param(
            b"name,categoryId\nRex," + b"1" * 40 + b"\n",
            [Invalid(2, "categoryId must be an int64 integer, got '" + "1" * 40 + "'")],
            id="a cell of 40 characters shown whole",
        ),
        pytest.param(
            b"name,categoryId\n\xff,3\nRex,3\n",
            [
                Invalid(2, "a line of the record is not valid UTF-8"),
                Record(3, NewPet("Rex", 3), None, REX_3),
            ],
            id="not UTF-8, and the next line read",
        ),
        pytest.param(
            b"name,categoryId,idempotency_key\nA,1,k\nB,2,k\n",
            [
                pet(2, "A", 1, key="k"),
                Invalid(
                    3,
                    "the idempotency_key 'k' is line 2's already: each record needs a key of "
                    "its own (line 2 is sent with it, line 3 is not)",
                ),
            ],
            id="another record's key",
        ),
    ],
)
def test_csv_rows(data: bytes, expected: list[Record | Invalid]) -> None:
    assert read("csv", data) == expected


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (b"\n", "line 1: no CSV header: expected a first line naming the columns"),
        (b"name,color\n", f"line 1: unknown CSV column 'color' (known: {KNOWN})"),
        (
            b"name,categoryId,category_id\n",
            "line 1: the CSV header names the field 'categoryId' twice",
        ),
        (b"name,name,categoryId\n", "line 1: the CSV header names the field 'name' twice"),
        (
            b"name,categoryId,idempotency_key,idempotency_key\n",
            "line 1: the CSV header names the field 'idempotency_key' twice",
        ),
        (b"name,status\n", "line 1: the CSV header has no 'categoryId' column"),
        (b"categoryId\n", "line 1: the CSV header has no 'name' column"),
        # The quoted header runs to the input's end, the record's line included.
        (b'"name,categoryId\n', "line 2: the CSV header is not valid CSV: unexpected end of data"),
        (b"na\xffme,categoryId\n", "line 1: the CSV header is not valid UTF-8"),
        (
            b"name," + b"x" * MAX_LINE_BYTES + b"\n",
            f"line 1: the CSV header is longer than {MAX_LINE_BYTES} bytes",
        ),
    ],
)
def test_a_bad_csv_header_stops_the_reading_before_any_record(header: bytes, message: str) -> None:
    with pytest.raises(InputError) as raised:
        read_records(io.BytesIO(header + b"Rex,3\n"), "csv")
    assert str(raised.value) == message


@pytest.mark.parametrize("format", ["jsonl", "csv"])
def test_a_line_past_the_limit_is_invalid_and_the_next_is_read(format: str) -> None:
    header = b"name,categoryId\n" if format == "csv" else b""
    record = b'{"name":"Rex","categoryId":3}\n' if format == "jsonl" else b"Rex,3\n"
    first = 2 if format == "csv" else 1
    long = b"x" * (MAX_LINE_BYTES * 3 + 7) + b"\n"
    # At the limit, its newline included: read whole (blank in JSONL; csv's own field limit,
    # 128 KiB, would refuse a cell that long).
    exactly = b" " * (MAX_LINE_BYTES - 1) + b"\n" if format == "jsonl" else b"\n"

    read_back = read(format, header + long + exactly + record)

    what = "the line" if format == "jsonl" else "a line of the record"
    assert read_back == [
        Invalid(first, f"{what} is longer than {MAX_LINE_BYTES} bytes"),
        Record(first + 2, NewPet("Rex", 3), None, REX_3),
    ]


def test_the_digest_tells_records_apart_by_their_animal_and_key_not_their_line() -> None:
    records = read(
        "jsonl",
        b'{"name":"Rex","categoryId":3}\n'
        b'{"categoryId":3,"name":"Rex"}\n'
        b'{"name":"Rex","categoryId":3,"status":"sold"}\n'
        b'{"name":"Rex","categoryId":4}\n'
        b'{"name":"Rex!","categoryId":3}\n'
        b'{"name":"Rex","categoryId":3,"idempotency_key":"k"}\n'
        b'{"name":"\xc3\xa9","categoryId":3}\n'
        b'{"name":"\\u00e9","categoryId":3}\n',
    )
    digests = [record.digest for record in records if isinstance(record, Record)]

    assert len(digests) == 8
    assert digests[0] == digests[1] == REX_3
    assert digests[6] == digests[7]
    assert len(set(digests)) == 6
    assert all(len(digest) == 16 and int(digest, 16) >= 0 for digest in digests)


@pytest.mark.parametrize(
    ("path", "given", "expected"),
    [
        ("pets.jsonl", None, "jsonl"),
        ("pets.NDJSON", None, "jsonl"),
        ("dir.d/pets.Csv", None, "csv"),
        ("-", None, "jsonl"),
        ("-", "csv", "csv"),
        ("pets.txt", "jsonl", "jsonl"),
        ("pets.csv", "jsonl", "jsonl"),
    ],
)
def test_the_format_comes_from_format_else_the_extension(
    path: str, given: str | None, expected: str
) -> None:
    assert format_of(path, given) == expected


@pytest.mark.parametrize("path", ["pets.txt", "pets", "dir.csv/pets", "pets.csv.gz"])
def test_a_name_that_says_no_format_asks_for_format(path: str) -> None:
    with pytest.raises(InputError) as raised:
        format_of(path, None)
    assert str(raised.value) == (
        f"cannot tell the format of {path!r} from its name (.jsonl, .ndjson or .csv): "
        "give --format jsonl or --format csv"
    )


def a_line_of(size: int) -> bytes:
    """A JSON record of exactly ``size`` bytes (its name makes up the length)."""
    head, tail = b'{"name":"', b'","categoryId":1}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


@pytest.mark.parametrize(
    ("line", "valid"),
    [
        (a_line_of(MAX_LINE_BYTES), True),  # the last line, at the limit, without a line end
        (a_line_of(MAX_LINE_BYTES) + b"\n", True),  # at the limit, its line end past it
        (a_line_of(MAX_LINE_BYTES + 1) + b"\n", False),
    ],
)
def test_the_limit_is_on_a_lines_content_not_its_line_end(line: bytes, valid: bool) -> None:
    [read_back] = read("jsonl", line)

    assert isinstance(read_back, Record) is valid
    if not valid:
        assert read_back == Invalid(1, f"the line is longer than {MAX_LINE_BYTES} bytes")


def test_a_line_past_the_limit_is_skipped_in_pieces_not_held_whole() -> None:
    data = b"x" * (24 << 20) + b"\n" + b'{"name":"Rex","categoryId":3}\n'
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        read_back = list(read_records(stream, "jsonl"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert read_back[1] == Record(2, NewPet("Rex", 3), None, REX_3)
    assert peak < 4 * MAX_LINE_BYTES  # a few pieces of the 24 MiB line at most


def test_records_with_keys_of_their_own_each_are_valid() -> None:
    read_back = read(
        "jsonl",
        b'{"name":"A","categoryId":1,"idempotency_key":"k-1"}\n'
        b'{"name":"B","categoryId":2,"idempotency_key":"k-2"}\n',
    )

    assert [type(record) for record in read_back] == [Record, Record]


def test_the_digest_of_a_name_beyond_ascii_is_the_one_earlier_versions_journaled() -> None:
    # Written as UTF-8, not as \\u escapes: a change would refuse every journal of a run
    # whose input has such a name ("not the record that the journal holds").
    [record] = read("jsonl", '{"name":"\u00e9t\u00e9","categoryId":3}\n'.encode())

    assert isinstance(record, Record)
    assert record.digest == "a6f3d1233137d1c9"
