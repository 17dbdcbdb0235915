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
from collections.abc import Callable, Iterator
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
    _signals_held,
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
from tests.cli.bulk_harness import KEY, creates, records, records_file, run_bulk, stop_when

#: The server a journal of these tests names (the runs' own client calls the store in process).
JOURNALED_URL = "http://127.0.0.1:1/v1"


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

    ran = run_bulk(records(2), store=store)

    by_line = {value["line"]: value for value in ran.printed}
    assert (by_line[1]["status"], by_line[1]["error"]["status"]) == (state, status)
    assert by_line[2]["status"] == "created"
    assert ran.status == 1
    counts = "0 refused, 1 failed" if state == "failed" else "1 refused, 0 failed"
    assert f"pets create: 1 created, {counts}, 0 unknown, 0 invalid;" in ran.stderr


@pytest.mark.parametrize(("concurrency", "bound"), [(1, 10), (4, 10), (5, 10), (8, 16)])
def test_a_run_gives_up_after_twice_its_concurrency_failures_in_a_row_ten_at_least(
    concurrency: int, bound: int
) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.error(500, operation="create", times=None))

    ran = run_bulk(records(60), store=store, concurrency=concurrency)

    # The calls in flight when the bound is reached end too; nothing is started after.
    assert bound <= creates(store) <= bound + concurrency - 1
    assert len(ran.printed) == creates(store)
    assert {value["status"] for value in ran.printed} == {"failed"}
    assert ran.status == 1
    latest = ran.printed[-1]["error"]["message"]
    assert (
        f"stopped early: the last {bound} records all failed (the latest: {latest}); " in ran.stderr
    )
    assert "the records not yet sent are left for a re-run" in ran.stderr


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

    ran = run_bulk(records(25), store=store)

    assert creates(store) == 25
    assert [value["status"] for value in ran.printed][:20] == ["failed"] * 9 + [
        "refused" if between.kind == "error" else "created"
    ] + ["failed"] * 9 + ["created"]
    assert "stopped early" not in ran.stderr
    assert ran.status == 1


def test_no_answer_at_all_is_unknown_exit_3() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.drop(processed=True, operation="create"))

    ran = run_bulk(records(2), store=store)

    by_line = {value["line"]: value for value in ran.printed}
    assert by_line[1]["status"] == "unknown"
    assert by_line[1]["error"]["code"] == "connection_error"
    assert by_line[2]["status"] == "created"
    assert ran.status == 3
    assert "answer lost for 1 record(s), which may have been created: line(s) 1" in ran.stderr


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

    ran = run_bulk(b'{"name": "Rex"}\n', store=store)

    assert ran.printed == [
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
    assert ran.status == 2
    assert creates(store) == 0


def test_calls_cut_short_by_a_second_signal_are_unknown_with_an_interrupted_error() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.delay(60, operation="create", times=2))

    # Both calls in flight, held by the delay: Ctrl-C twice.
    ran = run_bulk(
        records(4),
        store=store,
        concurrency=2,
        during=stop_when(lambda _: creates(store) >= 2, signal.SIGINT, signal.SIGINT),
    )

    assert ran.status == 130
    assert sorted(value["line"] for value in ran.printed) == [1, 2]
    for value in ran.printed:
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
    ) in ran.stderr
    assert "stopped early: interrupted (Ctrl-C)" in ran.stderr


def test_a_signal_while_a_pipe_has_nothing_to_read_ends_the_run_at_once() -> None:
    # The input's writer keeps the pipe open and sends nothing more: the run waits for the
    # next record until the signal, which must wake it. Its reader is left in the read (the
    # run does not close the input under it) until the writer is done.
    store = FakeAnimalStore(api_keys=(KEY,))
    read_end, write_end = os.pipe()
    os.write(write_end, records(2))
    reading: list[bool] = []

    async def end_the_input(bulk: Bulk) -> None:
        reading.append(bulk.reading)
        os.close(write_end)  # the end of the input: the reader is done
        while bulk.reading:
            await asyncio.sleep(0.005)
        reading.append(bulk.reading)

    with open(read_end, "rb") as stream:
        ran = run_bulk(
            stream,
            store=store,
            during=stop_when(lambda _: len(store.pets) >= 2, signal.SIGTERM),
            after=end_the_input,
        )

    assert (ran.status, reading) == (143, [True, False])
    assert len(ran.printed) == 2
    assert "stopped early: terminated (SIGTERM)" in ran.stderr


class FailingJournal(NoJournal):
    """A journal that fails at ``where``: an append once ``works`` appends have succeeded,
    its flush to disk, or its close. Every append's entries are kept in ``writes``."""

    def __init__(self, where: str = "append", works: int = 0) -> None:
        self.where = where
        self.works = works
        self.writes: list[list[Entry]] = []

    def append(self, *entries: Entry) -> int:
        self.writes.append(list(entries))
        if self.where == "append" and len(self.writes) > self.works:
            raise disk_full()
        return 1

    async def durable(self, ticket: int) -> None:
        if self.where == "durable":
            raise OSError(5, "Input/output error")

    def close(self) -> None:
        if self.where == "close":
            raise disk_full()


