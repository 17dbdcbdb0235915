"""The journal's file: its exact bytes and mode, what it counts, and what it says when it
cannot be used (each message names the file).

On real files in a temporary folder; a write that fails is a real one, past a file size limit
(``RLIMIT_FSIZE``: the write fails with EFBIG, Python ignoring SIGXFSZ).
"""

from __future__ import annotations

import asyncio
import os
import resource
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from animalstore_client._cli.journal import Entry, Header, Journal, JournalError, NoJournal

HEADER = Header("http://127.0.0.1:1/v1/", "pets.jsonl", "jsonl")
HEADER_LINE = (
    b'{"journal":"animalstore pets create --from-file","version":1,'
    b'"base_url":"http://127.0.0.1:1/v1/","input":"pets.jsonl","format":"jsonl"}\n'
)


def started(line: int) -> Entry:
    return Entry(line, f"key-{line}", f"digest-{line}", "started")


def test_the_file_holds_the_header_then_one_compact_line_per_entry(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal.open(str(path), HEADER)
    assert path.read_bytes() == HEADER_LINE  # on disk before the first entry
    journal.append(started(1), started(2))  # two entries, one write
    journal.append(Entry(1, "key-1", "digest-1", "created", pet={"id": 7, "name": "R\u00e9x"}))
    journal.close()

    assert path.read_bytes() == HEADER_LINE + (
        b'{"line":1,"key":"key-1","digest":"digest-1","state":"started"}\n'
        b'{"line":2,"key":"key-2","digest":"digest-2","state":"started"}\n'
        b'{"line":1,"key":"key-1","digest":"digest-1","state":"created",'
        b'"pet":{"id":7,"name":"R\\u00e9x"}}\n'
    )


@pytest.mark.skipif(os.name != "posix", reason="a directory is flushed on POSIX only")
def test_a_new_journals_directory_is_flushed_to_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[str] = []  # what each os.fsync flushed: "dir" or "file"
    real: Callable[[int], None] = os.fsync

    def noting(fd: int) -> None:
        flushed.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", noting)
    Journal.open(str(tmp_path / "j"), HEADER).close()
    assert flushed == ["file", "dir"]
    Journal.open(str(tmp_path / "j"), HEADER).close()  # not new: nothing to flush
    assert flushed == ["file", "dir"]


def test_it_knows_its_path_and_counts_its_entries_and_flushes(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    journal = Journal.open(path, HEADER)
    assert (journal.path, journal.entries, journal.fsyncs) == (path, 0, 0)
    assert journal.append(started(1), started(2)) == 2  # the ticket: entries written
    journal.close()  # flushes what is not on disk
    assert (journal.entries, journal.fsyncs) == (2, 1)

    again = Journal.open(path, HEADER)
    ticket = again.append(started(3))

    async def durable() -> None:
        await again.durable(ticket)

    asyncio.run(durable())
    assert again.append(started(4)) == 2
    again.close()
    assert (again.entries, again.fsyncs) == (2, 2)  # one by durable(), one by close()


def test_no_journal_keeps_nothing_and_every_ticket_is_durable() -> None:
    journal = NoJournal()
    assert journal.append(started(1)) == 0
    asyncio.run(journal.durable(0))
    assert journal.entry(1) is None
    assert (journal.path, journal.entries, journal.fsyncs) == (None, 0, 0)


def test_a_records_later_entry_right_after_its_first_is_the_one_found(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    journal = Journal.open(path, HEADER)
    journal.append(started(1), started(2))
    journal.append(Entry(2, "key-2", "digest-2", "created", pet={"id": 1}))
    journal.append(Entry(2, "key-2", "digest-2", "created", pet={"id": 2}))
    journal.close()

    reopened = Journal.open(path, HEADER)
    try:
        found = reopened.entry(2)
        assert found is not None
        assert found.pet == {"id": 2}
        assert reopened.entry(1) == started(1)
    finally:
        reopened.close()


# -- what it says when it cannot be used ------------------------------------------------------


def test_a_file_that_is_not_a_journal_is_named_in_the_message(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    Path(path).write_bytes(b"name,categoryId\n")
    with pytest.raises(JournalError) as raised:
        Journal.open(path, HEADER)
    assert str(raised.value) == (
        f"{path!r} is not a journal of 'pets create --from-file' (its first line is not a "
        "journal header); it was left as it is: give a new file or one an earlier run wrote"
    )


def test_a_journal_of_another_api_is_named_in_the_message(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    Journal.open(path, Header("http://elsewhere/v1/", "pets.jsonl", "jsonl")).close()
    with pytest.raises(JournalError) as raised:
        Journal.open(path, HEADER)
    assert str(raised.value) == (
        f"the journal {path!r} was written for the API at 'http://elsewhere/v1/', not "
        "'http://127.0.0.1:1/v1/': its records' outcomes say nothing of this one; give "
        "another --journal"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"line":2,"state":"started"}', "missing 2 required positional arguments"),
        (b'{"line":2,"key":"k","digest":"d","state":"started","pet":5}', "pet must be an object"),
        (b"not json", "Expecting value"),
    ],
)
def test_an_entry_that_cannot_be_read_is_named_by_its_line_and_file(
    tmp_path: Path, line: bytes, message: str
) -> None:
    path = str(tmp_path / "j")
    Path(path).write_bytes(HEADER_LINE + line + b"\n")
    with pytest.raises(JournalError) as raised:
        Journal.open(path, HEADER)
    assert str(raised.value).startswith(f"line 2 of the journal {path!r} cannot be read: ")
    assert message in str(raised.value)


def test_an_entry_spoiled_after_the_journal_was_opened_is_named_as_such(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    journal = Journal.open(path, HEADER)
    journal.append(started(1))
    journal.close()
    reopened = Journal.open(path, HEADER)
    try:
        # Another program overwrites the entry in place, after it was indexed.
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, b"#", len(HEADER_LINE))
        finally:
            os.close(fd)
        with pytest.raises(JournalError) as raised:
            reopened.entry(1)
        assert str(raised.value).startswith(f"an entry of the journal {path!r} cannot be read: ")
    finally:
        reopened.close()


@pytest.mark.skipif(sys.platform == "win32", reason="no advisory locks on Windows")
def test_a_journal_in_use_is_named_in_the_message(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    first = Journal.open(path, HEADER)
    try:
        with pytest.raises(JournalError) as raised:
            Journal.open(path, HEADER)
        assert str(raised.value) == f"the journal {path!r} is in use by another run"
    finally:
        first.close()


@contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """Fail every write past ``size`` bytes of any file, until the block ends."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


@pytest.mark.skipif(os.name != "posix", reason="needs RLIMIT_FSIZE")
def test_after_a_failed_write_the_journal_refuses_every_later_one(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal.open(str(path), HEADER)
    try:
        with (
            file_size_limit(len(HEADER_LINE) + 10),
            pytest.raises(OSError, match="File too large") as failed,
        ):
            journal.append(started(1))
        # The disk has room again, but what the journal holds is no longer known.
        with pytest.raises(OSError, match="File too large") as again:
            journal.append(started(2))
        assert again.value is failed.value
        assert journal.entries == 0
        size = path.stat().st_size
    finally:
        journal.close()  # no flush: its entries are not trusted
    assert path.stat().st_size == size == len(HEADER_LINE) + 10
    assert journal.fsyncs == 0
