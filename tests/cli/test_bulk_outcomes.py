"""The bulk loader's decisions, in process: each answer's outcome, when a run gives up, the exit.

``test_bulk.py`` runs the command for real; these drive ``Bulk`` itself against the store's
in-process client, so that every status of the table and every bound is cheap to check.
"""

from __future__ import annotations

import asyncio
import io
import json
import signal
from typing import Any

import pytest

from animalstore_client._cli.bulk import REFUSED_STATUSES, Bulk, _maybe_created, exit_status
from animalstore_client._cli.journal import (
    CREATED,
    FAILED,
    REFUSED,
    STARTED,
    UNKNOWN,
    UNSENT,
    Entry,
    NoJournal,
)
from animalstore_client._cli.progress import Progress, Tally
from animalstore_client._cli.records import read_records
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
    assert f"stopped early: the last {bound} records all failed (the latest: " in stderr
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
    assert "interrupted: waiting for the calls in flight to end; Ctrl-C again" in stderr.getvalue()
    assert "stopped early: interrupted (Ctrl-C)" in stderr.getvalue()
