"""What the command line advises, in its own words: flags, not Python arguments; what to run next.

Each message is pinned whole, in process: ``main()`` with stdout and stderr captured, against
the built-in store served on 127.0.0.1 where a call is made.
"""

from __future__ import annotations

import asyncio
import errno
import io
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from animalstore_client._cli import main
from animalstore_client._cli.bulk import Bulk
from animalstore_client._cli.journal import Header, Journal, NoJournal
from animalstore_client._cli.progress import Progress
from animalstore_client._cli.records import read_records
from animalstore_client.testing import FakeAnimalStore, Fault

KEY = "test-key"
LOST = (
    "failed: RemoteProtocolError: Server disconnected without sending a response.; the animal "
    "may have been created; not retried, as a create is retried only when it provably was not "
    "processed; "
)


@pytest.fixture
def served() -> Iterator[tuple[FakeAnimalStore, str]]:
    store = FakeAnimalStore(api_keys=(KEY,))
    with store.serve() as base_url:
        yield store, base_url


def create(base_url: str, *options: str) -> list[str]:
    return ["--base-url", base_url, "--api-key", KEY, *options, "pets", "create"]


def test_a_lost_create_names_the_flag_and_the_key_it_was_sent_with(
    served: tuple[FakeAnimalStore, str], capsys: pytest.CaptureFixture[str]
) -> None:
    store, base_url = served
    store.inject(Fault.drop(processed=True, operation="create"))

    status = main([*create(base_url), "--name", "Rex", "--category-id", "3"])

    [sent] = store.requests
    key = sent.headers["idempotency-key"]
    assert status == 3
    assert capsys.readouterr().err == (
        f"error: POST {base_url}/pets {LOST}to resend it, run the command again with "
        f"--idempotency-key {key}: a service that deduplicates by Idempotency-Key then creates "
        "it once\n"
    )


def test_a_lost_create_with_its_own_key_says_to_run_the_same_command_again(
    served: tuple[FakeAnimalStore, str], capsys: pytest.CaptureFixture[str]
) -> None:
    store, base_url = served
    store.inject(Fault.drop(processed=True, operation="create"))
    options = ["--name", "Rex", "--category-id", "3", "--idempotency-key", "rex-1"]

    status = main([*create(base_url, "-o", "json"), *options])

    assert status == 3
    assert capsys.readouterr().err == (
        '{"code": "connection_error", "message": "POST '
        f"{base_url}/pets {LOST}run the same command again to resend it with the same "
        "--idempotency-key: a service that deduplicates by Idempotency-Key then creates it "
        'once", "status": null}\n'
    )


def test_a_create_that_provably_was_not_sent_keeps_its_words(
    capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    base_url = f"http://127.0.0.1:{closed_port}/v1"

    status = main([*create(base_url, "--max-retries", "0"), "--name", "Rex", "--category-id", "3"])

    error = capsys.readouterr().err
    assert status == 3
    assert error.endswith(
        "; not sent, so the animal was not created: the request provably never reached the "
        "service, and calling again is safe\n"
    )
    assert "idempotency" not in error.lower()


def stopped_by_ctrl_c(journal: Journal | NoJournal) -> tuple[int, str]:
    """A bulk run that Ctrl-C stops before its first record: its status and its summary."""
    store = FakeAnimalStore(api_keys=(KEY,))
    stream = io.BytesIO(b'{"name": "Rex", "categoryId": 3}\n')
    stderr = io.StringIO()

    async def go() -> int:
        async with store.async_client(max_retries=0) as client:
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(client, journal, 1, io.StringIO(), progress)
            bulk.interrupt(signal.SIGINT)
            return await bulk.run(read_records(stream, "jsonl"), stream)

    return asyncio.run(go()), stderr.getvalue()


def test_after_ctrl_c_the_last_line_says_to_run_the_same_command_again(tmp_path: Path) -> None:
    path = tmp_path / "pets.journal"
    journal = Journal.open(str(path), Header("http://127.0.0.1:1/v1/", "pets.jsonl", "jsonl"))

    status, stderr = stopped_by_ctrl_c(journal)

    assert status == 130
    assert stderr.splitlines()[-1] == (
        f"stopped early: interrupted (Ctrl-C); run the same command again to go on: the journal "
        f"{path} holds what is done, and nothing done is sent again"
    )


def test_after_ctrl_c_without_a_journal_the_last_line_says_a_rerun_starts_over() -> None:
    status, stderr = stopped_by_ctrl_c(NoJournal())

    assert status == 130
    assert stderr.splitlines()[-1] == (
        "stopped early: interrupted (Ctrl-C); without --journal, running the command again "
        "sends every record again, those created included (stdout lists them); give --journal "
        "FILE to be able to go on after a stop"
    )


def test_a_busy_port_suggests_port_0(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        status = main(["mock-server", "--port", str(port)])

    assert status == 1
    busy = OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE))
    assert capsys.readouterr().err == (
        f"error: cannot serve on port {port}: {busy}; pass --port 0 for a free port\n"
    )


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            "drop-befor",
            "unknown fault 'drop-befor' in 'drop-befor'; known: error, delay, drop-before, "
            "drop-after, not-json, wrong-schema, truncated",
        ),
        ("drop_after:3", "drop-after takes no ':' argument, in 'drop_after:3'"),
        (
            "drop-before,retry_after=1",
            "retry-after is only for an error fault, in 'drop-before,retry_after=1'",
        ),
        ("not-json,header=A:b", "header is only for an error fault, not not-json"),
        ("error:503,times=0", "times must be at least 1 (always: until reset), got 0"),
    ],
)
def test_a_bad_fault_is_named_in_the_command_lines_spelling(
    capsys: pytest.CaptureFixture[str], fault: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["mock-server", "--fault", fault])

    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        f"error: argument --fault: {message} (see 'animalstore mock-server --help')\n"
    )


def test_the_help_lists_exit_status_5(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])

    assert (
        "  5    pets create --from-file: every record created, but some were resent after a\n"
        "       send that may have created them: a service that does not deduplicate may hold\n"
        "       those twice (see 'pets create --help')\n"
    ) in capsys.readouterr().out
