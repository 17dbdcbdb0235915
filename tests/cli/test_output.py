"""What the command line prints, in process: the bytes on stdout, the Error JSON of each failure.

``test_cli.py`` runs the command for real; these pin the formats byte for byte, on a stdout
that says it is a terminal or not and whose encoding is ASCII until the output sets its own.
"""

from __future__ import annotations

import io
import json
import os

import httpx
import pytest
import respx

import animalstore_client as sdk
from animalstore_client import Client, Pet, PetList, PetStatus
from animalstore_client._cli.output import (
    OutputError,
    discard,
    error_json,
    json_line,
    print_error,
    print_result,
)
from tests.cli.in_process import Stream
from tests.conftest import API_KEY, BASE_URL


class Stdout(Stream):
    """A stdout (ASCII by default, ``errors="strict"``), a terminal or not."""

    def __init__(self, terminal: bool, encoding: str = "ascii") -> None:
        super().__init__(encoding, "strict", terminal)


def printed(
    monkeypatch: pytest.MonkeyPatch,
    result: Pet | list[Pet],
    output: str | None,
    terminal: bool,
    encoding: str = "ascii",
) -> bytes:
    stdout = Stdout(terminal, encoding)
    monkeypatch.setattr("sys.stdout", stdout)
    print_result(result, output)
    return stdout.written()


REX = Pet(1, "Rex", 3, PetStatus.AVAILABLE)
WIDE = Pet(12, "\uff32\uff45\uff58", 140)  # fullwidth "Rex": two columns a character
CJK = Pet(5, "\u732b", 6)  # "cat": a wide character, two columns
COMBINED = Pet(3, "e\u0301", 7, PetStatus.SOLD)  # "é" as e and a combining accent: one column
HOSTILE = Pet(4, "a\x1b[2Jb\u202ec\x85d", 5, "odd\x07")


def test_a_table_aligns_by_the_columns_each_character_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = printed(
        monkeypatch, [REX, WIDE, COMBINED, CJK], "table", terminal=True, encoding="utf-8"
    )
    lines = table.decode("utf-8")

    assert lines.split("\n") == [
        "id  name    category  status",
        " 1  Rex" + " " * 12 + "3  available",
        "12  \uff32\uff45\uff58       140  -",
        " 3  e\u0301" + " " * 14 + "7  sold",
        " 5  \u732b" + " " * 13 + "6  -",
        "",
    ]


def test_a_missing_status_is_the_same_mark_in_the_table_and_in_a_notebook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tom = Pet(8, "Tom", 4)

    table = printed(monkeypatch, [tom], "table", terminal=True)

    assert table == b"id  name  category  status\n 8  Tom          4  -\n"
    assert tom._repr_html_().endswith(
        "<td>8</td><td>Tom</td><td>4</td><td>-</td></tr></tbody></table>"
    )
    assert PetList([tom])._repr_html_().endswith("<td>-</td></tr></tbody></table>")


def test_a_table_on_a_terminal_that_cannot_show_a_character_shows_a_question_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdout = Stdout(terminal=True)
    monkeypatch.setattr("sys.stdout", stdout)

    print_result(WIDE, None)  # on a terminal: a table

    # Aligned for the characters it could not show, each a "?" now.
    assert stdout.written().split(b"\n")[1] == b"12  ???       140  -"


def test_a_table_escapes_what_could_drive_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = printed(monkeypatch, HOSTILE, "table", terminal=True).decode("utf-8").split("\n")

    assert lines[1] == " 4  a\\x1b[2Jb\\u202ec\\x85d         5  odd\\x07"


