"""The records of ``pets create --from-file``: read one at a time, each checked as it is read.

A JSONL file holds one JSON object per line; a CSV file a header, then one row per record.
Either names the fields as the wire format does (``categoryId``) or as the SDK does
(``category_id``), plus an optional ``idempotency_key``. Each record is checked by the SDK's
own rules (``NewPet.from_dict``, then what ``create_pet`` checks on top) before anything is
sent; one that fails is an ``Invalid`` naming its line, and the reading goes on. A record whose
own key an earlier record already has is an ``Invalid`` too, naming both lines: one key is one
create. Only a CSV header that no row could satisfy stops the reading, before the first record.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterator
from typing import IO, Any

import attrs

from animalstore_client import NewPet
from animalstore_client._core import operations
from animalstore_client._core.safe_repr import tolerant_repr

__all__ = [
    "FORMATS",
    "MAX_LINE_BYTES",
    "InputError",
    "Invalid",
    "Record",
    "format_of",
    "read_records",
]

#: The input formats, as ``--format`` names them.
FORMATS = ("jsonl", "csv")
#: The longest line read: a longer one is an invalid record, skipped without being held whole.
MAX_LINE_BYTES = 1 << 20
#: The fields a record may have, under either name, and the one ``NewPet.from_dict`` reads.
_FIELDS = {
    "name": "name",
    "categoryId": "categoryId",
    "category_id": "categoryId",
    "status": "status",
}
_KEY_FIELD = "idempotency_key"
_KNOWN = (*_FIELDS, _KEY_FIELD)
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
# ASCII digits only: int() would also take "+7", " 7", "7_0" and other scripts' digits. Twenty
# digits hold every int64; a longer cell is refused before int() parses it.
_INTEGER = re.compile(r"-?[0-9]{1,20}")


class InputError(Exception):
    """The input cannot be read as records at all (a CSV header without a name column ...)."""


@tolerant_repr
@attrs.frozen
class Record:
    """One valid record: the animal to create, where it was read and what identifies it.

    Attributes:
        line: the line it starts on, counting from 1.
        pet: the animal, as ``create_pet`` will send it.
        idempotency_key: the record's own key (its ``idempotency_key`` field), or ``None``.
        digest: a short hash of the animal and its own key: the journal keeps it, to tell
            whether a re-run reads the same record at this line.
    """

    line: int
    pet: NewPet
    idempotency_key: str | None
    digest: str


@tolerant_repr
@attrs.frozen
class Invalid:
    """A line that is not a valid record: never sent.

    Attributes:
        line: the line it starts on, counting from 1.
        message: what is wrong; a field is named by its wire name (``$.categoryId``).
    """

    line: int
    message: str


def format_of(path: str, given: str | None) -> str:
    """Return the format of the input at ``path``: ``given``, else read from its extension.

    Args:
        path: the input's path; ``-`` is stdin, JSONL unless ``given`` says otherwise.
        given: ``--format``'s value, or ``None``.

    Returns:
        ``"jsonl"`` or ``"csv"``.

    Raises:
        InputError: neither ``given`` nor the extension (``.jsonl``, ``.ndjson``, ``.csv``)
            says which.
    """
    if given is not None:
        return given
    if path == "-":
        return "jsonl"
    dot = path.rfind(".")
    found = _EXTENSIONS.get(path[dot:].lower()) if dot > path.rfind("/") else None
    if found is None:
        raise InputError(
            f"cannot tell the format of {path!r} from its name (.jsonl, .ndjson or .csv): "
            "give --format jsonl or --format csv"
        )
    return found


def read_records(stream: IO[bytes], format: str) -> Iterator[Record | Invalid]:
    """Read the records of ``stream`` one at a time, each checked, in the order of the input.

    Blank lines are skipped. The input is UTF-8 (a byte order mark at its start is skipped).
    Each record's own ``idempotency_key`` is remembered (with its line) while the input is read.

    Args:
        stream: the input, opened in binary mode.
        format: ``"jsonl"`` or ``"csv"``.

    Returns:
        An iterator of a ``Record`` or an ``Invalid`` per record. For CSV the header is read
        at once, so that a bad header fails here, before any record is read.

    Raises:
        InputError: a CSV header that names an unknown column, the same field twice, or no
            ``name`` or ``categoryId`` column, or a first line that is blank.
        OSError: reading the input failed (raised by the iterator).
    """
    lines = _Lines(stream)
    if format == "csv":
        return _one_record_per_key(_csv_records(lines, _csv_header(lines)))
    return _one_record_per_key(_jsonl_records(lines))


def _one_record_per_key(records: Iterator[Record | Invalid]) -> Iterator[Record | Invalid]:
    """Make a record whose own key an earlier one has an ``Invalid``, naming both lines.

    Sent, it would be the earlier record again to a service that deduplicates by key (which
    answers with that record's animal), and a second animal to one that does not: neither is
    what a second line asks for, whatever its content.
    """
    first_line: dict[str, int] = {}
    for record in records:
        key = record.idempotency_key if isinstance(record, Record) else None
        if key is not None and (first := first_line.setdefault(key, record.line)) != record.line:
            yield Invalid(
                record.line,
                f"the idempotency_key {_shown(key)} is line {first}'s already: each record "
                f"needs a key of its own (line {first} is sent with it, line {record.line} is not)",
            )
        else:
            yield record


class _Lines:
    """The physical lines of the input, decoded, each at most ``MAX_LINE_BYTES`` long.

    ``number`` is the number of the last line read. A line longer than the limit is read as an
    empty line, one that is not UTF-8 with replacement characters; ``problem()`` says so.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.number = 0
        self._too_long = self._undecodable = False

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        raw = self._stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            raise StopIteration
        self.number += 1
        if self.number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            # The rest of the line is read in pieces and dropped: memory stays bounded.
            while (rest := self._stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            self._too_long = True
            return "\n"
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self._undecodable = True
            return raw.decode("utf-8", "replace")

    def problem(self, what: str) -> str | None:
        """Return why the lines read since the last call cannot be ``what``, if so."""
        if self._too_long:
            problem = f"{what} is longer than {MAX_LINE_BYTES} bytes"
        elif self._undecodable:
            problem = f"{what} is not valid UTF-8"
        else:
            return None
        self._too_long = self._undecodable = False
        return problem


def _jsonl_records(lines: _Lines) -> Iterator[Record | Invalid]:
    for text in lines:
        if problem := lines.problem("the line"):
            yield Invalid(lines.number, problem)
        elif text.strip():
            yield _from_json(lines.number, text)


def _from_json(line: int, text: str) -> Record | Invalid:
    try:
        value = json.loads(
            text.rstrip("\r\n"), object_pairs_hook=_unique_keys, parse_constant=_not_json
        )
    except RecursionError:
        return Invalid(line, "not a JSON object: nested too deeply")
    except json.JSONDecodeError as error:
        # Its own wording says "line 1": of the record, not of the file.
        return Invalid(line, f"not valid JSON: {error.msg} at column {error.colno}")
    except ValueError as error:
        return Invalid(line, f"not valid JSON: {error}")
    if not isinstance(value, dict):
        return Invalid(line, f"expected a JSON object, got {_json_type(value)}")
    return _checked(line, value)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of a repeated field: which one the writer meant is unknown.
    fields = dict(pairs)
    if len(fields) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise ValueError(f"the field {name!r} is given twice")
            seen.add(name)
    return fields


def _not_json(name: str) -> None:
    # Python's json takes NaN and Infinity, which are not JSON (nor an integer).
    raise ValueError(f"{name} is not valid JSON")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


def _checked(line: int, fields: dict[str, Any]) -> Record | Invalid:
    """Check one record's fields by the SDK's rules; return it as a ``Record``, or why not."""
    unknown = [name for name in fields if name not in _KNOWN]
    if unknown:
        known = ", ".join(_KNOWN)
        return Invalid(line, f"unknown field {unknown[0]!r} (known: {known})")
    if "categoryId" in fields and "category_id" in fields:
        return Invalid(line, "categoryId and category_id are the same field, given twice")
    key = fields.pop(_KEY_FIELD, None)
    try:
        pet = NewPet.from_dict(fields)
        # What create_pet checks beyond the model's types (a lone surrogate in the name, the
        # key's form), by the very function it uses; the recipe itself is not kept.
        operations.create_pet(
            name=pet.name, category_id=pet.category_id, status=pet.status, idempotency_key=key
        )
    except (TypeError, ValueError) as error:
        return Invalid(line, str(error))
    return Record(line, pet, key, _digest(pet, key))


def _digest(pet: NewPet, key: str | None) -> str:
    text = json.dumps([pet.to_dict(), key], sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _csv_header(lines: _Lines) -> list[str]:
    rows = csv.reader(lines, strict=True)
    try:
        header = next(rows, None)
    except csv.Error as error:
        raise InputError(f"line {lines.number}: the CSV header is not valid CSV: {error}") from None
    if problem := lines.problem("the CSV header"):
        raise InputError(f"line 1: {problem}")
    if header is None:  # an empty input: no records
        return []
    if not header:
        raise InputError("line 1: no CSV header: expected a first line naming the columns")
    for column in header:
        if column not in _KNOWN:
            raise InputError(f"line 1: unknown CSV column {column!r} (known: {', '.join(_KNOWN)})")
    named = [_FIELDS.get(column, column) for column in header]
    for field in set(named):
        if named.count(field) > 1:
            raise InputError(f"line 1: the CSV header names the field {field!r} twice")
    for field in ("name", "categoryId"):
        if field not in named:
            raise InputError(f"line 1: the CSV header has no {field!r} column")
    return header


def _csv_records(lines: _Lines, header: list[str]) -> Iterator[Record | Invalid]:
    rows = csv.reader(lines, strict=True)
    while True:
        line = lines.number + 1
        try:
            row = next(rows, None)
        except csv.Error as error:
            yield Invalid(line, f"not valid CSV: {error}")
            continue
        if row is None:
            return
        if problem := lines.problem("a line of the record"):
            yield Invalid(line, problem)
        elif row:  # [] is a blank line
            yield _from_row(line, header, row)


def _from_row(line: int, header: list[str], row: list[str]) -> Record | Invalid:
    if len(row) != len(header):
        return Invalid(line, f"{len(row)} cells for {len(header)} columns")
    fields: dict[str, Any] = {}
    for column, cell in zip(header, row, strict=True):
        if column in ("categoryId", "category_id"):
            if not _INTEGER.fullmatch(cell):
                return Invalid(line, f"{column} must be an int64 integer, got {_shown(cell)}")
            fields[column] = int(cell)
        elif column == "name":
            fields[column] = cell  # an empty cell is an empty name, which the API takes
        elif cell:  # an empty status or key is none
            fields[column] = cell
    return _checked(line, fields)


def _shown(cell: str) -> str:
    return repr(cell) if len(cell) <= 40 else repr(cell[:37]) + "..."
