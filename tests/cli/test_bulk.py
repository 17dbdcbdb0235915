"""``animalstore pets create --from-file`` against a served store: in process, and for real.

Every run is against the built-in store on 127.0.0.1, whose recorded requests say what was
sent: how many times, with which ``Idempotency-Key``. ``animalstore`` runs the command in this
process as a fresh process would (``in_process``); where the process is the point (stdin and
pipes, crashes, signals, a closed stdout), the installed command (or ``python -m
animalstore_client``) runs in a subprocess. Faults are the store's own; crashes are real
``SIGKILL``s and real ``SIGINT``s, each sent once the journal or the store shows the run has
reached the point to test, the store holding answers back until the test lets them go (no fixed
sleeps). Also here: ``pets create --idempotency-key`` and ``pets list -o csv``.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import attrs
import pytest

from animalstore_client._cli.bulk import _FLUSH_SECONDS as FLUSH_SECONDS
from animalstore_client.testing import FakeAnimalStore, Fault
from tests.cli.in_process import invoke
from tests.cli.test_cli import (
    DEFAULT_LAUNCHER,
    KEY,
    POSIX_ONLY,
    TIMEOUT,
    Server,
    check_output,
    environment,
    run_process,
)
from tests.cli.test_cli import run as run_in_process
from tests.conftest import at_scale, read_lines, reaped, sigint_as_in_a_terminal

#: How long a run may take before the test fails instead of hanging.
LONG_TIMEOUT = 120


@attrs.frozen
class Run:
    returncode: int
    stdout: str
    stderr: str

    def records(self) -> list[dict[str, Any]]:
        """The JSON line of each record, in the order printed."""
        return [json.loads(line) for line in self.stdout.splitlines()]

    def by_line(self) -> dict[int, dict[str, Any]]:
        records = self.records()
        lines = [record["line"] for record in records]
        assert len(lines) == len(set(lines)), f"a line printed twice: {Counter(lines)}"
        return {record["line"]: record for record in records}

    def summary(self) -> str:
        [line] = [line for line in self.stderr.splitlines() if line.startswith("pets create:")]
        return line


def animalstore(
    command: str, base_url: str | None, *, key: str | None = KEY, stderr_terminal: bool = False
) -> Run:
    """Run ``animalstore <command>`` to its end, in process (``in_process.invoke``)."""
    result = run_in_process(command, base_url=base_url, key=key, stderr_terminal=stderr_terminal)
    return Run(result.returncode, result.stdout, result.stderr)


def animalstore_process(command: str, base_url: str, *, stdin: bytes) -> Run:
    """Run ``animalstore <command>`` to its end in a subprocess, stdin from ``stdin``."""
    result = run_process(command, base_url=base_url, stdin=stdin)
    return Run(result.returncode, result.stdout, result.stderr)


def start(
    command: str,
    base_url: str,
    stdout: int | IO[bytes] = subprocess.PIPE,
    *,
    preexec_fn: Callable[[], None] = sigint_as_in_a_terminal,
) -> subprocess.Popen[bytes]:
    """Start ``animalstore <command>`` in the background, stderr piped, stdout to ``stdout``;
    ``preexec_fn`` runs in the child before the exec (by default, SIGINT as in a terminal).

    Read a pipe as the run goes (``communicate``): a full pipe holds the run up.
    """
    return subprocess.Popen(
        [*DEFAULT_LAUNCHER, *shlex.split(command)],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=environment(base_url, KEY),
        preexec_fn=preexec_fn,
    )


@contextmanager
def released(server: Server) -> Iterator[None]:
    """Let the answers ``server`` holds go when the block ends, however it ends."""
    try:
        yield
    finally:
        gate(server).release()


def wait_for(condition: Any, what: str, timeout: float = LONG_TIMEOUT) -> None:
    """Wait until ``condition()`` is true, looking every few milliseconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout} s for {what}")
        time.sleep(0.005)


def journal_entries(path: Path) -> list[dict[str, Any]]:
    """The journal's entries (header left out), each a dict; a torn last line left out."""
    lines = path.read_bytes().split(b"\n")
    return [json.loads(line) for line in lines[1:-1]]


def last_states(path: Path) -> dict[int, dict[str, Any]]:
    """Each journaled line's last entry."""
    return {entry["line"]: entry for entry in journal_entries(path)}


def pets_file(path: Path, count: int, *, start: int = 0) -> Path:
    """A JSONL file of ``count`` animals named ``pet-<line>``, every field spelled a way."""
    with path.open("w") as file:
        for line in range(start + 1, start + count + 1):
            category = "categoryId" if line % 2 else "category_id"
            record: dict[str, Any] = {"name": f"pet-{line}", category: line % 7}
            if line % 3:
                record["status"] = ("available", "pending", "sold")[line % 3]
            file.write(json.dumps(record) + "\n")
    return path


def journaled(
    tmp_path: Path, count: int, options: str = "", *, retries: int | None = None
) -> tuple[str, Path]:
    """A ``pets create`` over a new ``pets_file`` of ``count`` animals, with a journal.

    Args:
        tmp_path: where the file and the journal go.
        count: how many animals the file holds.
        options: more of the command's options (``--concurrency 1``).
        retries: ``--max-retries``, if given.

    Returns:
        The command, and the journal's path.
    """
    source = pets_file(tmp_path / "pets.jsonl", count)
    journal = tmp_path / "pets.journal"
    command = f"pets create --from-file {source} --journal {journal} {options}".rstrip()
    if retries is not None:
        command = f"--max-retries {retries} {command}"
    return command, journal


def keys_sent(store: FakeAnimalStore) -> list[str]:
    return [r.headers["idempotency-key"] for r in store.requests if r.method == "POST"]


def names_by_key(store: FakeAnimalStore) -> dict[str, set[str]]:
    """The names each Idempotency-Key was sent with."""
    sent: dict[str, set[str]] = {}
    for request in store.requests:
        if request.method == "POST":
            sent.setdefault(request.headers["idempotency-key"], set()).add(request.json()["name"])
    return sent


class GatedStore(FakeAnimalStore):
    """A store that can hold the answers to creates back until the test lets them go.

    A held create is processed (its animal stored) and recorded as it arrives; its answer
    waits, as under ``Fault.delay``, but for ``release()`` rather than for a time.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(api_keys=[KEY], **options)
        self._open = threading.Event()
        self._open.set()
        self._passes = 0
        self._passing = threading.Lock()

    def hold(self, after: int = 0) -> None:
        """Hold every create's answer from now on, but for the next ``after`` ones."""
        with self._passing:
            self._passes = after
            self._open.clear()

    def release(self) -> None:
        """Let every answer held, and every later one, go."""
        self._open.set()

    def reset(self) -> None:
        self.release()
        super().reset()

    def _exchange(self, method: str, path: str, query: str, headers: Any, body: bytes) -> Any:
        plan = super()._exchange(method, path, query, headers, body)
        if method == "POST":
            with self._passing:
                passes = self._passes > 0
                if passes:
                    self._passes -= 1
            if not passes:
                self._open.wait(LONG_TIMEOUT)  # a test that never releases fails on its own
        return plan


def served_gated(**options: Any) -> Iterator[Server]:
    """Serve a ``GatedStore`` (``options`` go to ``FakeAnimalStore``) until closed."""
    store = GatedStore(**options)
    with store.serve() as base_url:
        try:
            yield Server(store, base_url)
        finally:
            store.release()  # no server thread left waiting


def gate(server: Server) -> GatedStore:
    assert isinstance(server.store, GatedStore)
    return server.store


