"""The bulk loader's decisions, in process: each answer's outcome, when a run gives up, the exit.

``test_bulk.py`` runs the command for real; these drive ``Bulk`` itself against the store's
in-process client, so that every status of the table and every bound is cheap to check.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import signal
import uuid
from array import array
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from animalstore_client import AsyncClient, Pet
from animalstore_client._cli import bulk as bulk_module
from animalstore_client._cli.bulk import (
    REFUSED_STATUSES,
    Bulk,
    _fraction_read,
    _handle_signals,
    _has_line,
    _maybe_created,
    exit_status,
)
from animalstore_client._cli.journal import (
    CREATED,
    FAILED,
    REFUSED,
    STARTED,
    UNKNOWN,
    UNSENT,
    Entry,
    Header,
    Journal,
    NoJournal,
)
from animalstore_client._cli.progress import Progress, Tally
from animalstore_client._cli.records import Record, read_records
from animalstore_client.testing import FakeAnimalStore, Fault

KEY = "test-key"


def records(count: int) -> bytes:
    return b"".join(
        json.dumps({"name": f"pet-{line}", "categoryId": line}).encode() + b"\n"
        for line in range(1, count + 1)
    )


def run(store: FakeAnimalStore, data: bytes, concurrency: int = 1) -> tuple[int, list[Any], str]:
    """Run ``Bulk`` over JSONL ``data``; return the exit status, stdout's lines and stderr."""
    stream = io.BytesIO(data)
    stdout, stderr = io.StringIO(), io.StringIO()

    async def go() -> int:
        async with store.async_client(max_retries=0) as client:
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(client, NoJournal(), concurrency, stdout, progress)
            return await bulk.run(read_records(stream, "jsonl"), stream)

    status = asyncio.run(go())
    return status, [json.loads(line) for line in stdout.getvalue().splitlines()], stderr.getvalue()


def creates(store: FakeAnimalStore) -> int:
    return sum(request.method == "POST" for request in store.requests)


def test_the_refused_statuses_are_those_about_the_record() -> None:
    assert frozenset({400, 409, 413, 422}) == REFUSED_STATUSES


@pytest.mark.parametrize(
    ("status", "state"),
    [
        (400, "refused"),
        (409, "refused"),
        (413, "refused"),
        (422, "refused"),
        (401, "failed"),
        (403, "failed"),
        (404, "failed"),
        (429, "failed"),
        (500, "failed"),
        (503, "failed"),
    ],
)
def test_an_error_answer_is_refused_when_it_is_about_the_record_else_failed(
    status: int, state: str
) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.error(status, operation="create"))

    exit_code, printed, stderr = run(store, records(2))

    by_line = {value["line"]: value for value in printed}
    assert (by_line[1]["status"], by_line[1]["error"]["status"]) == (state, status)
    assert by_line[2]["status"] == "created"
    assert exit_code == 1
    counts = "0 refused, 1 failed" if state == "failed" else "1 refused, 0 failed"
    assert f"pets create: 1 created, {counts}, 0 unknown, 0 invalid;" in stderr


@pytest.mark.parametrize(("concurrency", "bound"), [(1, 10), (4, 10), (5, 10), (8, 16)])
def test_a_run_gives_up_after_twice_its_concurrency_failures_in_a_row_ten_at_least(
    concurrency: int, bound: int
) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.error(500, operation="create", times=None))

    exit_code, printed, stderr = run(store, records(60), concurrency)

    # The calls in flight when the bound is reached end too; nothing is started after.
    assert bound <= creates(store) <= bound + concurrency - 1
    assert len(printed) == creates(store)
    assert {value["status"] for value in printed} == {"failed"}
    assert exit_code == 1
    latest = printed[-1]["error"]["message"]
    assert f"stopped early: the last {bound} records all failed (the latest: {latest}); " in stderr
    assert "the records not yet sent are left for a re-run" in stderr


@pytest.mark.parametrize(
    "between",
    [
        pytest.param(Fault.delay(0, operation="create"), id="created"),  # answered: created
        pytest.param(Fault.error(400, operation="create"), id="refused"),
    ],
)
def test_an_answer_about_the_record_starts_the_count_of_failures_again(between: Fault) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    # The faults apply in turn: 9 failures, the answer, 9 failures; the rest are created.
    store.inject(
        Fault.error(500, operation="create", times=9),
        between,
        Fault.error(500, operation="create", times=9),
    )

    exit_code, printed, stderr = run(store, records(25))

    assert creates(store) == 25
    assert [value["status"] for value in printed][:20] == ["failed"] * 9 + [
        "refused" if between.kind == "error" else "created"
    ] + ["failed"] * 9 + ["created"]
    assert "stopped early" not in stderr
    assert exit_code == 1


