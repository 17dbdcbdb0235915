"""``pets create --from-file`` when stdout or the journal cannot be written: exit 4, and a
re-run with the journal finishes the job, each record created once.

Real failures of real writes, in subprocesses: stdout on ``/dev/full`` (ENOSPC) or closed
(``>&-``), and a journal on a file size limit (``RLIMIT_FSIZE``: a write past it fails with
EFBIG, Python ignoring SIGXFSZ), the limit set at each of the journal's writes in turn, inside
its line. The reference runs and the re-runs go in process.
"""

from __future__ import annotations

import json
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_bulk import Run, animalstore, journal_entries, journaled, pets_file
from tests.cli.test_cli import (
    CLOSED,
    POSIX_ONLY,
    Server,
    animalstore_child,
    check_output,
    emptied,
    run_process,
    served,
)

RECORDS = 5
#: The journal's writes: the header, the keys (one write), then each outcome.
WRITES = ["keys", *(f"outcome-{line}" for line in range(1, RECORDS + 1))]


@pytest.fixture(scope="module")
def deduplicating() -> Iterator[Server]:
    yield from served(honour_idempotency_keys=True)


@pytest.fixture
def dedup(deduplicating: Server) -> Server:
    return emptied(deduplicating)


def run_limited(command: str, base_url: str, file_size_limit: int) -> Run:
    """Run ``animalstore <command>`` with no file written past ``file_size_limit`` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    result = run_process(command, base_url=base_url, preexec_fn=limit)
    return Run(result.returncode, result.stdout, result.stderr)


def write_ends(journal: Path) -> list[int]:
    """Where each of the journal's writes ended: the header, the keys (one write), each outcome.

    The run it comes from had concurrency 1 and fewer records than a group: all its keys were
    journaled in one write, then each outcome in one.
    """
    ends, offset = [], 0
    states = []
    for raw in journal.read_bytes().splitlines(keepends=True):
        offset += len(raw)
        ends.append(offset)
        states.append(json.loads(raw).get("state"))
    assert states == [None] + ["started"] * RECORDS + ["created"] * RECORDS
    return [ends[0], ends[RECORDS], *ends[RECORDS + 1 :]]


def check_resumed(dedup: Server, command: str, first: Run, status: int) -> None:
    """A re-run with the same journal ends the job, each record created once: exit ``status``,
    5 when it resent a record the first run may have created, else 0."""
    resumed = animalstore(command, dedup.base_url)
    assert resumed.returncode == status, resumed.stderr
    assert sorted(pet.name for pet in dedup.store.pets) == [
        f"pet-{line}" for line in range(1, RECORDS + 1)
    ]
    printed = {record["line"] for record in first.records() + resumed.records()}
    assert printed == set(range(1, RECORDS + 1))


@POSIX_ONLY
@pytest.mark.parametrize("number", range(len(WRITES)), ids=WRITES)
def test_a_journal_write_that_fails_at_any_point_exits_4_and_a_rerun_finishes(
    dedup: Server, tmp_path: Path, number: int
) -> None:
    source = pets_file(tmp_path / "pets.jsonl", RECORDS)
    reference = tmp_path / "reference.journal"
    command = f"pets create --from-file {source} --concurrency 1 --journal "
    assert animalstore(command + str(reference), dedup.base_url).returncode == 0
    header, *writes = write_ends(reference)
    assert len(writes) == len(WRITES)
    assert header < writes[0]
    end = writes[number]

    emptied(dedup)
    journal = tmp_path / f"{number}.journal"
    # One byte short of the end of this write: it is cut inside its (last) line.
    failed = run_limited(command + str(journal), dedup.base_url, end - 1)

    assert failed.returncode == 4, (number, failed.stderr)
    assert "stopped early: cannot write the journal: File too large" in failed.stderr
    # What stdout shows, the journal holds: only outcomes journaled whole are printed.
    journaled = {e["line"] for e in journal_entries(journal) if e["state"] == "created"}
    assert {record["line"] for record in failed.records()} == journaled
    assert len(journaled) == max(0, number - 1)
    assert len(dedup.store.pets) == number  # the one whose outcome failed was created
    # The record whose outcome (or, the keys' write cut, whose key) was cut off is sent
    # again: the first run may have created it.
    check_resumed(dedup, command + str(journal), failed, 5)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_stdout_on_a_full_disk_exits_4_and_a_rerun_finishes(dedup: Server, tmp_path: Path) -> None:
    command, journal = journaled(tmp_path, RECORDS)
    with open("/dev/full", "wb") as full:
        completed = animalstore_child(command, dedup.base_url, stdout=full)
    stderr = completed.stderr.decode()
    check_output("", stderr)

    assert completed.returncode == 4, stderr
    assert "stopped early: cannot write to stdout: No space left on device" in stderr
    states = {entry["line"]: entry["state"] for entry in journal_entries(journal)}
    assert set(states) == set(range(1, RECORDS + 1))
    assert set(states.values()) <= {"created", "unsent"}
    check_resumed(dedup, command, Run(completed.returncode, "", stderr), 0)  # none in doubt


@POSIX_ONLY
def test_a_closed_stdout_exits_4_before_anything_is_sent(dedup: Server, tmp_path: Path) -> None:
    command, journal = journaled(tmp_path, RECORDS)
    completed = animalstore_child(command, dedup.base_url, stdout=CLOSED)
    stderr = completed.stderr.decode()

    assert completed.returncode == 4, stderr
    assert stderr == "error: stdout is closed: no record's outcome could be shown; none was sent\n"
    assert dedup.store.requests == []
    assert not journal.exists()