# A server for each test, not one a module's tests share: a run killed with calls in flight
# leaves requests in the server's sockets, which a shared store would take in the next test,
# after its reset (5 strays once made a later test's 200 records 205).
@pytest.fixture
def dedup() -> Iterator[Server]:
    yield from served_gated(honour_idempotency_keys=True)


@pytest.fixture
def plain() -> Iterator[Server]:
    yield from served_gated()


# -- what a run creates and prints ----------------------------------------------------------


def test_every_record_of_a_jsonl_file_is_created_once(dedup: Server, tmp_path: Path) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 30)
    journal = tmp_path / "pets.journal"

    run = animalstore(f"pets create --from-file {source} --journal {journal}", dedup.base_url)

    assert run.returncode == 0, run.stderr
    printed = run.by_line()
    assert sorted(printed) == list(range(1, 31))
    stored = {pet.name: pet for pet in dedup.store.pets}
    for line, record in printed.items():
        pet = stored[f"pet-{line}"]
        assert record["status"] == "created"
        assert record["pet"] == pet.to_dict()
        expected_status = ("available", "pending", "sold")[line % 3] if line % 3 else None
        assert (pet.category_id, pet.status) == (line % 7, expected_status)
    keys = keys_sent(dedup.store)
    assert len(keys) == len(set(keys)) == 30  # one request, one key per record
    assert {printed[line]["idempotency_key"] for line in printed} == set(keys)
    # The journal ends with each record created, with the key it was sent with.
    states = last_states(journal)
    assert {line: (e["state"], e["key"]) for line, e in states.items()} == {
        line: ("created", record["idempotency_key"]) for line, record in printed.items()
    }
    assert run.summary().startswith(
        "pets create: 30 created, 0 refused, 0 failed, 0 unknown, 0 invalid;"
    )
    assert run.summary().endswith(f"journal {journal}")


def test_csv_with_either_spelling_and_an_idempotency_key_column(
    dedup: Server, tmp_path: Path
) -> None:
    source = tmp_path / "pets.csv"
    source.write_text(
        "name,category_id,status,idempotency_key\r\n"
        "Rex,3,available,restock-rex\r\n"
        '"Tom, ""the"" cat",4,,\r\n'
        '"two\nlines",5,sold,restock-two\r\n'
        "\r\n"
        "Kiki,6,,\r\n",
        newline="",
    )
    run = animalstore(f"pets create --from-file {source}", dedup.base_url)

    assert run.returncode == 0, run.stderr
    printed = run.by_line()
    assert sorted(printed) == [2, 3, 4, 7]  # a record's first line; the blank line skipped
    assert printed[2]["idempotency_key"] == "restock-rex"
    assert printed[4]["idempotency_key"] == "restock-two"
    stored = sorted((pet.name, pet.category_id, pet.status) for pet in dedup.store.pets)
    assert stored == [
        ("Kiki", 6, None),
        ("Rex", 3, "available"),
        ('Tom, "the" cat', 4, None),
        ("two\nlines", 5, "sold"),
    ]
    bodies = {r.json()["name"]: r for r in dedup.store.requests}
    assert bodies["Rex"].headers["idempotency-key"] == "restock-rex"
    assert bodies["two\nlines"].headers["idempotency-key"] == "restock-two"
    assert bodies["Kiki"].json() == {"name": "Kiki", "categoryId": 6}  # an empty status: none

    header = "name,categoryId\n"
    wire = animalstore_process(
        "pets create --from-file - --format csv", dedup.base_url, stdin=f"{header}Max,9\n".encode()
    )
    assert wire.returncode == 0, wire.stderr
    assert wire.records()[0]["pet"]["name"] == "Max"


def test_stdin_is_read_as_jsonl_and_streamed(dedup: Server) -> None:
    lines = b"".join(
        json.dumps({"name": f"in-{i}", "categoryId": i}).encode() + b"\n" for i in range(5)
    )
    run = animalstore_process(
        "pets create --from-file - --concurrency 2", dedup.base_url, stdin=lines
    )
    assert run.returncode == 0, run.stderr
    assert sorted(run.by_line()) == [1, 2, 3, 4, 5]
    assert sorted(pet.name for pet in dedup.store.pets) == [f"in-{i}" for i in range(5)]
    assert "no journal" in run.summary()