def test_no_answer_at_all_is_unknown_exit_3() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.drop(processed=True, operation="create"))

    exit_code, printed, stderr = run(store, records(2))

    by_line = {value["line"]: value for value in printed}
    assert by_line[1]["status"] == "unknown"
    assert by_line[1]["error"]["code"] == "connection_error"
    assert by_line[2]["status"] == "created"
    assert exit_code == 3
    assert "answer lost for 1 record(s), which may have been created: line(s) 1" in stderr


@pytest.mark.parametrize(
    ("tally", "stopped", "expected"),
    [
        (Tally(created=3), None, 0),
        (Tally(invalid=1), None, 2),
        (Tally(refused_earlier=1, invalid=1), None, 1),
        (Tally(refused=1, invalid=1), None, 1),
        (Tally(failed=1, invalid=1), None, 1),
        (Tally(unknown=1, failed=1, invalid=1), None, 3),
        (Tally(unknown=1), 130, 130),
        (Tally(unknown=1), 143, 143),
        (Tally(unknown=1), 129, 129),
        (Tally(unknown=1), 141, 141),
        (Tally(unknown=1), 4, 4),
        (Tally(unknown=1), 2, 2),
        # Stopped for another reason (the failures in a row): the outcomes decide.
        (Tally(failed=1), 1, 1),
        (Tally(unknown=1), 3, 3),
        (Tally(created=1), 3, 0),
        # Every record created, but some resent after a send that may have created them.
        (Tally(created=2, resent=array("q", [1])), None, 5),
        (Tally(created_earlier=2, resent_earlier=array("q", [1])), None, 5),
        (Tally(created=2, resent=array("q", [1])), 3, 5),
        # A worse outcome, or a stop, says more than the doubt: the lines are listed anyway.
        (Tally(created=1, invalid=1, resent=array("q", [1])), None, 2),
        (Tally(created=1, failed=1, resent=array("q", [1])), None, 1),
        (Tally(unknown=1, resent=array("q", [1])), None, 3),
        (Tally(created=1, resent=array("q", [1])), 130, 130),
        (Tally(created=1, resent=array("q", [1])), 141, 141),
    ],
)
def test_the_exit_status_is_what_stopped_the_run_else_the_worst_outcome(
    tally: Tally, stopped: int | None, expected: int
) -> None:
    assert exit_status(tally, stopped) == expected


@pytest.mark.parametrize(
    ("state", "status", "maybe"),
    [
        (STARTED, None, True),
        (UNKNOWN, None, True),
        (FAILED, 500, True),
        (FAILED, 502, True),
        (FAILED, 599, True),
        (FAILED, 503, False),
        (FAILED, 499, False),
        (FAILED, 429, False),
        (FAILED, None, False),
        (UNSENT, None, False),
        (REFUSED, 500, False),
        (CREATED, None, False),
    ],
)
def test_a_record_may_have_been_created_when_sent_and_its_answer_lost_or_a_server_error(
    state: str, status: int | None, maybe: bool
) -> None:
    error = None if status is None else {"code": "x", "message": "x", "status": status}
    assert _maybe_created(Entry(1, "k", "d", state, error=error)) is maybe


def test_a_server_error_status_that_is_no_number_is_no_sign_of_a_create() -> None:
    error = {"code": "x", "message": "x", "status": "500"}
    assert _maybe_created(Entry(1, "k", "d", FAILED, error=error)) is False


def test_an_invalid_line_is_printed_with_an_error_of_the_apis_error_shape() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))

    exit_code, printed, _ = run(store, b'{"name": "Rex"}\n')

    assert printed == [
        {
            "line": 1,
            "status": "invalid",
            "error": {
                "code": "invalid_record",
                "message": "$.categoryId: required field is missing",
                "status": None,
            },
        }
    ]
    assert exit_code == 2
    assert creates(store) == 0


