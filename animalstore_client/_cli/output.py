"""What the ``animalstore`` command line prints: results on stdout, errors on stderr.

Results are an aligned table (for a terminal), the wire JSON, JSON lines, or CSV. Errors are
one line, ``error: <message>``, or one line of Error JSON when JSON output was asked for.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import unicodedata
from collections.abc import Callable
from typing import Any, TextIO

import animalstore_client as sdk  # the command line is a user of the public API
from animalstore_client._core.display import ABSENT  # shown as in a notebook's table

__all__ = ["OUTPUT_FORMATS", "error_json", "json_line", "print_error", "print_result"]

#: The choices of ``--output``; ``None`` (not given) means table on a terminal, else json.
OUTPUT_FORMATS = ("table", "json", "jsonl", "csv")
_COLUMNS = ("id", "name", "category", "status")
#: The CSV header: the names of the JSON output.
_CSV_COLUMNS = ("id", "name", "categoryId", "status")
_RIGHT_ALIGNED = (True, False, True, False)


class OutputError(Exception):
    """The result could not be written to stdout: a full disk, a closed stdout ..."""


def print_result(result: sdk.Pet | list[sdk.Pet], output: str | None) -> None:
    r"""Print a command's result on stdout.

    Args:
        result: one animal (``create``, ``get``) or a list of them (``list``).
        output: ``"table"``, ``"json"``, ``"jsonl"``, ``"csv"``, or ``None`` for table on a
            terminal and json otherwise. JSON and CSV are written as UTF-8, with a lone
            surrogate (which UTF-8 cannot encode) as a ``\ud800`` escape; on a terminal every
            character that is not printable (C1 controls, bidi overrides ...) is written as
            such an escape too.

    Raises:
        OutputError: stdout is closed, or writing to it failed (``BrokenPipeError`` aside,
            which the command line handles as the end of a pipe).
    """
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise OutputError("cannot write the result: stdout is closed")
    try:
        _write_result(result, output)
    except BrokenPipeError:
        raise
    except OSError as error:
        # Raised outside the handler: the error chains nothing.
        problem = f"cannot write the result to stdout: {error.strerror or error}"
    else:
        return
    raise OutputError(problem)


def discard(stream: TextIO | None) -> None:
    """After a write to ``stream`` failed, send what it still holds, and all after, nowhere.

    The bytes left in its buffer can never be written: left there, Python's flush at exit
    would fail again and print "Exception ignored ... OSError" and end with status 120, after
    the command said what failed and chose its exit status. A stream without a file
    descriptor (a test's) is left as it is.

    Args:
        stream: the stream a write to failed (stdout); ``None`` when Python started with its
            descriptor closed, which holds nothing.
    """
    if stream is None:
        return
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return
    nowhere = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(nowhere, descriptor)
    finally:
        os.close(nowhere)


def _write_result(result: sdk.Pet | list[sdk.Pet], output: str | None) -> None:
    if output is None:
        output = "table" if sys.stdout.isatty() else "json"
    pets = result if isinstance(result, list) else [result]
    if output == "table":
        # A terminal that cannot show a character gets "?" rather than a traceback.
        _reconfigure(sys.stdout, errors="replace")
        text = _table(pets)
    elif output == "csv":
        _reconfigure(sys.stdout, encoding="utf-8")
        text = _csv(pets, terminal=sys.stdout.isatty())
    else:
        # JSON is UTF-8 (RFC 8259), whatever the locale says.
        _reconfigure(sys.stdout, encoding="utf-8")
        terminal = sys.stdout.isatty()
        wire = [pet.to_dict() for pet in pets]
        if output == "jsonl":
            text = "\n".join(_json(item, indent=None, terminal=terminal) for item in wire)
        else:
            single = not isinstance(result, list)
            text = _json(wire[0] if single else wire, indent=2, terminal=terminal)
    if text:
        print(text, flush=True)


def json_line(value: object, *, terminal: bool) -> str:
    r"""Return ``value`` as one line of JSON, written as ``-o jsonl`` writes a result.

    Args:
        value: a JSON value.
        terminal: whether the line goes to a terminal: then every character that is not
            printable is escaped too, not only a lone surrogate.

    Returns:
        The line, without its ``\n``; it decodes to ``value``.
    """
    return _json(value, indent=None, terminal=terminal)


def print_error(error: Exception, *, as_json: bool) -> None:
    """Print an error on stderr as one line: ``error: <message>``, or Error JSON.

    Args:
        error: an SDK exception, or the ``TypeError`` / ``ValueError`` of a bad argument.
        as_json: print ``{"code": ..., "message": ..., "status": ...}`` instead: the API's
            Error body when there is one; otherwise ``code`` is the command line's own (see
            ``error_json``) and ``status`` is the HTTP status, ``null`` when there was no answer.
    """
    if as_json:
        print(json.dumps(error_json(error)), file=sys.stderr, flush=True)
    else:
        print(f"error: {_one_line(str(error))}", file=sys.stderr, flush=True)


def error_json(error: Exception) -> dict[str, Any]:
    """Return an error as an Error object, the same shape whatever went wrong.

    Args:
        error: the exception.

    Returns:
        The API's Error body, as received, when there is one. Otherwise an object whose
        ``code`` is ``unexpected_response`` (a non-2xx answer whose body is not an Error),
        ``invalid_response`` (a 2xx answer that does not fit the schema),
        ``response_too_large`` (a body past ``--max-response-bytes``), ``timeout``,
        ``connection_error`` or ``invalid_argument``, and whose ``status`` is the HTTP status,
        or ``None`` when no answer came (or, past the size cap, none was read in full).
    """
    if isinstance(error, sdk.APIStatusError):
        if error.error is not None:
            return error.error.to_dict()
        return _error("unexpected_response", error.message, error.status_code)
    if isinstance(error, sdk.APIResponseValidationError):
        return _error("invalid_response", error.message, error.response.status_code)
    if isinstance(error, sdk.ResponseTooLargeError):
        return _error("response_too_large", error.message, None)
    if isinstance(error, sdk.APITimeoutError):
        return _error("timeout", error.message, None)
    if isinstance(error, sdk.APIConnectionError):
        return _error("connection_error", error.message, None)
    message = error.message if isinstance(error, sdk.APIError) else str(error)
    return _error("invalid_argument", message, None)


def _error(code: str, message: str, status: int | None) -> dict[str, Any]:
    return {"code": code, "message": message, "status": status}


def _table(pets: list[sdk.Pet]) -> str:
    rows = [_COLUMNS]
    for pet in pets:
        status = ABSENT if pet.status is None else str(pet.status)
        rows.append((str(pet.id), _printable(pet.name), str(pet.category_id), _printable(status)))
    widths = [max(_width(row[column]) for row in rows) for column in range(len(_COLUMNS))]
    lines = []
    for row in rows:
        cells = []
        for cell, width, right in zip(row, widths, _RIGHT_ALIGNED, strict=True):
            padding = " " * (width - _width(cell))
            cells.append(padding + cell if right else cell + padding)
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _csv(pets: list[sdk.Pet], *, terminal: bool) -> str:
    r"""Return a header and a row per pet, quoted as RFC 4180 says, lines ending in ``\n``.

    A missing status is an empty cell. Outside a terminal a cell is the text as it is (a lone
    surrogate aside, written as its ``\ud800`` escape); on a terminal every character that is
    not printable is escaped, as in the table.
    """
    keep = str.isprintable if terminal else _utf8_encodable
    rows = [_CSV_COLUMNS]
    for pet in pets:
        status = "" if pet.status is None else str(pet.status)
        name, status = (_printable(cell, _python_escape, keep=keep) for cell in (pet.name, status))
        rows.append((str(pet.id), name, str(pet.category_id), status))
    return "\n".join(_csv_row(row) for row in rows)


def _csv_row(cells: tuple[str, ...]) -> str:
    r"""Return one CSV row, without its line end, a cell with ``\r`` or ``\n`` in quotes.

    Python 3.10 to 3.12 quote a cell only for the characters of the writer's line end: with
    ``\n`` a bare ``\r`` would go unquoted, and a reader would see a row end inside the cell.
    Written with ``\r\n``, both are quoted; that line end is then cut off.
    """
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)
    return buffer.getvalue().removesuffix("\r\n")


def _width(text: str) -> int:
    """Return how many terminal columns ``text`` takes: wide characters (CJK, emoji) two."""
    return sum(_char_width(char) for char in text)


def _char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _json(value: object, *, indent: int | None, terminal: bool) -> str:
    """Return ``value`` as JSON text that UTF-8 can encode and, on a terminal, cannot drive it.

    Args:
        value: the wire JSON value.
        indent: as ``json.dumps``'s.
        terminal: escape every character that is not printable, not only lone surrogates.

    Returns:
        The JSON text; it decodes to ``value``. Without such characters it is exactly what
        ``json.dumps(value, indent=indent, ensure_ascii=False)`` returns.
    """
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    # json.dumps escapes C0 controls, so every character escaped here is inside a string,
    # where a \uXXXX escape means the same character; the raw newlines of indent are not.
    if terminal:
        return "\n".join(_printable(line, _json_escape) for line in text.split("\n"))
    return _printable(text, _json_escape, keep=_utf8_encodable)


def _json_escape(char: str) -> str:
    # ensure_ascii spells a character beyond U+FFFF as the surrogate pair JSON requires.
    return json.dumps(char, ensure_ascii=True)[1:-1]


def _python_escape(char: str) -> str:
    return repr(char)[1:-1]


def _utf8_encodable(text: str) -> bool:
    # Only a lone surrogate (what a "\ud800" JSON escape decodes to) is not.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(
    text: str,
    escape: Callable[[str], str] = _python_escape,
    keep: Callable[[str], bool] = str.isprintable,
) -> str:
    r"""Escape the characters of ``text`` that are not printable, or that ``keep`` refuses.

    So that data from the API cannot drive the terminal (controls, bidi overrides) or break
    the output (lone surrogates, which no encoding can write).

    Args:
        text: the text to show.
        escape: how to spell one escaped character: a Python escape (``\x1b``) by default.
        keep: whether a character (or, to skip the work, the whole text) is kept as it is;
            by default when it is printable (``str.isprintable``).

    Returns:
        ``text`` with every character ``keep`` refuses replaced by ``escape(char)``.
    """
    if keep(text):
        return text
    return "".join(char if keep(char) else escape(char) for char in text)


def _one_line(text: str) -> str:
    return _printable(" ".join(text.splitlines()))


def _reconfigure(stream: object, **settings: str) -> None:
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(**settings)  # type: ignore[arg-type]