def from_a_pipe(
    base_url: str, preexec_fn: Callable[[], None] | None = None
) -> subprocess.Popen[bytes]:
    """Start ``pets create --from-file -``, its stdin a pipe the test writes to (and closes)."""
    return subprocess.Popen(
        [*DEFAULT_LAUNCHER, "pets", "create", "--from-file", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(base_url, KEY),
        preexec_fn=preexec_fn,
    )


@POSIX_ONLY
def test_records_from_a_pipe_go_as_they_come(dedup: Server) -> None:
    # The first record is sent while the writer has not written the second: it would not be,
    # were the input read to its end (or a batch filled) before anything is sent.
    process = from_a_pipe(dedup.base_url)
    assert process.stdin is not None
    with reaped(process):
        process.stdin.write(b'{"name": "first", "categoryId": 1}\n')
        process.stdin.flush()
        wait_for(lambda: len(dedup.store.pets) == 1, "the first record", timeout=TIMEOUT)
        stdout, stderr = process.communicate(
            b'{"name": "second", "categoryId": 2}\n', timeout=TIMEOUT
        )
    assert process.returncode == 0, stderr
    assert [pet.name for pet in dedup.store.pets] == ["first", "second"]
    assert len(stdout.splitlines()) == 2


@POSIX_ONLY
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_pipe_stays_open_ends_the_run(dedup: Server, signum: int) -> None:
    # `tail -f ... | animalstore pets create --from-file -`: the writer never closes the pipe,
    # and the input's reader waits in a read when the signal comes. The run must end all the
    # same (closing the input would wait for that read: for ever).
    process = from_a_pipe(dedup.base_url, signal_default(signum))
    assert process.stdin is not None
    with reaped(process):
        process.stdin.write(b'{"name": "first", "categoryId": 1}\n')
        process.stdin.flush()
        wait_for(lambda: len(dedup.store.pets) == 1, "the first record", timeout=TIMEOUT)
        process.send_signal(signum)
        process.wait(timeout=TIMEOUT)  # the pipe still open
        stdout, stderr = process.communicate()
    assert process.returncode == (130 if signum == signal.SIGINT else 143)
    assert len(stdout.splitlines()) == 1
    assert b"pets create: 1 created" in stderr


# -- checked before anything is sent --------------------------------------------------------

BAD_JSONL = [
    ('{"name": "ok-1", "categoryId": 1}', None),
    ('{"name": "x", "categoryId": "7"}', "$.categoryId: expected an integer, got str '7'"),
    ('{"name": "x", "categoryId": 7, "colour": "red"}', "unknown field 'colour'"),
    ('{"categoryId": 7}', "$.name: required field is missing"),
    ('{"name": "x", "categoryId": 7', "not valid JSON: Expecting ',' delimiter"),
    ("[1, 2]", "expected a JSON object, got an array"),
    ('{"name": "x", "categoryId": true}', "$.categoryId: expected an integer, got bool True"),
    ('{"name": "x", "categoryId": 1, "status": "lost"}', "$.status: expected one of"),
    ('{"name": "\\ud800", "categoryId": 1}', "name must be valid Unicode text"),
    ('{"name": "x", "categoryId": 9223372036854775808}', "$.categoryId: expected an int64"),
    ('{"name": "x", "categoryId": 1, "idempotency_key": "a b"}', "idempotency_key must be"),
    ('{"name": "x", "name": "y", "categoryId": 1}', "the field 'name' is given twice"),
    ('{"name": "x", "categoryId": 1, "category_id": 1}', "given twice"),
    ('{"name": "x", "categoryId": NaN}', "NaN is not valid JSON"),
    ("", None),  # a blank line is no record
    ('{"name": "ok-16", "category_id": 16, "status": null}', None),
]


def test_bad_jsonl_lines_are_reported_by_line_number_and_never_sent(
    dedup: Server, tmp_path: Path
) -> None:
    source = tmp_path / "mixed.jsonl"
    source.write_bytes(
        "\n".join(text for text, _ in BAD_JSONL).encode()
        + b"\n\xff\xfe not utf-8\n"
        + b'{"name": "'
        + b"x" * (1 << 20)
        + b'", "categoryId": 1}\n'
        + b'{"name": "ok-19", "categoryId": 19}\n'
    )

    run = animalstore(f"pets create --from-file {source}", dedup.base_url)

    # Only invalid lines went wrong: 2, "a bad argument, found before it was sent".
    assert run.returncode == 2, run.stderr
    printed = run.by_line()
    expected = {n: message for n, (_, message) in enumerate(BAD_JSONL, 1) if message}
    expected[17] = "the line is not valid UTF-8"
    expected[18] = "the line is longer than 1048576 bytes"
    for line, message in expected.items():
        assert printed[line]["status"] == "invalid"
        assert printed[line]["error"]["code"] == "invalid_record"
        assert message in printed[line]["error"]["message"], (line, printed[line])
    assert sorted(printed) == sorted([*expected, 1, 16, 19])
    assert {printed[n]["status"] for n in (1, 16, 19)} == {"created"}
    assert sorted(r.json()["name"] for r in dedup.store.requests) == ["ok-1", "ok-16", "ok-19"]
    assert {"name": "ok-16", "categoryId": 16} in [r.json() for r in dedup.store.requests]
    assert ", 15 invalid;" in run.summary()


def test_bad_csv_rows_are_reported_by_line_number_and_never_sent(
    dedup: Server, tmp_path: Path
) -> None:
    source = tmp_path / "mixed.csv"
    too_long = b"x" * (1 << 20) + b",1,\n"
    source.write_bytes(
        b"name,categoryId,status\n"
        b"ok-2,2,\n"
        b"x,seven,\n"  # 3
        b"x,+7,\n"  # 4: int() would take it
        b"x,1\n"  # 5: a cell short
        b"x,1,,extra\n"  # 6
        b"x,1,lost\n"  # 7
        b'"multi\nline",1,sold\n'  # 8-9, fine
        b"ok-10,10,pending\n"
        b'"two \xff\nlines",1,\n'  # 11-12: one of them not UTF-8
        + too_long  # 13
        + b"ok-14,14,\n"  # nothing of the two above carries over
        b'"never closed,1,\n'  # 15: to the end of the file
    )
    run = animalstore(f"pets create --from-file {source}", dedup.base_url)

    assert run.returncode == 2
    printed = run.by_line()
    assert {line: r["status"] for line, r in printed.items()} == {
        2: "created",
        3: "invalid",
        4: "invalid",
        5: "invalid",
        6: "invalid",
        7: "invalid",
        8: "created",
        10: "created",
        11: "invalid",
        13: "invalid",
        14: "created",
        15: "invalid",
    }
    assert printed[3]["error"]["message"] == "categoryId must be an int64 integer, got 'seven'"
    assert printed[5]["error"]["message"] == "2 cells for 3 columns"
    assert printed[11]["error"]["message"] == "a line of the record is not valid UTF-8"
    assert printed[13]["error"]["message"] == ("a line of the record is longer than 1048576 bytes")
    assert printed[15]["error"]["message"].startswith("not valid CSV")
    assert sorted(r.json()["name"] for r in dedup.store.requests) == [
        "multi\nline",
        "ok-10",
        "ok-14",
        "ok-2",
    ]


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("name,categoryId,colour", "line 1: unknown CSV column 'colour'"),
        ("name,status", "line 1: the CSV header has no 'categoryId' column"),
        ("name,categoryId,category_id", "line 1: the CSV header names the field 'categoryId'"),
        ("", "line 1: no CSV header"),
        ("name,categoryId,\udcff", "line 1: the CSV header is not valid UTF-8"),
        ("name,categoryId," + "x" * (1 << 20), "line 1: the CSV header is longer than 1048576"),
    ],
    ids=["unknown", "missing", "twice", "empty", "not-utf-8", "too-long"],
)
def test_a_bad_csv_header_stops_the_run_before_anything_is_sent(
    dedup: Server, tmp_path: Path, header: str, message: str
) -> None:
    source = tmp_path / "pets.csv"
    # A lone surrogate escape stands for the byte it was read from (0xff: not UTF-8).
    source.write_bytes(f"{header}\nRex,3,available\n".encode("utf-8", "surrogateescape"))
    journal = tmp_path / "pets.journal"
    run = animalstore(f"pets create --from-file {source} --journal {journal}", dedup.base_url)
    assert (run.returncode, run.stdout) == (2, "")
    [line] = run.stderr.splitlines()
    assert line.startswith(f"error: {message}")
    assert dedup.store.requests == []
    assert not journal.exists()  # the header is read before the journal is opened


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("--from-file pets.txt", "cannot tell the format of 'pets.txt'"),
        ("--from-file missing.jsonl", "cannot read 'missing.jsonl': No such file"),
        ("--from-file pets.jsonl --name Rex", "not allowed with argument --name"),
        ("--from-file pets.jsonl --idempotency-key k", "not allowed with argument --idempotency"),
        ("--from-file pets.jsonl -o table", "prints a JSON line per record, not -o table"),
        ("--from-file pets.jsonl --concurrency 0", "argument --concurrency: must be 1 to 100"),
        ("--from-file pets.jsonl --concurrency 101", "must be 1 to 100, got 101"),
        (
            "--from-file pets.jsonl --concurrency x",
            "argument --concurrency: not a whole number: 'x'",
        ),
        ("--from-file pets.jsonl --status sold", "not allowed with argument --status"),
        ("--from-file pets.jsonl --format xml", "argument --format: invalid choice: 'xml'"),
        ("--name Rex --category-id 1 --journal j", "argument --journal: only with --from-file"),
        ("--name Rex --concurrency 2", "argument --concurrency: only with --from-file"),
        ("", "the following arguments are required: --name, --category-id"),
    ],
)
def test_usage_errors_exit_2_and_send_nothing(
    dedup: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    pets_file(tmp_path / "pets.jsonl", 2)
    (tmp_path / "pets.txt").write_text("")
    run = animalstore(f"pets create {options}", dedup.base_url)
    assert (run.returncode, run.stdout) == (2, "")
    [error] = run.stderr.splitlines()
    assert error.startswith("error: ")
    assert message in error
    assert dedup.store.requests == []


def test_json_lines_and_the_most_calls_at_once_are_allowed(dedup: Server, tmp_path: Path) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 3)
    run = animalstore(
        f"pets create --from-file {source} -o jsonl --concurrency 100", dedup.base_url
    )
    assert run.returncode == 0
    outcomes = [json.loads(line) for line in run.stdout.splitlines()]
    assert sorted((o["line"], o["status"], o["pet"]["name"]) for o in outcomes) == [
        (1, "created", "pet-1"),
        (2, "created", "pet-2"),
        (3, "created", "pet-3"),
    ]


def test_a_client_setting_refused_is_an_error_json_line_with_jsonl(
    dedup: Server, tmp_path: Path
) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 2)
    run = animalstore(f"--timeout -1 pets create --from-file {source} -o jsonl", dedup.base_url)
    assert (run.returncode, run.stdout) == (2, "")
    error = json.loads(run.stderr)
    assert error["code"] == "invalid_argument"
    assert error["message"].startswith("timeout must be ")
    assert error["status"] is None
    assert dedup.store.requests == []