def test_calls_cut_short_by_a_second_signal_are_unknown_with_an_interrupted_error() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.delay(60, operation="create", times=2))
    stream = io.BytesIO(records(4))
    stdout, stderr = io.StringIO(), io.StringIO()

    async def go() -> int:
        async with store.async_client(max_retries=0) as client:
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(client, NoJournal(), 2, stdout, progress)
            running = asyncio.ensure_future(bulk.run(read_records(stream, "jsonl"), stream))
            while creates(store) < 2:  # both calls in flight, held by the delay
                await asyncio.sleep(0.005)
            bulk.interrupt(signal.SIGINT)
            bulk.interrupt(signal.SIGINT)
            return await asyncio.wait_for(running, 30)

    exit_code = asyncio.run(go())

    printed = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert exit_code == 130
    assert sorted(value["line"] for value in printed) == [1, 2]
    for value in printed:
        assert value["status"] == "unknown"
        assert value["error"] == {
            "code": "interrupted",
            "message": (
                "the run was interrupted while the call was in flight: its answer is unknown"
            ),
            "status": None,
        }
    assert (
        "interrupted: waiting for the calls in flight to end; Ctrl-C again to stop waiting "
        "(their records are then resent by a re-run)\n"
    ) in stderr.getvalue()
    assert "stopped early: interrupted (Ctrl-C)" in stderr.getvalue()


def test_a_signal_while_a_pipe_has_nothing_to_read_ends_the_run_at_once() -> None:
    # The input's writer keeps the pipe open and sends nothing more: the run waits for the
    # next record until the signal, which must wake it. Its reader is left in the read (the
    # run does not close the input under it) until the writer is done.
    store = FakeAnimalStore(api_keys=(KEY,))
    read_end, write_end = os.pipe()
    os.write(write_end, records(2))
    stdout, stderr = io.StringIO(), io.StringIO()

    async def go() -> tuple[int, list[bool]]:
        with open(read_end, "rb") as stream:
            async with store.async_client(max_retries=0) as client:
                progress = Progress(stderr, bar=False, fraction=lambda: None)
                bulk = Bulk(client, NoJournal(), 1, stdout, progress)
                running = asyncio.ensure_future(bulk.run(read_records(stream, "jsonl"), stream))
                while len(store.pets) < 2:
                    await asyncio.sleep(0.005)
                bulk.interrupt(signal.SIGTERM)
                status = await asyncio.wait_for(running, 30)
            reading = [bulk.reading]
            os.close(write_end)  # the end of the input: the reader is done
            while bulk.reading:
                await asyncio.sleep(0.005)
            reading.append(bulk.reading)
        return status, reading

    assert asyncio.run(go()) == (143, [True, False])
    assert len(stdout.getvalue().splitlines()) == 2
    assert "stopped early: terminated (SIGTERM)" in stderr.getvalue()


class FailingJournal(NoJournal):
    """A journal whose first ``works`` writes succeed and every later one fails."""

    def __init__(self, works: int) -> None:
        self.works = works
        self.writes: list[list[Entry]] = []

    def append(self, *entries: Entry) -> int:
        self.writes.append(list(entries))
        if len(self.writes) > self.works:
            raise OSError(28, "No space left on device")
        return 1


