"""The journal of ``pets create --from-file`` on its own: durability, group commit, reopening.

On real files in a temporary folder. The flushes to disk are the real ones; where a test needs
to see when each happened, it wraps the real flush to note what the file held at that moment.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from animalstore_client._cli import journal as journal_module
from animalstore_client._cli.journal import Entry, Header, Journal, JournalError

HEADER = Header("http://127.0.0.1:1/v1/", "pets.jsonl", "jsonl")


def started(line: int) -> Entry:
    return Entry(line, f"key-{line}", f"digest-{line}", "started")


def flushes_noted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Note the journal's size on disk at each flush (the real one still runs)."""
    sizes: list[int] = []
    real: Callable[[int], None] = journal_module._flush_to_disk

    def noting(fd: int) -> None:
        sizes.append(os.fstat(fd).st_size)
        real(fd)

    monkeypatch.setattr(journal_module, "_flush_to_disk", noting)
    return sizes


def test_one_flush_covers_every_key_written_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = flushes_noted(monkeypatch)
    journal = Journal.open(str(tmp_path / "j"), HEADER)

    async def group_then_one() -> None:
        tickets = [journal.append(started(line)) for line in range(1, 9)]
        await asyncio.gather(*(journal.durable(ticket) for ticket in tickets))
        late = journal.append(started(9))
        await journal.durable(late)
        await journal.durable(late)  # on disk already: no flush

    asyncio.run(group_then_one())
    journal.close()  # nothing written since the last flush: no flush either
    assert journal.fsyncs == 2
    lines = (tmp_path / "j").read_bytes().splitlines(keepends=True)
    header = len(lines[0])
    assert sizes == [sum(map(len, lines[:9])), sum(map(len, lines))]
    assert header < sizes[0]


def test_each_flush_counted_puts_the_journals_own_file_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The count says a flush happened: the system's flush of the journal's file, written so
    # far, must have run each time (fdatasync where there is one).
    name = "fdatasync" if hasattr(os, "fdatasync") else "fsync"
    real: Callable[[int], None] = getattr(os, name)
    flushed: list[tuple[int, int]] = []  # the inode and size of the file of each flush

    def noting(fd: int) -> None:
        status = os.fstat(fd)
        flushed.append((status.st_ino, status.st_size))
        real(fd)

    path = tmp_path / "j"
    journal = Journal.open(str(path), HEADER)
    monkeypatch.setattr(os, name, noting)  # after the header's own flush

    async def one() -> None:
        await journal.durable(journal.append(started(1)))

    asyncio.run(one())
    by_durable = list(flushed)
    journal.append(started(2))
    journal.close()

    inode = path.stat().st_ino
    sizes = [len(line) for line in path.read_bytes().splitlines(keepends=True)]
    assert by_durable == [(inode, sum(sizes[:2]))]
    assert flushed == [(inode, sum(sizes[:2])), (inode, sum(sizes))]
    assert journal.fsyncs == 2


def test_a_key_written_during_a_flush_waits_for_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each durable() must return only once a flush that began after its entry was written
    # has ended: the size noted at that flush covers the entry.
    sizes = flushes_noted(monkeypatch)
    journal = Journal.open(str(tmp_path / "j"), HEADER)
    returned: dict[int, int] = {}  # line -> how many flushes had begun when durable returned

    async def one(line: int) -> None:
        ticket = journal.append(started(line))
        written = os.fstat(journal._fd).st_size
        await journal.durable(ticket)
        assert any(size >= written for size in sizes)
        returned[line] = len(sizes)

    async def staggered() -> None:
        calls = []
        for line in range(1, 31):
            calls.append(asyncio.ensure_future(one(line)))
            await asyncio.sleep(0)  # entries come while a flush runs in its thread
        await asyncio.gather(*calls)

    asyncio.run(staggered())
    journal.close()
    assert len(returned) == 30
    assert journal.fsyncs == len(sizes) < 30


def test_a_cancelled_waiter_does_not_cancel_the_flush_others_wait_for(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path / "j"), HEADER)

    async def main() -> None:
        first = journal.append(started(1))
        second = journal.append(started(2))
        waiter = asyncio.ensure_future(journal.durable(first))
        other = asyncio.ensure_future(journal.durable(second))
        await asyncio.sleep(0)
        waiter.cancel()
        await other
        assert journal.fsyncs == 1

    asyncio.run(main())
    journal.close()