def test_no_api_key_exits_2_before_anything_is_read_or_sent(dedup: Server, tmp_path: Path) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 2)
    journal = tmp_path / "pets.journal"
    run = animalstore(
        f"pets create --from-file {source} --journal {journal}", dedup.base_url, key=None
    )
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == "error: no API key: set ANIMALSTORE_API_KEY or pass --api-key KEY\n"
    assert not journal.exists()
    assert dedup.store.requests == []


def test_the_help_says_how_the_journal_works() -> None:
    run = animalstore("pets create --help", None)
    assert run.returncode == 0
    words = " ".join(run.stdout.split())  # wherever a line wraps
    for text in [
        "--from-file FILE (- for stdin):",
        "idempotency_key",
        "--journal FILE:",
        "A new key is on disk before its record is first sent.",
        "only the records whose answer was lost",
        "3 an answer was lost",
        "5 every record created, but some were resent",
        "130 Ctrl-C, 143 SIGTERM",
        "Created readable by its owner only.",
        "checking a run:",
        "nor list more than 100 animals",
        "--idempotency-key KEY",
        "--concurrency N",
    ]:
        assert text in words, text
    # An installed copy has no docs/ folder: the help is whole without one.
    assert "docs/" not in run.stdout
    assert ".md" not in run.stdout


# -- the journal: crashes, lost answers, resumes ----------------------------------------------


class FlushWatchingStore(FakeAnimalStore):
    """Notes, as each request arrives, how much of the journal the command had flushed."""

    def __init__(self) -> None:
        super().__init__(api_keys=[KEY])
        #: The journal's size each flush to disk covered, noted once the flush has ended.
        self.flushed: list[int] = [0]
        self.on_disk_at_arrival: dict[str, int] = {}

    def _exchange(self, method: str, path: str, query: str, headers: Any, body: bytes) -> Any:
        if method == "POST":
            key = {name.lower(): value for name, value in headers.items()}["idempotency-key"]
            self.on_disk_at_arrival[key] = max(self.flushed)
        return super()._exchange(method, path, query, headers, body)


def test_each_key_is_on_disk_before_its_record_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from animalstore_client._cli import journal as journal_module

    source = pets_file(tmp_path / "pets.jsonl", 60)
    journal = tmp_path / "pets.journal"
    store = FlushWatchingStore()
    real = journal_module._flush_to_disk

    def noting(fd: int) -> None:
        covered = os.fstat(fd).st_size
        time.sleep(0.02)  # a slow disk: a send that does not wait for the flush comes first
        real(fd)
        store.flushed.append(covered)

    monkeypatch.setattr(journal_module, "_flush_to_disk", noting)
    command = f"pets create --from-file {source} --journal {journal}"
    with store.serve() as base_url:
        completed = animalstore(command, base_url)
    assert completed.returncode == 0, completed.stderr
    # Where each key's entry ends in the journal: the flush before its send must cover it.
    ends: dict[str, int] = {}
    offset = 0
    for raw in journal.read_bytes().splitlines(keepends=True):
        offset += len(raw)
        entry = json.loads(raw)
        if entry.get("state") == "started":
            ends[entry["key"]] = offset
    assert len(ends) == len(store.on_disk_at_arrival) == 60
    late = {key for key, on_disk in store.on_disk_at_arrival.items() if on_disk < ends[key]}
    assert not late, f"{len(late)} records sent before their key was on disk"
    flushes = len(store.flushed) - 1
    assert flushes <= 60 // 4  # and one flush covered many keys


def test_lost_answers_are_resent_with_their_first_keys(dedup: Server, tmp_path: Path) -> None:
    command, journal = journaled(tmp_path, 5, "--concurrency 1")
    # The 2nd and 4th creates are processed, then their connections dropped: answers lost.
    dedup.store.inject(
        Fault.delay(0, operation="create"),
        Fault.drop(processed=True, operation="create"),
        Fault.delay(0, operation="create"),
        Fault.drop(processed=True, operation="create"),
    )

    first = animalstore(command, dedup.base_url)

    assert first.returncode == 3, first.stderr
    printed = first.by_line()
    assert [printed[line]["status"] for line in range(1, 6)] == [
        "created",
        "unknown",
        "created",
        "unknown",
        "created",
    ]
    assert printed[2]["error"]["code"] == "connection_error"
    first_keys = keys_sent(dedup.store)
    assert first_keys == [printed[line]["idempotency_key"] for line in range(1, 6)]
    assert len(dedup.store.pets) == 5  # the lost answers' animals were stored all the same
    assert (
        "answer lost for 2 record(s), which may have been created: line(s) 2, 4; run the same "
        f"command again with --journal {journal}" in first.stderr
    )
    assert {line: e["state"] for line, e in last_states(journal).items()} == {
        1: "created",
        2: "unknown",
        3: "created",
        4: "unknown",
        5: "created",
    }

    second = animalstore(command, dedup.base_url)

    assert second.returncode == 5, second.stderr  # every record created, 2 resent
    # Exactly the two lost ones were sent again, each with its first key, in line order.
    assert keys_sent(dedup.store)[5:] == [first_keys[1], first_keys[3]]
    assert len(dedup.store.pets) == 5
    again = second.by_line()
    assert {line: (r["status"], "earlier" in r, "resent" in r) for line, r in again.items()} == {
        1: ("created", True, False),
        2: ("created", False, True),
        3: ("created", True, False),
        4: ("created", False, True),
        5: ("created", True, False),
    }
    assert again[1]["pet"] == printed[1]["pet"]  # an earlier outcome, printed as it was
    assert again[2]["pet"]["id"] == 2  # the replayed first answer: the animal stored then
    assert "resent 2 record(s)" in second.stderr
    assert "line(s) 2, 4" in second.stderr

    third = animalstore(command, dedup.base_url)
    assert third.returncode == 5  # resent by an earlier run: still said
    assert len(keys_sent(dedup.store)) == 7  # nothing more sent
    assert "0 created" in third.summary()
    assert "5 created and 0 refused by an earlier run" in third.summary()


def test_against_a_store_that_does_not_deduplicate_only_the_listed_lines_double(
    plain: Server, tmp_path: Path
) -> None:
    command, _ = journaled(tmp_path, 5, "--concurrency 1")
    plain.store.inject(
        Fault.delay(0, operation="create"),
        Fault.drop(processed=True, operation="create"),
    )
    assert animalstore(command, plain.base_url).returncode == 3
    second = animalstore(command, plain.base_url)
    assert second.returncode == 5
    names = Counter(pet.name for pet in plain.store.pets)
    assert [name for name, count in names.items() if count > 1] == ["pet-2"]
    assert "may have created them twice: line(s) 2" in second.stderr


def test_a_record_that_may_exist_twice_is_listed_by_every_later_run(
    plain: Server, tmp_path: Path
) -> None:
    command, _ = journaled(tmp_path, 3, "--concurrency 1", retries=0)
    # Line 1: stored, its answer lost; then a 503 (not processed); then created again.
    plain.store.inject(
        Fault.drop(processed=True, operation="create"),
        Fault.delay(0, operation="create", times=2),
        Fault.error(503, operation="create"),
    )
    assert animalstore(command, plain.base_url).returncode == 3
    second = animalstore(command, plain.base_url)
    assert second.returncode == 1
    assert second.by_line()[1]["resent"] is True  # its answer was lost: it may exist

    third = animalstore(command, plain.base_url)

    assert third.returncode == 5
    # The 503 in between does not make it safe: the first send created it.
    assert third.by_line()[1]["resent"] is True
    assert "may have created them twice: line(s) 1" in third.stderr
    assert Counter(pet.name for pet in plain.store.pets)["pet-1"] == 2
    fourth = animalstore(command, plain.base_url)
    assert fourth.returncode == 5
    assert len(plain.store.requests) == 5  # nothing sent
    assert (fourth.by_line()[1]["earlier"], fourth.by_line()[1]["resent"]) == (True, True)
    assert "1 record(s) seen through by an earlier run were resent then, and may exist twice" in (
        fourth.stderr
    )
    assert "line(s) 1\n" in fourth.stderr