class Full(io.StringIO):
    """A stdout on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


def run_from_file(
    tmp_path: Path,
    journal: NoJournal,
    stdout: io.StringIO,
    concurrency: int,
    store: FakeAnimalStore | None = None,
    signum: int = 0,
) -> tuple[int, Bulk, str]:
    """Run ``Bulk`` over 5 records read from a file (so a group at a time: all 5 at once).

    With ``signum``: sent once the run has stopped for another reason, while a call is in
    flight.
    """
    store = FakeAnimalStore(api_keys=(KEY,)) if store is None else store
    (tmp_path / "pets.jsonl").write_bytes(records(5))
    stderr = io.StringIO()

    async def go() -> tuple[int, Bulk]:
        with open(tmp_path / "pets.jsonl", "rb") as stream:
            async with store.async_client(max_retries=0) as client:
                progress = Progress(stderr, bar=False, fraction=lambda: None)
                bulk = Bulk(client, journal, concurrency, stdout, progress)
                running = asyncio.ensure_future(bulk.run(read_records(stream, "jsonl"), stream))
                if signum:
                    while bulk.stop is None:
                        await asyncio.sleep(0.005)
                    bulk.interrupt(signum)
                return await asyncio.wait_for(running, 30), bulk

    status, bulk = asyncio.run(go())
    return status, bulk, stderr.getvalue()


def test_a_journal_that_fails_stops_the_run_with_4_and_the_records_left_are_not_sent(
    tmp_path: Path,
) -> None:
    journal = FailingJournal(works=1)

    status, _, stderr = run_from_file(tmp_path, journal, io.StringIO(), concurrency=1)

    assert status == 4
    # The keys, then the first outcome, which failed: the four left were then journaled
    # unsent, which failed too, quietly: the first failure is the one told.
    assert [[entry.state for entry in write] for write in journal.writes] == [
        ["started"] * 5,
        ["created"],
        ["unsent"],
        ["unsent"],
        ["unsent"],
        ["unsent"],
    ]
    assert "stopped early: cannot write the journal: No space left on device" in stderr


def two_calls_in_flight() -> FakeAnimalStore:
    """A store whose first create answers after 0.05 s, the second after 0.3 s."""
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.delay(0.05, operation="create"), Fault.delay(0.3, operation="create"))
    return store


def test_the_first_reason_to_stop_is_kept_unless_a_signal_comes(tmp_path: Path) -> None:
    # The first outcome is journaled but cannot be printed (stdout is full); the second, which
    # was in flight meanwhile, cannot be journaled either. The stop stays stdout's.
    status, bulk, _ = run_from_file(
        tmp_path, FailingJournal(works=2), Full(), 2, two_calls_in_flight()
    )
    assert status == 4
    assert bulk.stop is not None
    assert bulk.stop.message == "cannot write to stdout: No space left on device"

    # A signal that comes after, while the second call is still in flight, outranks it.
    status, bulk, _ = run_from_file(
        tmp_path, FailingJournal(works=2), Full(), 2, two_calls_in_flight(), signal.SIGHUP
    )
    assert status == 129
    assert bulk.stop is not None
    assert bulk.stop.message == "hung up (SIGHUP)"


@pytest.mark.parametrize(
    ("content", "line", "has"),
    [
        (b"", 1, False),
        (b"a\nb\nc\n", 3, True),
        (b"a\nb\nc\n", 4, False),
        (b"a\nb\nc", 3, True),  # a last line without its line end
        (b"a\nb\nc", 4, False),
        (b"x" * (3 << 20) + b"\n" + b"y\n" * 5, 6, True),  # past the first piece read
        (b"x" * (3 << 20) + b"\n" + b"y\n" * 5, 7, False),
        (b"y\n" * 700_000, 700_000, True),  # newlines in several pieces
        (b"y\n" * 700_000, 700_001, False),
    ],
)
def test_whether_a_file_has_a_line_is_read_from_where_the_input_starts(
    tmp_path: Path, content: bytes, line: int, has: bool
) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"skipped\n" + content)
    with open(path, "rb") as stream:
        assert _has_line(stream, len(b"skipped\n"), line) is has


def test_a_record_resent_and_then_left_unsent_keeps_its_mark(tmp_path: Path) -> None:
    # Line 2's answer was lost once (it may exist), then a resend of it was journaled unsent
    # (a stop): it still may exist twice. Taken again and stopped again before it is sent
    # (Ctrl-C while line 1 is in flight), its new entry must say so, or a later run would list
    # it as clean.
    source = tmp_path / "pets.jsonl"
    source.write_bytes(records(2))
    second = list(read_records(io.BytesIO(records(2)), "jsonl"))[1]
    assert isinstance(second, Record)
    header = Header("http://127.0.0.1:1/v1", str(source), "jsonl")
    journal = Journal.open(str(tmp_path / "journal"), header)
    journal.append(Entry(2, "key-2", second.digest, UNSENT, resent=True))
    journal.close()
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.delay(0.3, operation="create"))
    stdout, stderr = io.StringIO(), io.StringIO()

    async def go() -> int:
        async with store.async_client(max_retries=0) as client:
            opened = Journal.open(str(tmp_path / "journal"), header)
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(client, opened, 1, stdout, progress)
            with open(source, "rb") as stream:
                running = asyncio.ensure_future(bulk.run(read_records(stream, "jsonl"), stream))
                while creates(store) < 1:
                    await asyncio.sleep(0.005)
                bulk.interrupt(signal.SIGINT)
                return await asyncio.wait_for(running, 30)

    assert asyncio.run(go()) == 130
    assert creates(store) == 1
    entries = [json.loads(line) for line in (tmp_path / "journal").read_bytes().splitlines()]
    assert entries[-1] == {
        "line": 2,
        "key": "key-2",
        "digest": second.digest,
        "state": "unsent",
        "resent": True,
    }


class HeldCreates:
    """An ``AsyncClient`` stand-in whose creates each wait until the test releases them."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.release = asyncio.Event()
        self.keys: list[str] = []

    async def create_pet(
        self, *, name: str, category_id: int, status: object, idempotency_key: str
    ) -> Pet:
        self.keys.append(idempotency_key)
        self.called.set()
        await self.release.wait()
        return Pet(id=len(self.keys), name=name, category_id=category_id)