def test_reopening_finds_each_lines_last_entry(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    journal = Journal.open(path, HEADER)
    for entry in [
        started(1),
        started(2),
        started(3),
        Entry(2, "key-2", "digest-2", "created", pet={"id": 7, "name": "Rex", "categoryId": 1}),
        started(10),
        started(5),  # a line first journaled later (corrected since an earlier run)
        Entry(1, "key-1", "digest-1", "unknown", error={"code": "timeout"}),
        Entry(5, "key-5", "digest-5", "refused", error={"code": "invalid_field"}),
    ]:
        journal.append(entry)
    journal.close()

    reopened = Journal.open(path, HEADER)
    try:
        lost = Entry(1, "key-1", "digest-1", "unknown", error={"code": "timeout"})
        assert reopened.entry(1) == lost
        created = reopened.entry(2)
        assert created is not None
        assert created.pet == {"id": 7, "name": "Rex", "categoryId": 1}
        assert reopened.entry(3) == started(3)
        assert reopened.entry(4) is None
        refused = reopened.entry(5)
        assert refused is not None
        assert refused.state == "refused"
        assert reopened.entry(10) == started(10)
        assert reopened.entry(11) is None
        assert reopened.entry(0) is None
    finally:
        reopened.close()


def test_a_torn_last_line_is_dropped_before_anything_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal.open(str(path), HEADER)
    journal.append(started(1))
    journal.close()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"line":2,"key":"ke')  # a crash of the machine mid-write

    reopened = Journal.open(str(path), HEADER)
    assert reopened.entry(2) is None
    reopened.append(started(3))
    reopened.close()
    assert (
        path.read_bytes()
        == whole + json.dumps(started(3).to_json(), separators=(",", ":")).encode() + b"\n"
    )


def test_a_torn_header_is_written_again(tmp_path: Path) -> None:
    path = tmp_path / "j"
    path.write_bytes(b'{"journal":"animalstore pe')
    Journal.open(str(path), HEADER).close()
    [line] = path.read_bytes().splitlines()
    assert json.loads(line)["journal"] == "animalstore pets create --from-file"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"name,categoryId\nRex,3\n", "is not a journal of 'pets create --from-file'"),
        (b"hello", "is not a journal of 'pets create --from-file'"),
        (
            b'{"journal":"animalstore pets create --from-file","version":2}\n',
            "has version 2, not 1",
        ),
        (
            b'{"journal":"animalstore pets create --from-file","version":1,'
            b'"base_url":"http://elsewhere/v1/"}\n',
            "was written for the API at 'http://elsewhere/v1/'",
        ),
    ],
)
def test_a_file_that_is_not_this_apis_journal_is_refused_untouched(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "j"
    path.write_bytes(content)
    with pytest.raises(JournalError, match=message):
        Journal.open(str(path), HEADER)
    assert path.read_bytes() == content


def test_an_entry_that_cannot_be_read_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "j"
    journal = Journal.open(str(path), HEADER)
    journal.append(started(1))
    journal.close()
    content = path.read_bytes() + b'{"line":2,"state":"started"}\n' + b"{}\n"
    path.write_bytes(content)
    with pytest.raises(JournalError, match=r"line 3 of the journal .* cannot be read"):
        Journal.open(str(path), HEADER)
    assert path.read_bytes() == content


@pytest.mark.skipif(sys.platform == "win32", reason="no advisory locks on Windows")
def test_one_run_at_a_time(tmp_path: Path) -> None:
    path = str(tmp_path / "j")
    first = Journal.open(path, HEADER)
    with pytest.raises(JournalError, match="is in use by another run"):
        Journal.open(path, HEADER)
    first.close()
    Journal.open(path, HEADER).close()


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_is_no_journal() -> None:
    with pytest.raises(JournalError, match="is not a regular file"):
        Journal.open("/dev/null", HEADER)


def test_entries_read_back_between_appends_are_the_ones_written(tmp_path: Path) -> None:
    # A resumed run reads a line's entry, appends, reads the next: a buffered reader on the
    # appending descriptor would read the later entries from where the appends left it.
    path = str(tmp_path / "j")
    journal = Journal.open(path, HEADER)
    written = [
        Entry(line, f"key-{line}", "d" * 16, "failed", error={"m": "x" * line})
        for line in range(1, 201)
    ]
    for entry in written:
        journal.append(entry)
    journal.close()

    reopened = Journal.open(path, HEADER)
    try:
        for entry in written:
            assert reopened.entry(entry.line) == entry
            reopened.append(Entry(entry.line, entry.key, entry.digest, "created", pet={"id": 1}))
    finally:
        reopened.close()


@pytest.mark.parametrize("pread", [True, False], ids=["pread", "seek-and-read"])
def test_an_entry_longer_than_one_read_is_read_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pread: bool
) -> None:
    # Entries are read back 4096 bytes at a time: one whose line end is the first byte of
    # its second read, one over three reads, each followed by another entry.
    path = str(tmp_path / "j")
    journal = Journal.open(path, HEADER)
    written = [
        Entry(1, "key-1", "d" * 16, "failed", error={"m": "a" * 4010}),
        Entry(2, "key-2", "d" * 16, "failed", error={"m": "b" * 10000}),
        started(3),
    ]
    assert len(journal_module._encode(written[0].to_json())) == 4096 + 1
    for entry in written:
        journal.append(entry)
    journal.close()
    if not pread:  # as on Windows
        monkeypatch.delattr(os, "pread")

    reopened = Journal.open(path, HEADER)
    try:
        assert [reopened.entry(line) for line in (3, 2, 1)] == written[::-1]
    finally:
        reopened.close()