@POSIX_ONLY
def test_a_resend_killed_before_its_answer_leaves_the_record_in_doubt(
    plain: Server, tmp_path: Path
) -> None:
    command, journal = journaled(tmp_path, 1, retries=0)
    plain.store.inject(Fault.error(503, operation="create"))
    assert animalstore(command, plain.base_url).returncode == 1  # a 503: not created
    # The resend is stored, its answer held back; the run is killed before it comes.
    gate(plain).hold()
    with (tmp_path / "stdout").open("wb") as stdout:
        process = start(command, plain.base_url, stdout=stdout)
    with released(plain), reaped(process):
        wait_for(lambda: len(plain.store.pets) == 1, "the resend to be stored", timeout=TIMEOUT)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=TIMEOUT)
    assert process.returncode == -signal.SIGKILL
    assert last_states(journal)[1]["state"] == "started"  # in doubt, not "failed" (a 503)

    third = animalstore(command, plain.base_url)

    assert third.returncode == 5
    assert third.by_line()[1]["resent"] is True
    assert "may have created them twice: line(s) 1" in third.stderr
    assert len(plain.store.pets) == 2


def test_refused_records_are_final_and_failed_ones_are_resent(
    dedup: Server, tmp_path: Path
) -> None:
    command, _ = journaled(tmp_path, 4, "--concurrency 1", retries=0)
    dedup.store.inject(
        Fault.error(400, code="invalid_field", message="no", operation="create"),
        Fault.error(503, operation="create"),
        Fault.error(500, operation="create"),
    )
    first = animalstore(command, dedup.base_url)
    assert first.returncode == 1
    printed = first.by_line()
    assert (printed[1]["status"], printed[1]["error"]["code"]) == ("refused", "invalid_field")
    assert (printed[2]["status"], printed[2]["error"]["status"]) == ("failed", 503)
    assert (printed[3]["status"], printed[3]["error"]["status"]) == ("failed", 500)
    assert printed[4]["status"] == "created"

    second = animalstore(command, dedup.base_url)
    # Line 1 stays refused (not sent again): still 1. Lines 2 and 3 go again, with their keys.
    assert second.returncode == 1
    first_keys = [printed[line]["idempotency_key"] for line in (2, 3)]
    assert keys_sent(dedup.store)[4:] == first_keys
    again = second.by_line()
    assert (again[1]["status"], again[1].get("earlier")) == ("refused", True)
    assert again[2]["status"] == again[3]["status"] == "created"
    # A 503 is an answer before any processing; a 500 may come after the animal was stored.
    assert (again[2].get("resent"), again[3].get("resent")) == (None, True)
    assert "resent 1 record(s) that an earlier run may have created" in second.stderr
    assert sorted(pet.name for pet in dedup.store.pets) == ["pet-2", "pet-3", "pet-4"]


def test_an_unreachable_api_exits_3_and_stops_sending(tmp_path: Path, closed_port: int) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 200)
    journal = tmp_path / "pets.journal"
    base_url = f"http://127.0.0.1:{closed_port}/v1"
    run = animalstore(
        f"--max-retries 0 pets create --from-file {source} --journal {journal} --concurrency 4",
        base_url,
    )
    assert run.returncode == 3
    printed = run.records()
    assert {r["status"] for r in printed} == {"unknown"}
    # It stops after 10 records in a row without an answer, plus those already in flight.
    assert 10 <= len(printed) <= 14
    assert "stopped early: the last 1" in run.stderr
    states = Counter(e["state"] for e in last_states(journal).values())
    assert states["unknown"] == len(printed)
    assert set(states) <= {"unknown", "unsent"}


def test_a_journal_for_another_input_or_api_is_refused_untouched(
    dedup: Server, plain: Server, tmp_path: Path
) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 3)
    journal = tmp_path / "pets.journal"
    assert animalstore(f"pets create --from-file {source} --journal {journal}", dedup.base_url)
    written = journal.read_bytes()
    sent = len(dedup.store.requests)

    other = pets_file(tmp_path / "other.jsonl", 3, start=10)
    run = animalstore(f"pets create --from-file {other} --journal {journal}", dedup.base_url)
    assert (run.returncode, run.stdout) == (2, "")
    assert "line 1 of the input is not the record that the journal" in run.stderr
    assert len(dedup.store.requests) == sent

    elsewhere = animalstore(f"pets create --from-file {source} --journal {journal}", plain.base_url)
    assert elsewhere.returncode == 2
    assert f"was written for the API at '{dedup.base_url}/'" in elsewhere.stderr
    assert plain.store.requests == []

    not_a_journal = animalstore(
        f"pets create --from-file {source} --journal {source}", dedup.base_url
    )
    assert not_a_journal.returncode == 2
    assert "is not a journal of 'pets create --from-file'" in not_a_journal.stderr
    assert journal.read_bytes() == written
    assert source.read_text().count("\n") == 3
    assert len(dedup.store.requests) == sent


def test_an_edited_line_stops_the_run_at_that_line(dedup: Server, tmp_path: Path) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 4)
    journal = tmp_path / "pets.journal"
    command = f"pets create --from-file {source} --journal {journal} --concurrency 1"
    assert animalstore(command, dedup.base_url).returncode == 0
    lines = source.read_text().splitlines()
    lines[2] = json.dumps({"name": "changed", "categoryId": 1})
    source.write_text("\n".join([*lines, json.dumps({"name": "new", "categoryId": 5})]) + "\n")
    run = animalstore(command, dedup.base_url)
    assert run.returncode == 2
    assert "line 3 of the input is not the record" in run.stderr
    assert len(dedup.store.requests) == 4  # neither line 3 nor line 5 was sent


def test_a_torn_last_line_of_the_journal_is_dropped(dedup: Server, tmp_path: Path) -> None:
    command, journal = journaled(tmp_path, 3)
    assert animalstore(command, dedup.base_url).returncode == 0
    whole = journal.read_bytes()
    # What a power cut leaves: the last entry half written (and no line end).
    journal.write_bytes(whole[: whole.rindex(b"\n", 0, -1) + 1] + b'{"line":3,"key":"')
    run = animalstore(command, dedup.base_url)
    assert run.returncode == 5, run.stderr  # line 3 resent
    assert "resent 1 record(s)" in run.stderr  # line 3: started, its outcome cut off
    assert len(dedup.store.pets) == 3
    assert journal_entries(journal)[-1]["state"] == "created"
    # The torn line is gone; the resent record's outcome took the place of the one cut off.
    assert journal.read_bytes().count(b"\n") == whole.count(b"\n")


@POSIX_ONLY
def test_a_second_run_on_the_same_journal_is_refused_while_the_first_lasts(
    dedup: Server, tmp_path: Path
) -> None:
    command, journal = journaled(tmp_path, 20)
    gate(dedup).hold()  # holds the first run up
    # The first run, held up, is still running at the end: killed.
    with released(dedup), reaped(start(command, dedup.base_url)):
        wait_for(lambda: dedup.store.requests, "the first run's first call", timeout=TIMEOUT)
        second = animalstore(command, dedup.base_url)
        assert second.returncode == 2
        assert f"the journal '{journal}' is in use by another run" in second.stderr