@pytest.mark.parametrize("state", [STARTED, UNKNOWN])
def test_a_stop_leaves_an_earlier_runs_record_in_doubt_as_the_journal_has_it(
    tmp_path: Path, state: str
) -> None:
    # Line 2 was sent by an earlier run and its answer lost (or never waited for): it may
    # exist. Stopped (Ctrl-C while line 1 is in flight) before this run sends it again, its
    # last entry must stay the earlier one: journaled unsent, a later run would resend it as
    # never sent and no longer list it among the records that may exist twice.
    source = tmp_path / "pets.jsonl"
    source.write_bytes(records(2))
    first, second = read_records(io.BytesIO(records(2)), "jsonl")
    assert isinstance(first, Record)
    assert isinstance(second, Record)
    header = Header("http://127.0.0.1:1/v1", str(source), "jsonl")
    earlier = Entry(2, "key-2", second.digest, state)
    journal = Journal.open(str(tmp_path / "journal"), header)
    journal.append(earlier)
    journal.close()
    client = HeldCreates()

    async def go() -> int:
        opened = Journal.open(str(tmp_path / "journal"), header)
        progress = Progress(io.StringIO(), bar=False, fraction=lambda: None)
        bulk = Bulk(cast(AsyncClient, client), opened, 1, io.StringIO(), progress)
        with open(source, "rb") as stream:
            running = asyncio.ensure_future(bulk.run(read_records(stream, "jsonl"), stream))
            await asyncio.wait_for(client.called.wait(), 10)  # line 1 in flight
            bulk.interrupt(signal.SIGINT)
            client.release.set()
            return await asyncio.wait_for(running, 10)

    assert asyncio.run(go()) == 130
    [key] = client.keys  # line 1's: line 2 was not sent
    _, *entries = [json.loads(line) for line in (tmp_path / "journal").read_bytes().splitlines()]
    assert entries == [
        earlier.to_json(),
        {"line": 1, "key": key, "digest": first.digest, "state": "started"},
        {
            "line": 1,
            "key": key,
            "digest": first.digest,
            "state": "created",
            "pet": {"id": 1, "name": "pet-1", "categoryId": 1},
        },
    ]


def test_each_outcome_is_counted_in_the_summary() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(
        Fault.error(422, operation="create", times=2),
        Fault.error(500, operation="create", times=2),
        Fault.drop(processed=False, operation="create", times=2),
    )

    exit_code, printed, stderr = run(store, records(8) + b"[]\n{}\n")

    assert [value["status"] for value in printed] == (
        ["refused"] * 2 + ["failed"] * 2 + ["unknown"] * 2 + ["created"] * 2 + ["invalid"] * 2
    )
    assert stderr.startswith("pets create: 2 created, 2 refused, 2 failed, 2 unknown, 2 invalid;")
    assert "answer lost for 2 record(s), which may have been created: line(s) 5, 6;" in stderr
    assert exit_code == 3


@pytest.mark.parametrize(
    ("signum", "said", "again"),
    [
        (signal.SIGINT, "interrupted", "Ctrl-C again"),
        (signal.SIGTERM, "terminated (SIGTERM)", "another signal"),
        (signal.SIGHUP, "hung up (SIGHUP)", "another signal"),
    ],
)
def test_the_first_signal_says_how_to_stop_waiting(signum: int, said: str, again: str) -> None:
    stderr = io.StringIO()
    bulk = Bulk(
        FakeAnimalStore(api_keys=(KEY,)).async_client(),
        NoJournal(),
        1,
        io.StringIO(),
        Progress(stderr, bar=False, fraction=lambda: None),
    )

    bulk.interrupt(signum)

    assert stderr.getvalue() == (
        f"{said}: waiting for the calls in flight to end; {again} to stop waiting "
        "(their records are then resent by a re-run)\n"
    )