def disk_full() -> OSError:
    return OSError(28, "No space left on device")


def broken_pipe() -> OSError:
    return BrokenPipeError(32, "Broken pipe")


class FailsToWrite(io.StringIO):
    """A stdout whose every write fails with ``error``: a full disk, a reader gone (``| head``)."""

    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def write(self, text: str) -> int:
        raise self.error


def test_a_journal_that_fails_stops_the_run_with_4_and_the_records_left_are_not_sent(
    tmp_path: Path,
) -> None:
    journal = FailingJournal(works=1)

    ran = run_bulk(records_file(tmp_path, 5), journal=journal)  # read at once, the 5 together

    assert ran.status == 4
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
    assert "stopped early: cannot write the journal: No space left on device" in ran.stderr


@pytest.mark.parametrize(
    ("signals", "status", "message"),
    [
        ((), 4, "cannot write to stdout: No space left on device"),
        # A signal that comes after, while the second call is still in flight, outranks it.
        ((signal.SIGHUP,), 129, "hung up (SIGHUP)"),
    ],
    ids=["kept", "a signal after"],
)
def test_the_first_reason_to_stop_is_kept_unless_a_signal_comes(
    tmp_path: Path, signals: tuple[int, ...], status: int, message: str
) -> None:
    # The first outcome is journaled but cannot be printed (stdout is full); the second, which
    # was in flight meanwhile, cannot be journaled either. The stop stays stdout's.
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.delay(0.05, operation="create"), Fault.delay(0.3, operation="create"))

    ran = run_bulk(
        records_file(tmp_path, 5),  # read at once, the 5 together
        store=store,
        journal=FailingJournal(works=2),
        concurrency=2,
        stdout=FailsToWrite(disk_full()),
        during=stop_when(lambda bulk: bulk.stop is not None, *signals),
    )

    assert ran.status == status
    assert ran.bulk.stop is not None
    assert ran.bulk.stop.message == message


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


def an_earlier_run(tmp_path: Path, state: str, **fields: Any) -> tuple[Path, list[Record], Entry]:
    """A file of 2 records, and the journal of an earlier run whose last entry, line 2's, is in
    ``state``.

    Returns:
        The file, its records, and that entry. The journal, ``tmp_path/journal``, is closed.
    """
    source = records_file(tmp_path, 2)
    pets = list(read_records(io.BytesIO(records(2)), "jsonl"))
    assert all(isinstance(record, Record) for record in pets)
    taken = cast(list[Record], pets)
    earlier = Entry(2, "key-2", taken[1].digest, state, **fields)
    journal = Journal.open(str(tmp_path / "journal"), Header(JOURNALED_URL, str(source), "jsonl"))
    journal.append(earlier)
    journal.close()
    return source, taken, earlier


def reopened(tmp_path: Path, source: Path) -> Journal:
    """The journal of ``an_earlier_run``, opened again for this run."""
    return Journal.open(str(tmp_path / "journal"), Header(JOURNALED_URL, str(source), "jsonl"))