def test_a_journal_is_created_readable_by_its_owner_only(tmp_path: Path) -> None:
    umask = os.umask(0)  # even with nothing masked
    try:
        Journal.open(str(tmp_path / "j"), HEADER).close()
    finally:
        os.umask(umask)
    if sys.platform != "win32":
        assert (tmp_path / "j").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (10**40 - 1, "9" * 40),  # 40 characters: shown whole
        (10**40, "a huge integer"),
        (-(10**40), "a huge integer"),
        ("x" * 38, "'" + "x" * 38 + "'"),  # 40 characters with its quotes
        ("x" * 39, "'" + "x" * 36 + "..."),  # 41: cut to 37 and an ellipsis
        (7.5, "7.5"),
    ],
)
def test_a_value_an_entry_cannot_hold_is_shown_in_40_characters_at_most(
    line: object, shown: str
) -> None:
    with pytest.raises(ValueError, match=r"^its line must be") as raised:
        Entry(line, "key-1", "digest-1", "started")  # type: ignore[arg-type]
    assert str(raised.value) == f"its line must be a line number (1 or more), got {shown}"


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"line": True}, "its line must be a line number (1 or more), got True"),
        ({"line": -5}, "its line must be a line number (1 or more), got -5"),
        ({"line": 0}, "its line must be a line number (1 or more), got 0"),
        ({"line": 10**30}, "its line must be a line number (1 or more), got 10000000000"),
        ({"line": 1 << 63}, "its line must be a line number (1 or more), got 9223372036"),
        ({"line": 10**100}, "its line must be a line number (1 or more), got a huge integer"),
        ({"line": 2.0}, "its line must be a line number (1 or more), got 2.0"),
        ({"line": "2"}, "its line must be a line number (1 or more), got '2'"),
        ({"state": "done"}, "its state must be one of started, unsent, created, refused, failed"),
        ({"state": None}, "its state must be one of started, unsent, created, refused, failed"),
        ({"key": 7}, "its key must be a string, got 7"),
        ({"pet": [1]}, "pet must be an object or absent"),
    ],
)
def test_an_entry_that_cannot_be_this_inputs_is_refused_in_one_line(
    tmp_path: Path, fields: dict[str, object], problem: str
) -> None:
    path = tmp_path / "j"
    journal = Journal.open(str(path), HEADER)
    journal.append(started(1))
    journal.close()
    entry = {**started(2).to_json(), **fields}
    content = path.read_bytes() + json.dumps(entry).encode() + b"\n"
    path.write_bytes(content)
    with pytest.raises(JournalError) as raised:
        Journal.open(str(path), HEADER)
    message = str(raised.value)
    assert message.startswith(f"line 3 of the journal {str(path)!r} cannot be read: {problem}")
    assert "\n" not in message
    assert len(message) < 300
    assert path.read_bytes() == content


def test_an_entrys_fields_are_refused_in_their_own_words() -> None:
    # The largest line number the index can hold is taken; the messages say the value whole.
    assert Entry((1 << 63) - 1, "key-1", "digest-1", "started").line == (1 << 63) - 1
    with pytest.raises(ValueError, match=r"^its state ") as raised:
        Entry(1, "key-1", "digest-1", "done")
    assert str(raised.value) == (
        "its state must be one of started, unsent, created, refused, failed, unknown, got 'done'"
    )
    with pytest.raises(ValueError, match=r"^its resent ") as raised:
        Entry(1, "key-1", "digest-1", "created", resent=1)  # type: ignore[arg-type]
    assert str(raised.value) == "its resent must be true or absent, got 1"