def test_how_much_of_the_input_is_read_is_known_for_a_file_only(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"x" * 200)
    with open(path, "rb") as stream:
        fraction = _fraction_read(stream)
        assert fraction() == 0.0
        stream.read(50)
        assert fraction() == 0.25
        stream.seek(400)  # past the size it had: never more than all of it
        assert fraction() == 1.0
    (tmp_path / "empty").write_bytes(b"")
    with open(tmp_path / "empty", "rb") as empty:
        assert _fraction_read(empty)() is None
    read_end, write_end = os.pipe()
    with open(read_end, "rb") as pipe, open(write_end, "wb"):
        assert _fraction_read(pipe)() is None
    # Nor for a stream that is no file: its size is not even asked (a macOS pipe has one, the
    # bytes waiting in it; an in-memory stream has no descriptor to ask).
    assert _fraction_read(io.BytesIO(b"x" * 200))() is None


class LoopWithoutSignals(asyncio.SelectorEventLoop):
    """A loop that cannot take signal handlers, as on Windows."""

    def add_signal_handler(self, sig: int, callback: Any, *args: Any) -> None:  # type: ignore[override]
        raise NotImplementedError


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("loop_class", [asyncio.SelectorEventLoop, LoopWithoutSignals])
def test_each_stopping_signal_reaches_the_run_but_an_ignored_one_and_the_callers_come_back(
    loop_class: type[asyncio.AbstractEventLoop],
) -> None:
    received: list[int] = []

    def callers(signum: int, frame: object) -> None:
        raise AssertionError("the run's handler should have had it")

    before = {
        signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),  # a background job's
        signal.SIGTERM: signal.signal(signal.SIGTERM, callers),
        signal.SIGHUP: signal.signal(signal.SIGHUP, callers),
    }
    loop = loop_class()
    try:
        restore = _handle_signals(loop, received.append)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.raise_signal(signum)
        loop.run_until_complete(asyncio.sleep(0.05))  # the loop delivers them
        restore()
        after = {signum: signal.getsignal(signum) for signum in before}
    finally:
        loop.close()
        for signum, handler in before.items():
            signal.signal(signum, handler)

    assert received == [signal.SIGTERM, signal.SIGHUP]
    assert after == {signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: callers, signal.SIGHUP: callers}


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("loop_class", [asyncio.SelectorEventLoop, LoopWithoutSignals])
def test_an_ignored_sigint_stays_ignored_while_the_run_lasts(
    loop_class: type[asyncio.AbstractEventLoop],
) -> None:
    # A background job's SIGINT is ignored: a Ctrl-C meant for the shell's foreground job
    # must not stop the run. Raised before a SIGTERM, it would reach the handler first.
    received: list[int] = []
    missed: list[int] = []  # what reached the test's own handler instead of the run's
    before = {
        signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),
        signal.SIGTERM: signal.signal(signal.SIGTERM, lambda signum, _: missed.append(signum)),
    }
    loop = loop_class()
    try:
        terminated = loop.create_future()

        def handler(signum: int) -> None:
            received.append(signum)
            if signum == signal.SIGTERM:
                terminated.set_result(None)

        restore = _handle_signals(loop, handler)
        during = signal.getsignal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)
        loop.run_until_complete(asyncio.wait_for(terminated, 10))  # a hang's bound only
        restore()
        after = signal.getsignal(signal.SIGINT)
    finally:
        loop.close()
        for signum, previous in before.items():
            signal.signal(signum, previous)

    assert during is signal.SIG_IGN
    assert (received, missed) == ([signal.SIGTERM], [])
    assert after is signal.SIG_IGN