def test_a_record_resent_and_then_left_unsent_keeps_its_mark(tmp_path: Path) -> None:
    # Line 2's answer was lost once (it may exist), then a resend of it was journaled unsent
    # (a stop): it still may exist twice. Taken again and stopped again before it is sent
    # (Ctrl-C while line 1 is in flight), its new entry must say so, or a later run would list
    # it as clean.
    source, _, earlier = an_earlier_run(tmp_path, UNSENT, resent=True)
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.delay(0.3, operation="create"))

    ran = run_bulk(
        source,
        store=store,
        journal=reopened(tmp_path, source),
        during=stop_when(lambda _: creates(store) >= 1, signal.SIGINT),
    )

    assert ran.status == 130
    assert creates(store) == 1
    entries = [json.loads(line) for line in (tmp_path / "journal").read_bytes().splitlines()]
    assert entries[-1] == {
        "line": 2,
        "key": "key-2",
        "digest": earlier.digest,
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
    source, (first, _), earlier = an_earlier_run(tmp_path, state)
    client = HeldCreates()

    async def interrupt_line_1(bulk: Bulk) -> None:
        await client.called.wait()  # line 1 in flight
        bulk.interrupt(signal.SIGINT)
        client.release.set()

    ran = run_bulk(
        source,
        client=cast(AsyncClient, client),
        journal=reopened(tmp_path, source),
        during=interrupt_line_1,
    )

    assert ran.status == 130
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

    ran = run_bulk(records(8) + b"[]\n{}\n", store=store)

    assert [value["status"] for value in ran.printed] == (
        ["refused"] * 2 + ["failed"] * 2 + ["unknown"] * 2 + ["created"] * 2 + ["invalid"] * 2
    )
    assert ran.stderr.startswith(
        "pets create: 2 created, 2 refused, 2 failed, 2 unknown, 2 invalid;"
    )
    assert "answer lost for 2 record(s), which may have been created: line(s) 5, 6;" in ran.stderr
    assert ran.status == 3


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


@pytest.fixture(
    params=[asyncio.SelectorEventLoop, LoopWithoutSignals],
    ids=["SelectorEventLoop", "LoopWithoutSignals"],
)
def handled_loop(
    request: pytest.FixtureRequest,
) -> Iterator[Callable[[dict[int, Any]], asyncio.AbstractEventLoop]]:
    """Set the process's signal ``handlers``, then make a loop of each kind (POSIX only); after
    the test, the loop is closed and the handlers put back."""
    if not hasattr(signal, "SIGHUP"):
        pytest.skip("POSIX signals")
    before: dict[int, Any] = {}
    loops: list[asyncio.AbstractEventLoop] = []

    def make(handlers: dict[int, Any]) -> asyncio.AbstractEventLoop:
        for signum, handler in handlers.items():
            before.setdefault(signum, signal.signal(signum, handler))
        loops.append(request.param())
        return loops[-1]

    yield make
    for loop in loops:
        loop.close()
    for signum, handler in before.items():
        signal.signal(signum, handler)


def test_each_stopping_signal_reaches_the_run_but_an_ignored_one_and_the_callers_come_back(
    handled_loop: Callable[[dict[int, Any]], asyncio.AbstractEventLoop],
) -> None:
    received: list[int] = []

    def callers(signum: int, frame: object) -> None:
        raise AssertionError("the run's handler should have had it")

    caller_set: dict[int, Any] = {
        signal.SIGINT: signal.SIG_IGN,
        signal.SIGTERM: callers,
        signal.SIGHUP: callers,
    }
    loop = handled_loop(caller_set)  # SIGINT ignored: a background job's

    restore = _handle_signals(loop, received.append)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.raise_signal(signum)
    loop.run_until_complete(asyncio.sleep(0.05))  # the loop delivers them
    restore()

    assert received == [signal.SIGTERM, signal.SIGHUP]
    assert {signum: signal.getsignal(signum) for signum in caller_set} == caller_set


def test_an_ignored_sigint_stays_ignored_while_the_run_lasts(
    handled_loop: Callable[[dict[int, Any]], asyncio.AbstractEventLoop],
) -> None:
    # A background job's SIGINT is ignored: a Ctrl-C meant for the shell's foreground job
    # must not stop the run. Raised before a SIGTERM, it would reach the handler first.
    received: list[int] = []
    missed: list[int] = []  # what reached the test's own handler instead of the run's
    loop = handled_loop(
        {signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: lambda signum, _: missed.append(signum)}
    )
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

    assert during is signal.SIG_IGN
    assert (received, missed) == ([signal.SIGTERM], [])
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_signals_held_while_the_loop_is_built_are_caught_but_an_ignored_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Held while the run's event loop is built and closed: a signal then is kept for the run
    # to act on after, but an ignored SIGINT (a background job's) stays ignored there too.
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    missed: list[int] = []

    def terminated(signum: int, _frame: object) -> None:
        missed.append(signum)

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, terminated)
        with _signals_held() as caught:
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGTERM)
            during = signal.getsignal(signal.SIGINT)
        after = {signum: signal.getsignal(signum) for signum in before}
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
    assert (caught, missed, during) == ([signal.SIGTERM], [], signal.SIG_IGN)
    assert after == {signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: terminated}


class FailsAtFlush(io.StringIO):
    """A stdout that takes the lines and fails with ``error`` at each flush after the first
    ``works``."""

    def __init__(self, error: OSError, works: int = 0) -> None:
        super().__init__()
        self.error: OSError | None = error
        self.works = works
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        if self.flushes > self.works and self.error is not None:
            raise self.error

    def close(self) -> None:
        # Collected, it is closed, which flushes: the failure is the run's, not the GC's.
        self.error = None
        super().close()


class UnreadableInput(io.BytesIO):
    """An input that fails on its second read (a disk error)."""

    reads = 0

    def readline(self, size: int | None = -1, /) -> bytes:
        self.reads += 1
        if self.reads > 1:
            raise OSError(5, "Input/output error")
        return super().readline(size)


GONE = "stdout was closed"
FULL = "cannot write to stdout: No space left on device"