@POSIX_ONLY
@pytest.mark.parametrize("scale", at_scale((200, 3), (2_000, 5), name="records,kills"))
def test_killed_at_random_points_and_resumed_creates_each_record_exactly_once(
    dedup: Server, tmp_path: Path, scale: tuple[int, int]
) -> None:
    count, kills = scale
    command, journal = journaled(tmp_path, count)
    seed = random.randrange(1 << 32)  # new points every run; a failure names its seed
    chooser = random.Random(seed)
    entries = 0
    for _ in range(kills):
        # Somewhere ahead of where the last run stopped: a point of the next run's journal.
        entries += chooser.randrange(count // 40, 2 * count // kills)
        with (tmp_path / "stdout").open("wb") as stdout:
            # A file, not a pipe: a pipe that nobody reads would fill and hold the run up.
            process = start(command, dedup.base_url, stdout=stdout)
        with reaped(process):
            wait_for(
                functools.partial(reached, journal, entries, process),
                f"the journal to reach {entries} lines",
            )
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=TIMEOUT)
        assert process.returncode == -signal.SIGKILL, f"seed {seed}"
    in_doubt = {line for line, e in last_states(journal).items() if e["state"] == "started"}
    final = animalstore(command, dedup.base_url)

    pets = dedup.store.pets
    assert len(pets) == count, f"seed {seed}"
    assert sorted(pet.name for pet in pets) == sorted(f"pet-{line}" for line in range(1, count + 1))
    # No line lost: the last run prints every record, created now or by an earlier run.
    printed = final.by_line()
    assert sorted(printed) == list(range(1, count + 1))
    assert {r["status"] for r in printed.values()} == {"created"}
    # Those a kill left in doubt were resent (by this run or an earlier one), and only those
    # may be: every record created, 5 if some were resent, else 0.
    resent = {line for line, record in printed.items() if record.get("resent")}
    assert in_doubt <= resent, f"seed {seed}"
    assert final.returncode == (5 if resent else 0), f"seed {seed}: {final.stderr}"
    # Each record had one key for its whole life, through every kill and resend.
    sent = names_by_key(dedup.store)
    assert all(len(names) == 1 for names in sent.values())
    assert len(sent) == count
    assert {printed[int(name[4:])]["idempotency_key"] for (name,) in sent.values()} == set(sent)


def reached(journal: Path, lines: int, process: subprocess.Popen[bytes]) -> bool:
    """Whether the journal has ``lines`` lines (or the run ended first)."""
    if process.poll() is not None:
        return True
    return journal.exists() and journal.read_bytes().count(b"\n") >= lines


def test_a_record_with_another_records_key_is_invalid_and_never_sent(
    dedup: Server, tmp_path: Path
) -> None:
    source = tmp_path / "pets.jsonl"
    records = [
        {"name": "Rex", "categoryId": 1, "idempotency_key": "restock-1"},
        {"name": "Kiki", "categoryId": 2, "idempotency_key": "restock-2"},
        {"name": "Tom", "categoryId": 3, "idempotency_key": "restock-1"},  # the user's slip
        {"name": "Rex", "categoryId": 1, "idempotency_key": "restock-1"},  # the same, twice
    ]
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    journal = tmp_path / "pets.journal"
    command = f"pets create --from-file {source} --journal {journal}"

    run = animalstore(command, dedup.base_url)

    assert run.returncode == 2, run.stderr
    printed = run.by_line()
    assert (printed[1]["status"], printed[2]["status"]) == ("created", "created")
    for line in (3, 4):
        assert printed[line]["status"] == "invalid"
        assert printed[line]["error"]["message"] == (
            "the idempotency_key 'restock-1' is line 1's already: each record needs a key of "
            f"its own (line 1 is sent with it, line {line} is not)"
        )
    assert sorted(keys_sent(dedup.store)) == ["restock-1", "restock-2"]
    assert sorted(pet.name for pet in dedup.store.pets) == ["Kiki", "Rex"]
    assert "2 created, 0 refused, 0 failed, 0 unknown, 2 invalid" in run.summary()
    # A resume reads the file again from its start: the same verdicts, nothing sent.
    again = animalstore(command, dedup.base_url)
    assert again.returncode == 2
    assert [again.by_line()[line]["status"] for line in (3, 4)] == ["invalid", "invalid"]
    assert len(keys_sent(dedup.store)) == 2


@pytest.mark.parametrize("count", at_scale(200, 600))
def test_the_partial_outage_is_resumed_to_the_end(
    dedup: Server, tmp_path: Path, count: int
) -> None:
    # The sequence: a third of the creates answer 500; every resume reads entries back
    # between its appends, and must read the ones it asks for. (200 records are enough: with
    # entries read back through a buffer behind the appends, as before the fix, the resume
    # fails at 150 already.)
    command, _ = journaled(tmp_path, count, retries=0)
    plan = random.Random(30)
    dedup.store.inject(
        *(
            Fault.error(500, operation="create")
            if plan.random() < 0.35
            else Fault.delay(0, operation="create")
            for _ in range(count)
        )
    )
    first = animalstore(command, dedup.base_url)
    assert first.returncode == 1, first.stderr
    dedup.store.clear_faults()
    second = animalstore(command, dedup.base_url)
    assert second.returncode == 5, second.stderr  # the 500s resent
    assert "cannot be read" not in second.stderr
    assert sorted(pet.name for pet in dedup.store.pets) == sorted(
        f"pet-{line}" for line in range(1, count + 1)
    )
    assert sorted(second.by_line()) == list(range(1, count + 1))


def test_a_journal_entry_for_a_line_the_input_lacks_refuses_the_journal(
    dedup: Server, tmp_path: Path
) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 3)
    journal = tmp_path / "pets.journal"
    command = f"pets create --from-file {source} --journal {journal}"
    assert animalstore(command, dedup.base_url).returncode == 0
    with journal.open("a") as file:
        file.write(json.dumps({"line": 4, "key": "k", "digest": "d", "state": "failed"}) + "\n")
    written = journal.read_bytes()
    sent = len(dedup.store.requests)

    run = animalstore(command, dedup.base_url)

    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == (
        f"error: the journal '{journal}' has an entry for line 4, which '{source}' does not "
        "have: it was written for another input; give another --journal\n"
    )
    assert len(dedup.store.requests) == sent
    assert journal.read_bytes() == written
    # A last line without its line end is a line all the same.
    source.write_bytes(source.read_bytes() + b'{"name": "pet-4", "categoryId": 4}')
    # So the journal is taken, and its entry for line 4 compared with the record there.
    taken = animalstore(command, dedup.base_url)
    assert taken.returncode == 2
    assert "line 4 of the input is not the record that the journal" in taken.stderr


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"line": 10**30}, "its line must be a line number (1 or more), got 1000000000"),
        ({"line": True}, "its line must be a line number (1 or more), got True"),
        ({"line": -5}, "its line must be a line number (1 or more), got -5"),
        ({"state": "done"}, "its state must be one of started, unsent, created, refused,"),
    ],
)
def test_a_corrupt_journal_entry_is_refused_in_one_line_exit_2(
    dedup: Server, tmp_path: Path, fields: dict[str, Any], problem: str
) -> None:
    command, journal = journaled(tmp_path, 3)
    assert animalstore(command, dedup.base_url).returncode == 0
    entry = {"line": 2, "key": "k", "digest": "d", "state": "failed", **fields}
    with journal.open("a") as file:
        file.write(json.dumps(entry) + "\n")
    sent = len(dedup.store.requests)

    run = animalstore(command, dedup.base_url)

    assert (run.returncode, run.stdout) == (2, "")
    [line] = run.stderr.splitlines()
    assert line.startswith(f"error: line 8 of the journal '{journal}' cannot be read: {problem}")
    assert len(dedup.store.requests) == sent