class BrokenPipeOut(io.StringIO):
    """A stdout whose reader is gone (`| head`)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


class FailsAtFlush(io.StringIO):
    """A stdout that takes the lines and fails when they are flushed: ``error``."""

    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error: OSError | None = error

    def flush(self) -> None:
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        # Collected, it is closed, which flushes: the failure is the run's, not the GC's.
        self.error = None
        super().close()


class FailsAtSecondFlush(io.StringIO):
    """A stdout whose first flush (the first line's) works, and the last one fails: ``error``."""

    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error: OSError | None = error
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        if self.flushes > 1 and self.error is not None:
            raise self.error

    def close(self) -> None:
        self.error = None  # as FailsAtFlush's
        super().close()


class UnreadableInput(io.BytesIO):
    """An input that fails on its second read (a disk error)."""

    reads = 0

    def readline(self, size: int | None = -1, /) -> bytes:
        self.reads += 1
        if self.reads > 1:
            raise OSError(5, "Input/output error")
        return super().readline(size)


class JournalFailing(NoJournal):
    """A journal that fails at ``where``: its append, its flush to disk or its close."""

    def __init__(self, where: str) -> None:
        self.where = where

    def append(self, *entries: Entry) -> int:
        if self.where == "append":
            raise OSError(28, "No space left on device")
        return 1

    async def durable(self, ticket: int) -> None:
        if self.where == "durable":
            raise OSError(5, "Input/output error")

    def close(self) -> None:
        if self.where == "close":
            raise OSError(28, "No space left on device")


@pytest.mark.parametrize(
    ("stdout", "stream", "journal", "status", "message"),
    [
        (BrokenPipeOut(), None, NoJournal(), 141, "stdout was closed"),
        (
            FailsAtFlush(BrokenPipeError(32, "Broken pipe")),
            None,
            NoJournal(),
            141,
            "stdout was closed",
        ),
        (
            FailsAtFlush(OSError(28, "No space left on device")),
            None,
            NoJournal(),
            4,
            "cannot write to stdout: No space left on device",
        ),
        (
            io.StringIO(),
            UnreadableInput(records(3)),
            NoJournal(),
            2,
            "cannot read the input: Input/output error",
        ),
        (
            io.StringIO(),
            None,
            JournalFailing("append"),
            4,
            "cannot write the journal: No space left on device",
        ),
        (
            io.StringIO(),
            None,
            JournalFailing("durable"),
            4,
            "cannot write the journal: Input/output error",
        ),
        (
            io.StringIO(),
            None,
            JournalFailing("close"),
            4,
            "cannot write the journal: No space left on device",
        ),
        # The lines after the first wait in the buffer (a flush every 0.1 s): the one at the
        # end fails.
        (
            FailsAtSecondFlush(BrokenPipeError(32, "Broken pipe")),
            None,
            NoJournal(),
            141,
            "stdout was closed",
        ),
        (
            FailsAtSecondFlush(OSError(28, "No space left on device")),
            None,
            NoJournal(),
            4,
            "cannot write to stdout: No space left on device",
        ),
        # Nothing to print (an empty input): only the flush at the end meets stdout's failure.
        (
            FailsAtFlush(BrokenPipeError(32, "Broken pipe")),
            io.BytesIO(b""),
            NoJournal(),
            141,
            "stdout was closed",
        ),
        (
            FailsAtFlush(OSError(28, "No space left on device")),
            io.BytesIO(b""),
            NoJournal(),
            4,
            "cannot write to stdout: No space left on device",
        ),
    ],
    ids=[
        "stdout gone",
        "gone at flush",
        "stdout full",
        "input",
        "append",
        "flush",
        "close",
        "gone at the last flush",
        "full at the last flush",
        "gone at the only flush",
        "full at the only flush",
    ],
)
def test_each_failure_to_read_or_write_stops_the_run_with_its_status_and_reason(
    stdout: io.StringIO,
    stream: io.BytesIO | None,
    journal: NoJournal,
    status: int,
    message: str,
) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    stream = io.BytesIO(records(3)) if stream is None else stream
    stderr = io.StringIO()

    async def go() -> tuple[int, Bulk]:
        async with store.async_client(max_retries=0) as client:
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(client, journal, 1, stdout, progress)
            return await bulk.run(read_records(stream, "jsonl"), stream), bulk

    exit_code, bulk = asyncio.run(go())

    assert exit_code == status
    assert bulk.stop is not None
    assert (bulk.stop.message, bulk.stop.status) == (message, status)
    assert f"stopped early: {message}\n" in stderr.getvalue()


class Watched(io.StringIO):
    """A stdout, a terminal or not, that notes each write and each flush in ``events``."""

    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal
        self.events: list[str] = []

    def isatty(self) -> bool:
        return self.terminal

    def write(self, text: str) -> int:
        self.events.append("write")
        return super().write(text)

    def flush(self) -> None:
        self.events.append("flush")
        super().flush()


def run_watched(
    store: FakeAnimalStore,
    count: int,
    stdout: Watched,
    clock: list[float],
    monkeypatch: pytest.MonkeyPatch,
) -> int:
    """Run ``Bulk`` over ``count`` records, one call at a time; the run's clock reads ``clock``.

    Only the run's own clock is set (what each printed line reads), not the loop's.
    """
    readings = iter(clock)
    monkeypatch.setattr(bulk_module, "time", SimpleNamespace(monotonic=lambda: next(readings)))
    stream = io.BytesIO(records(count))

    async def go() -> int:
        async with store.async_client(max_retries=0) as client:
            progress = Progress(io.StringIO(), bar=False, fraction=lambda: None)
            bulk = Bulk(client, NoJournal(), 1, stdout, progress)
            return await bulk.run(read_records(stream, "jsonl"), stream)

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("terminal", "events"),
    [
        # To a pipe or a file: flushed once 0.1 s have passed since the last flush (0 at first),
        # and at the end.
        (False, ["write", "write", "flush", "write", "flush"]),
        # To a terminal: each line at once.
        (True, ["write", "flush", "write", "flush", "write", "flush", "flush"]),
    ],
    ids=["pipe", "terminal"],
)
def test_the_lines_are_flushed_every_tenth_of_a_second_or_each_at_once_to_a_terminal(
    monkeypatch: pytest.MonkeyPatch, terminal: bool, events: list[str]
) -> None:
    stdout = Watched(terminal)

    # The lines at 0.05 s (0.05 since 0: waits), 0.1 (0.1 since 0: flushed), 0.15 (0.05 since).
    status = run_watched(
        FakeAnimalStore(api_keys=(KEY,)), 3, stdout, [0.05, 0.1, 0.15], monkeypatch
    )

    assert status == 0
    assert stdout.events == events
    assert [json.loads(line)["line"] for line in stdout.getvalue().splitlines()] == [1, 2, 3]