@pytest.mark.parametrize(
    ("stdout", "source", "journal", "status", "message"),
    [
        pytest.param(FailsToWrite(broken_pipe()), None, None, 141, GONE, id="stdout gone"),
        pytest.param(FailsAtFlush(broken_pipe()), None, None, 141, GONE, id="gone at flush"),
        pytest.param(FailsAtFlush(disk_full()), None, None, 4, FULL, id="stdout full"),
        pytest.param(
            None,
            UnreadableInput(records(3)),
            None,
            2,
            "cannot read the input: Input/output error",
            id="input",
        ),
        pytest.param(
            None,
            None,
            FailingJournal("append"),
            4,
            "cannot write the journal: No space left on device",
            id="append",
        ),
        pytest.param(
            None,
            None,
            FailingJournal("durable"),
            4,
            "cannot write the journal: Input/output error",
            id="flush",
        ),
        pytest.param(
            None,
            None,
            FailingJournal("close"),
            4,
            "cannot write the journal: No space left on device",
            id="close",
        ),
        # The lines after the first wait in the buffer (a flush every 0.1 s): the one at the
        # end fails.
        pytest.param(
            FailsAtFlush(broken_pipe(), works=1), None, None, 141, GONE, id="gone at the last flush"
        ),
        pytest.param(
            FailsAtFlush(disk_full(), works=1), None, None, 4, FULL, id="full at the last flush"
        ),
        # Nothing to print (an empty input): only the flush at the end meets stdout's failure.
        pytest.param(
            FailsAtFlush(broken_pipe()), b"", None, 141, GONE, id="gone at the only flush"
        ),
        pytest.param(FailsAtFlush(disk_full()), b"", None, 4, FULL, id="full at the only flush"),
    ],
)
def test_each_failure_to_read_or_write_stops_the_run_with_its_status_and_reason(
    stdout: io.StringIO | None,
    source: bytes | io.BytesIO | None,
    journal: NoJournal | None,
    status: int,
    message: str,
) -> None:
    ran = run_bulk(records(3) if source is None else source, journal=journal, stdout=stdout)

    assert ran.status == status
    assert ran.bulk.stop is not None
    assert (ran.bulk.stop.message, ran.bulk.stop.status) == (message, status)
    assert f"stopped early: {message}\n" in ran.stderr


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


def set_the_runs_clock(monkeypatch: pytest.MonkeyPatch, readings: list[float]) -> None:
    """Make the run's own clock (what each printed line reads, not the loop's) read ``readings``
    in turn."""
    clock = iter(readings)
    monkeypatch.setattr(bulk_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))


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
    set_the_runs_clock(monkeypatch, [0.05, 0.1, 0.15])

    ran = run_bulk(records(3), stdout=stdout)

    assert ran.status == 0
    assert stdout.events == events
    assert [value["line"] for value in ran.printed] == [1, 2, 3]


def test_a_run_that_gives_up_flushes_the_lines_it_printed_at_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = FakeAnimalStore(api_keys=(KEY,))
    store.inject(Fault.error(500, operation="create", times=None))
    stdout = Watched(terminal=False)
    # Every line within 0.1 s of the start: none is flushed as it is printed.
    set_the_runs_clock(monkeypatch, [0.05] * 12)

    ran = run_bulk(records(12), store=store, stdout=stdout)

    assert ran.status == 1
    assert stdout.events == ["write"] * 10 + ["flush"]


def test_a_record_without_a_key_of_its_own_gets_a_new_one() -> None:
    store = FakeAnimalStore(api_keys=(KEY,))

    ran = run_bulk(records(3), store=store)

    keys = [request.headers["idempotency-key"] for request in store.requests]
    assert sorted(keys) == sorted(value["idempotency_key"] for value in ran.printed)
    assert len(set(keys)) == 3
    assert all(str(uuid.UUID(key, version=4)) == key for key in keys)


def test_the_journal_is_logged_at_the_end_of_a_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = records_file(tmp_path, 3)
    path = str(tmp_path / "journal")
    journal = Journal.open(path, Header(JOURNALED_URL, str(source), "jsonl"))

    with caplog.at_level(logging.DEBUG, logger="animalstore_client.cli"):
        assert run_bulk(source, journal=journal).status == 0

    [record] = [r for r in caplog.records if r.name == "animalstore_client.cli"]
    # 3 keys started, 3 outcomes; to disk twice: the keys together, then all at the close.
    assert record.getMessage() == f"journal {path}: 6 entries written, 2 flushes to disk"


def test_with_no_journal_nothing_about_one_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="animalstore_client.cli"):
        run_bulk(records(1))

    assert [r for r in caplog.records if r.name == "animalstore_client.cli"] == []


def test_a_signal_after_the_run_is_over_is_let_go() -> None:
    ran = run_bulk(records(1))
    assert ran.status == 0

    summary = ran.stderr

    ran.bulk.interrupt(signal.SIGINT)

    assert ran.stderr == summary
    assert ran.bulk.stop is None