@POSIX_ONLY
def test_a_journal_others_can_read_still_works_with_a_notice(dedup: Server, tmp_path: Path) -> None:
    command, journal = journaled(tmp_path, 3)
    first = animalstore(command, dedup.base_url)
    assert first.returncode == 0
    assert journal.stat().st_mode & 0o777 == 0o600
    assert "notice" not in first.stderr
    journal.chmod(0o644)

    again = animalstore(command, dedup.base_url)

    assert again.returncode == 0
    assert again.stderr.splitlines()[0] == (
        f"notice: the journal '{journal}' can be read by other users (mode 0644) and holds "
        f"names, keys and error messages: chmod 600 '{journal}'"
    )
    assert "3 created and 0 refused by an earlier run" in again.summary()
    assert journal.stat().st_mode & 0o777 == 0o644  # told, not changed


# -- Ctrl-C ----------------------------------------------------------------------------------


@POSIX_ONLY
def test_a_second_ctrl_c_cuts_the_calls_short_and_they_are_resent_later(
    dedup: Server, tmp_path: Path
) -> None:
    command, journal = journaled(tmp_path, 10, "--concurrency 2")
    gate(dedup).hold()  # processed, the answers held back
    process = start(command, dedup.base_url)
    with released(dedup), reaped(process):
        wait_for(lambda: len(dedup.store.requests) == 2, "2 calls in flight", timeout=TIMEOUT)
        process.send_signal(signal.SIGINT)
        assert process.stderr is not None
        [notice] = read_lines(process.stderr, 1, timeout=TIMEOUT)
        assert notice.startswith("interrupted: waiting for the calls in flight")
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    check_output(stdout.decode(), stderr.decode())
    assert process.returncode == 130
    printed = Run(0, stdout.decode(), "").by_line()
    assert {line: r["error"]["code"] for line, r in printed.items()} == {
        1: "interrupted",
        2: "interrupted",
    }
    states = {line: e["state"] for line, e in last_states(journal).items()}
    assert (states.pop(1), states.pop(2)) == ("unknown", "unknown")
    assert set(states.values()) <= {"unsent"}  # keys journaled ahead, never sent
    first_keys = keys_sent(dedup.store)

    resumed = animalstore(command, dedup.base_url)
    assert resumed.returncode == 5  # the two cut short resent
    # The two cut short went again, with their keys; the others once. (The resumed run's
    # calls may arrive in any order: two at a time.)
    sent = Counter(keys_sent(dedup.store))
    assert sorted(sent.values()) == [1] * 8 + [2, 2]
    assert {key for key, times in sent.items() if times == 2} == set(first_keys)
    assert len(dedup.store.pets) == 10
    assert "resent 2 record(s)" in resumed.stderr


def signalled_while_in_flight(
    process: subprocess.Popen[bytes], server: Server, signum: int, in_flight: int
) -> tuple[bytes, bytes]:
    """Send ``signum`` once ``in_flight`` calls wait for their answers; let them go once the
    run has said it waits for them; return its stdout and stderr."""
    wait_for(
        lambda: len(server.store.requests) >= in_flight,
        f"{in_flight} calls in flight",
        timeout=TIMEOUT,
    )
    process.send_signal(signum)
    assert process.stderr is not None
    # Nothing else comes before the notice: the calls, held, have no outcome yet.
    [notice] = read_lines(process.stderr, 1, timeout=TIMEOUT)
    gate(server).release()
    stdout, stderr = process.communicate(timeout=TIMEOUT)
    return stdout, (notice + "\n").encode() + stderr


def signal_default(signum: int) -> Callable[[], None]:
    """``preexec_fn`` that gives ``signum`` (and SIGINT) their default action in the child.

    A test run under ``nohup`` or in the background starts its children with them ignored.
    """

    def restore() -> None:
        sigint_as_in_a_terminal()
        signal.signal(signum, signal.SIG_DFL)

    return restore