def test_a_run_that_gives_up_flushes_the_lines_it_printed_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.error(500, operation="create", times=None))
    stdout = Watched(terminal=False)

    # Every line within 0.1 s of the start: none is flushed as it is printed.
    status = run_watched(store, 12, stdout, [0.05] * 12, monkeypatch)

    assert status == 1
    assert stdout.events == ["write"] * 10 + ["flush"]


def test_a_record_without_a_key_of_its_own_gets_a_new_one(tmp_path: Path) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))

    _, printed, _ = run(store, records(3))

    keys = [request.headers["idempotency-key"] for request in store.requests]
    assert sorted(keys) == sorted(value["idempotency_key"] for value in printed)
    assert len(set(keys)) == 3
    assert all(str(uuid.UUID(key, version=4)) == key for key in keys)


def test_the_journal_is_logged_at_the_end_of_a_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = tmp_path / "pets.jsonl"
    source.write_bytes(records(3))
    path = str(tmp_path / "journal")
    stdout, stderr = io.StringIO(), io.StringIO()

    async def go() -> int:
        store = FakeAnimalStore(api_keys=(KEY,))
        async with store.async_client(max_retries=0) as client:
            journal = Journal.open(path, Header(client.base_url, str(source), "jsonl"))
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(client, journal, 1, stdout, progress)
            with open(source, "rb") as stream:
                return await bulk.run(read_records(stream, "jsonl"), stream)

    with caplog.at_level(logging.DEBUG, logger="animalstore_client.cli"):
        assert asyncio.run(go()) == 0

    [record] = [r for r in caplog.records if r.name == "animalstore_client.cli"]
    # 3 keys started, 3 outcomes; to disk twice: the keys together, then all at the close.
    assert record.getMessage() == f"journal {path}: 6 entries written, 2 flushes to disk"


def test_with_no_journal_nothing_about_one_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="animalstore_client.cli"):
        run(FakeAnimalStore(api_keys=(KEY,)), records(1))

    assert [r for r in caplog.records if r.name == "animalstore_client.cli"] == []


def test_a_signal_after_the_run_is_over_is_let_go() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    stream = io.BytesIO(records(1))
    stderr = io.StringIO()

    async def go() -> Bulk:
        async with store.async_client(max_retries=0) as client:
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(client, NoJournal(), 1, io.StringIO(), progress)
            assert await bulk.run(read_records(stream, "jsonl"), stream) == 0
            return bulk

    bulk = asyncio.run(go())
    summary = stderr.getvalue()
    bulk.interrupt(signal.SIGINT)

    assert stderr.getvalue() == summary
    assert bulk.stop is None