@pytest.mark.parametrize("terminal", [False, True])
def test_json_is_indented_wire_json_in_utf8(
    monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    one = printed(monkeypatch, COMBINED, "json", terminal)
    several = printed(monkeypatch, [REX, COMBINED], None if not terminal else "json", terminal)

    assert (
        one
        == (
            '{\n  "id": 3,\n  "name": "e\u0301",\n  "categoryId": 7,\n  "status": "sold"\n}\n'
        ).encode()
    )
    assert json.loads(several) == [REX.to_dict(), COMBINED.to_dict()]
    assert several.startswith(b'[\n  {\n    "id": 1,')


def test_json_outside_a_terminal_keeps_every_character_but_a_lone_surrogate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pet = Pet(4, "a\u202eb\ud800c\U0001f600", 5)

    out = printed(monkeypatch, pet, "jsonl", terminal=False)

    # A bidi override and an emoji as they are; the lone surrogate as its JSON escape.
    assert out == '{"id": 4, "name": "a\u202eb\\ud800c\U0001f600", "categoryId": 5}\n'.encode()


def test_indented_json_on_a_terminal_escapes_them_too(monkeypatch: pytest.MonkeyPatch) -> None:
    out = printed(monkeypatch, [HOSTILE], "json", terminal=True)

    assert b'    "name": "a\\u001b[2Jb\\u202ec\\u0085d",\n' in out
    assert json.loads(out) == [HOSTILE.to_dict()]


def test_json_on_a_terminal_escapes_every_character_that_is_not_printable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = printed(monkeypatch, HOSTILE, "jsonl", terminal=True)

    assert out == (
        b'{"id": 4, "name": "a\\u001b[2Jb\\u202ec\\u0085d", "categoryId": 5, '
        b'"status": "odd\\u0007"}\n'
    )
    assert json.loads(out) == HOSTILE.to_dict()


def test_jsonl_is_a_line_per_animal_and_nothing_for_none(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        printed(monkeypatch, [REX, WIDE], "jsonl", terminal=False)
        == (
            '{"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}\n'
            '{"id": 12, "name": "\uff32\uff45\uff58", "categoryId": 140}\n'
        ).encode()
    )
    assert printed(monkeypatch, [], "jsonl", terminal=False) == b""
    assert printed(monkeypatch, [], "json", terminal=False) == b"[]\n"


def test_a_json_line_for_a_character_beyond_the_basic_plane_uses_a_surrogate_pair() -> None:
    assert json_line({"name": "\U0001f600\x1b"}, terminal=True) == '{"name": "\U0001f600\\u001b"}'
    assert json_line({"name": "\U000e0001"}, terminal=True) == '{"name": "\\udb40\\udc01"}'


@pytest.mark.parametrize(
    ("terminal", "name"),
    [(False, 'a\x1b\u202eb,\r\n"q"\ud800'), (True, 'a\\x1b\\u202eb,\\r\\n"q"\\ud800')],
)
def test_csv_has_the_wire_names_and_quotes_as_rfc_4180_says(
    monkeypatch: pytest.MonkeyPatch, terminal: bool, name: str
) -> None:
    pets = [REX, Pet(2, 'a\x1b\u202eb,\r\n"q"\ud800', 4)]

    out = printed(monkeypatch, pets, "csv", terminal).decode("utf-8")

    quoted = '"' + name.replace('"', '""') + '"'
    if not terminal:  # the lone surrogate, which UTF-8 cannot write, as its escape
        quoted = quoted.replace("\ud800", "\\ud800")
    assert out == f"id,name,categoryId,status\n1,Rex,3,available\n2,{quoted},4,\n"


class Failing(Stdout):
    """A stdout that fails with ``error`` at each write (``at="write"``) or at the flush of what
    was written (``at="flush"``: the result must be out before print_result returns, so that the
    command can tell (exit 4), not the interpreter's exit (a traceback, exit 120))."""

    def __init__(self, error: OSError, at: str) -> None:
        super().__init__(terminal=False)
        self.error = error
        self.at = at
        self.pending = False

    def write(self, text: str) -> int:
        if self.at == "write":
            raise self.error
        self.pending = True
        return super().write(text)

    def flush(self) -> None:
        if self.pending:
            raise self.error
        super().flush()

    def close(self) -> None:
        # Collected, it is closed, which flushes: the failure is the test's, not the GC's.
        self.pending = False
        super().close()


FULL = "cannot write the result to stdout: No space left on device"


@pytest.mark.parametrize(
    ("stdout", "raised", "message"),
    [
        pytest.param(None, OutputError, "cannot write the result: stdout is closed", id="closed"),
        pytest.param(
            Failing(OSError(28, "No space left on device"), "write"), OutputError, FULL, id="full"
        ),
        pytest.param(
            Failing(OSError(28, "No space left on device"), "flush"),
            OutputError,
            FULL,
            id="unflushable",
        ),
        # The reader gone: let through, for the command line to handle as the end of a pipe.
        pytest.param(
            Failing(BrokenPipeError(32, "Broken pipe"), "write"),
            BrokenPipeError,
            "[Errno 32] Broken pipe",
            id="gone",
        ),
    ],
)
def test_nothing_printed_on_a_closed_stdout_or_one_that_fails(
    monkeypatch: pytest.MonkeyPatch,
    stdout: Stdout | None,
    raised: type[Exception],
    message: str,
) -> None:
    monkeypatch.setattr("sys.stdout", stdout)

    with pytest.raises(raised) as caught:
        print_result(REX, "json")

    assert type(caught.value) is raised
    assert str(caught.value) == message
    assert caught.value.__context__ is None  # raised outside any handler: chains nothing


def failure(
    mock: respx.MockRouter, response: httpx.Response | Exception, **options: int
) -> sdk.APIError:
    mock.get("/pets").mock(side_effect=[response])
    client = Client(API_KEY, base_url=BASE_URL, max_retries=0, **options)  # type: ignore[arg-type]
    with client, pytest.raises(sdk.APIError) as raised:
        client.list_pets()
    return raised.value


ERROR = {"code": "not_found", "message": "no such pet", "status": 404}


@pytest.mark.parametrize(
    ("answer", "options", "expected"),
    [
        (httpx.Response(404, json=ERROR), {}, ERROR),
        (
            httpx.Response(502, text="<html>bad gateway</html>"),
            {},
            {"code": "unexpected_response", "status": 502},
        ),
        (
            httpx.Response(200, text="<html>hello</html>"),
            {},
            {"code": "invalid_response", "status": 200},
        ),
        (
            httpx.Response(200, json=[{"id": 1, "name": "x" * 100, "categoryId": 1}]),
            {"max_response_bytes": 50},
            {"code": "response_too_large", "status": None},
        ),
        (httpx.ReadTimeout("timed out"), {}, {"code": "timeout", "status": None}),
        (httpx.ConnectError("refused"), {}, {"code": "connection_error", "status": None}),
    ],
)
def test_each_failure_is_error_json_of_the_same_shape(
    mock_api: respx.MockRouter,
    answer: httpx.Response | Exception,
    options: dict[str, int],
    expected: dict[str, object],
) -> None:
    error = failure(mock_api, answer, **options)

    shown = error_json(error)

    assert list(shown) == ["code", "message", "status"]
    assert {name: shown[name] for name in expected} == expected
    assert shown["message"] == (error.message if expected is not ERROR else "no such pet")


def test_a_bad_argument_is_invalid_argument_json() -> None:
    assert error_json(ValueError("name must not be empty")) == {
        "code": "invalid_argument",
        "message": "name must not be empty",
        "status": None,
    }


class DecoratedError(sdk.APIError):
    """An API error of one's own whose ``str`` is not its message (as ``APIStatusError``'s)."""

    def __str__(self) -> str:
        return f"decorated: {self.message}"


def test_any_other_api_error_is_invalid_argument_json_with_its_message_not_its_str() -> None:
    error = DecoratedError("no key given", request=httpx.Request("GET", BASE_URL))

    assert error_json(error) == {
        "code": "invalid_argument",
        "message": "no key given",
        "status": None,
    }


def test_an_error_line_is_one_line_with_what_could_drive_the_terminal_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print_error(ValueError("two\nlines\r\nand\x1b[2J\u202e"), as_json=False)
    print_error(ValueError("x\ny"), as_json=True)

    err = capsys.readouterr().err
    assert err == (
        "error: two lines and\\x1b[2J\\u202e\n"
        '{"code": "invalid_argument", "message": "x\\ny", "status": null}\n'
    )


def test_a_failed_stdout_is_discarded_so_that_the_exit_flush_does_not_fail_again() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone
    stream = io.TextIOWrapper(io.BufferedWriter(io.FileIO(write_end, "w")), encoding="utf-8")
    try:
        stream.write("a line the reader will never get\n")
        with pytest.raises(BrokenPipeError):
            stream.flush()
        discard(stream)
        stream.flush()  # what it held goes nowhere, as Python's flush at exit would send it
        assert os.fstat(write_end).st_rdev == os.stat(os.devnull).st_rdev
    finally:
        stream.close()


def test_a_stream_without_a_descriptor_or_none_is_left_alone() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stream.write("kept")
    discard(stream)
    discard(None)  # Python started with stdout closed
    stream.flush()
    assert isinstance(stream.buffer, io.BytesIO)
    assert stream.buffer.getvalue() == b"kept"