@POSIX_ONLY
@pytest.mark.parametrize(
    ("signum", "status", "said", "again", "stopped"),
    [
        (signal.SIGINT, 130, "interrupted", "Ctrl-C again", "interrupted (Ctrl-C)"),
        (signal.SIGTERM, 143, "terminated (SIGTERM)", "another signal", "terminated (SIGTERM)"),
        (signal.SIGHUP, 129, "hung up (SIGHUP)", "another signal", "hung up (SIGHUP)"),
    ],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_a_signal_lets_the_calls_in_flight_end_and_a_rerun_finishes(
    dedup: Server, tmp_path: Path, signum: int, status: int, said: str, again: str, stopped: str
) -> None:
    command, journal = journaled(tmp_path, 40, "--concurrency 4")
    # Every create's answer is held back: four are in flight when the signal comes.
    gate(dedup).hold()
    process = start(command, dedup.base_url, preexec_fn=signal_default(signum))
    with reaped(process):
        stdout, stderr = signalled_while_in_flight(process, dedup, signum, in_flight=4)
    check_output(stdout.decode(), stderr.decode())
    assert process.returncode == status
    sent = len(dedup.store.requests)
    assert 4 <= sent < 40
    printed = Run(0, stdout.decode(), "").by_line()
    # The calls in flight ended: each was created, printed and journaled so; no record is left
    # started without an outcome.
    assert len(printed) == len(dedup.store.pets) == sent
    assert {r["status"] for r in printed.values()} == {"created"}
    states = last_states(journal)
    assert {line for line, e in states.items() if e["state"] == "created"} == set(printed)
    assert {e["state"] for e in states.values()} <= {"created", "unsent"}
    assert f"{said}: waiting for the calls in flight to end; {again}" in stderr.decode()
    assert f"stopped early: {stopped}" in stderr.decode()

    resumed = animalstore(command, dedup.base_url)
    assert resumed.returncode == 0
    assert Counter(pet.name for pet in dedup.store.pets) == Counter(
        f"pet-{n}" for n in range(1, 41)
    )
    assert "resent" not in resumed.stderr  # a clean stop leaves nothing in doubt


@POSIX_ONLY
def test_a_closed_stdout_stops_the_run_like_ctrl_c_and_exits_141(
    dedup: Server, tmp_path: Path
) -> None:
    command, journal = journaled(tmp_path, 40)
    # The first create is answered at once; the answers to the others are held until stdout
    # is closed, then come late, by more than the run may keep an outcome before writing it
    # out: the next outcome's write meets the closed pipe, the records after it unsent.
    late = Fault.delay(1.5 * FLUSH_SECONDS, operation="create", times=None)
    dedup.store.inject(Fault.delay(0, operation="create"), late)
    gate(dedup).hold(after=1)
    process = start(command, dedup.base_url)  # like `| head -1`: one line read, then gone
    with reaped(process):
        assert process.stdout is not None
        assert process.stderr is not None
        [first] = read_lines(process.stdout, 1, timeout=TIMEOUT)
        process.stdout.close()
        gate(dedup).release()
        stderr = process.stderr.read().decode()
        process.wait(timeout=TIMEOUT)
    check_output(first, stderr)
    assert process.returncode == 141
    assert "stopped early: stdout was closed" in stderr
    assert "Exception ignored" not in stderr
    assert len(dedup.store.requests) < 40
    assert {e["state"] for e in last_states(journal).values()} <= {"created", "unsent"}

    dedup.store.clear_faults()
    resumed = animalstore(command, dedup.base_url)
    assert resumed.returncode == 0
    assert len(dedup.store.pets) == 40
    assert "resent" not in resumed.stderr


# -- scale: 10,000 records (300 in the default tier), flat memory --------------------------------

_PEAK = """
import resource, subprocess, sys
completed = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.stderr.buffer.write(completed.stderr)
print(completed.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_kib(command: str, base_url: str) -> tuple[int, int, str]:
    """Run the command in a process of its own; return its status, peak RSS (KiB), stderr."""
    completed = subprocess.run(
        [sys.executable, "-c", _PEAK, *DEFAULT_LAUNCHER, *shlex.split(command)],
        capture_output=True,
        env=environment(base_url, KEY),
        timeout=LONG_TIMEOUT,
        check=True,
    )
    status, peak = completed.stdout.split()
    return int(status), int(peak), completed.stderr.decode()


@pytest.mark.skipif(sys.platform == "win32", reason="needs the resource module")
@pytest.mark.parametrize("count", at_scale(300, 10_000))
def test_a_large_file_is_created_once_each_in_flat_memory(
    plain: Server, tmp_path: Path, count: int
) -> None:
    # At 300 records the peaks cannot differ by much whatever the loader keeps; the deep tier's
    # 10,000 show memory flat. Both show each record created once, and the group commit.
    small = pets_file(tmp_path / "small.jsonl", 100)
    large = pets_file(tmp_path / "large.jsonl", count)
    options = "-v pets create --concurrency 8"

    status, small_peak, _ = peak_kib(
        f"{options} --from-file {small} --journal {tmp_path / 'small.journal'}", plain.base_url
    )
    assert status == 0
    plain.store.reset()
    status, large_peak, stderr = peak_kib(
        f"{options} --from-file {large} --journal {tmp_path / 'large.journal'}", plain.base_url
    )

    assert status == 0
    assert len(plain.store.pets) == count  # against a store that does not deduplicate
    assert Counter(pet.name for pet in plain.store.pets) == Counter(
        f"pet-{line}" for line in range(1, count + 1)
    )
    posts = [r for r in plain.store.requests if r.method == "POST"]
    assert len(posts) == count
    assert len({r.headers["idempotency-key"] for r in posts}) == count
    # Group commit: one flush to disk per group of keys, not one per record.
    [flushes] = re.findall(rf"journal \S+: {2 * count} entries written, (\d+) flushes", stderr)
    assert int(flushes) <= count // 4
    # The bound: the peak within 10% of a 100-record run's.
    assert large_peak <= small_peak * 1.10, (small_peak, large_peak)


# -- pets create --idempotency-key, pets list -o csv ------------------------------------------


def test_create_sends_the_given_idempotency_key(dedup: Server) -> None:
    command = "pets create --name Rex --category-id 3 --idempotency-key restock-rex-1"
    first = animalstore(command, dedup.base_url)
    again = animalstore(command, dedup.base_url)
    assert (first.returncode, again.returncode) == (0, 0)
    assert json.loads(first.stdout) == json.loads(again.stdout)  # the first answer, replayed
    assert keys_sent(dedup.store) == ["restock-rex-1", "restock-rex-1"]
    assert len(dedup.store.pets) == 1

    bad = animalstore("pets create --name Rex --category-id 3 --idempotency-key 'a b'", None)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: idempotency_key must be 1 to 255 printable ASCII")


def test_list_as_csv_quotes_as_rfc_4180_says(plain: Server) -> None:
    plain.store.add_pet("Rex", 3, "available")
    plain.store.add_pet('Tom, "the" cat', 4)
    plain.store.add_pet("two\nlines", -5, "sold")
    run = animalstore("pets list -o csv", plain.base_url)
    assert run.returncode == 0
    assert run.stdout == (
        "id,name,categoryId,status\n"
        "1,Rex,3,available\n"
        '2,"Tom, ""the"" cat",4,\n'
        '3,"two\nlines",-5,sold\n'
    )
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    assert [row["name"] for row in rows] == ["Rex", 'Tom, "the" cat', "two\nlines"]

    plain.store.reset()
    empty = animalstore("--output csv pets list", plain.base_url)
    assert empty.stdout == "id,name,categoryId,status\n"
    one = animalstore("pets create --name Kiki --category-id 1 -o csv", plain.base_url)
    assert one.stdout == "id,name,categoryId,status\n1,Kiki,1,\n"
    assert "csv" in animalstore("pets list --help", None).stdout


def test_list_as_csv_quotes_a_bare_carriage_return_on_every_python(plain: Server) -> None:
    # Python 3.10 to 3.12 leave a bare CR unquoted with lineterminator="\n": a reader would
    # see a phantom row "999,1,available".
    plain.store.add_pet("Fido\r999", 1, "available")
    plain.store.add_pet("a\r\nb", 2)
    run = animalstore("pets list -o csv", plain.base_url)
    assert run.returncode == 0
    assert run.stdout == 'id,name,categoryId,status\n1,"Fido\r999",1,available\n2,"a\r\nb",2,\n'
    rows = list(csv.reader(io.StringIO(run.stdout, newline="")))
    assert rows == [
        ["id", "name", "categoryId", "status"],
        ["1", "Fido\r999", "1", "available"],
        ["2", "a\r\nb", "2", ""],
    ]


def test_list_as_csv_writes_a_lone_surrogate_as_an_escape() -> None:
    from tests.reliability.faultserver import FaultServer, Reply

    body = json.dumps([{"id": 1, "name": "a\ud800b", "categoryId": 1}]).encode()
    with FaultServer(default=Reply(200, body=body)) as server:
        run = animalstore("pets list -o csv", server.base_url)
    assert run.returncode == 0
    assert run.stdout == "id,name,categoryId,status\n1,a\\ud800b,1,\n"


# -- on a terminal ---------------------------------------------------------------------------


def test_a_terminal_gets_a_progress_bar_then_the_summary(dedup: Server, tmp_path: Path) -> None:
    source = pets_file(tmp_path / "pets.jsonl", 100)
    # The last 20 creates answer late: the whole file is read (and the descriptor's offset at
    # its end) well before every record is done, for several redraws of the bar.
    dedup.store.inject(
        Fault.delay(0, operation="create", times=80),
        Fault.delay(0.15, operation="create", times=None),
    )
    run = animalstore(f"pets create --from-file {source}", dedup.base_url, stderr_terminal=True)
    stderr = run.stderr
    assert run.returncode == 0
    assert len(run.stdout.splitlines()) == 100
    bars = [part for part in stderr.split("\r") if " done " in part]
    assert bars, stderr
    pattern = r"\[([#.]{20})\] ([\d,]+) done  0 failed  [\d,]+/s  (\d+:\d\d|\?) left"
    drawn = [re.search(pattern, bar) for bar in bars]
    assert all(drawn), bars
    shown = [(match[1], int(match[2].replace(",", ""))) for match in drawn if match]
    # Full only when every record is done; and drawn while the last ones were in flight.
    assert all(done == 100 for bar, done in shown if bar == "#" * 20), shown
    assert any(80 <= done < 100 for _, done in shown), shown
    assert "\r\x1b[Kpets create: 100 created" in stderr  # the bar's line, cleared


def test_a_terminal_gets_each_record_line_with_what_could_drive_it_escaped(
    dedup: Server, tmp_path: Path
) -> None:
    # A right-to-left override in a name would turn the rest of the line around on a terminal.
    source = tmp_path / "pets.jsonl"
    source.write_text(
        json.dumps({"name": "a\u202eb", "categoryId": 1, "idempotency_key": "k-1"}) + "\n"
    )
    environ = {"ANIMALSTORE_BASE_URL": dedup.base_url, "ANIMALSTORE_API_KEY": KEY}

    invoked = invoke(["pets", "create", "--from-file", str(source)], environ, stdout_terminal=True)

    assert invoked.returncode == 0
    assert invoked.stdout == (
        b'{"line": 1, "status": "created", "pet": {"id": 1, "name": "a\\u202eb", '
        b'"categoryId": 1}, "idempotency_key": "k-1"}\n'
    )
