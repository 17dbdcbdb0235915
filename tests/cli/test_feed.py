"""How the bulk loader's ``Feed`` hands over records: a group at a time, from a file in the loop
and from a pipe through its thread, and nothing more once it is stopped.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
from pathlib import Path

import pytest

from animalstore_client._cli.feed import Feed, is_file
from animalstore_client._cli.records import Invalid, Record, read_records

LINES = b"".join(b'{"name": "pet-%d", "categoryId": 1}\n' % line for line in range(1, 8))


def lines_of(group: list[Record | Invalid] | None) -> list[int] | None:
    return None if group is None else [record.line for record in group]


def test_a_file_is_handed_over_a_group_at_a_time_until_stopped(tmp_path: Path) -> None:
    path = tmp_path / "pets.jsonl"
    path.write_bytes(LINES)

    async def run() -> list[list[int] | None]:
        with path.open("rb") as stream:
            assert is_file(stream)
            feed = Feed(read_records(stream, "jsonl"), stream, 3)
            assert not feed.reading  # no thread: read in the loop
            seen = [lines_of(await feed.next_group())]
            feed.stop()
            seen += [lines_of(await feed.next_group()), feed.available()]  # type: ignore[list-item]
            return seen

    assert asyncio.run(run()) == [[1, 2, 3], None, []]


def test_a_file_ends_with_none(tmp_path: Path) -> None:
    path = tmp_path / "pets.jsonl"
    path.write_bytes(LINES)

    async def run() -> list[list[int] | None]:
        with path.open("rb") as stream:
            feed = Feed(read_records(stream, "jsonl"), stream, 4)
            return [lines_of(await feed.next_group()) for _ in range(3)]

    assert asyncio.run(run()) == [[1, 2, 3, 4], [5, 6, 7], None]


@pytest.mark.timeout(10)
def test_a_pipe_is_read_by_a_thread_and_stopping_wakes_a_wait() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, LINES[: LINES.index(b"\n") + 1])  # one record, then the writer waits

    async def run() -> list[list[int] | None]:
        with open(read_end, "rb", buffering=0) as stream:
            assert not is_file(stream)
            before = set(threading.enumerate())
            feed = Feed(read_records(stream, "jsonl"), stream, 3)
            [reader] = set(threading.enumerate()) - before
            assert (reader.name, reader.daemon) == ("animalstore-input", True)
            assert feed.reading
            seen = [lines_of(await feed.next_group())]
            waiting = asyncio.ensure_future(feed.next_group())
            await asyncio.sleep(0)  # it waits on the queue: nothing more was written
            assert not waiting.done()
            feed.stop()
            seen.append(lines_of(await waiting))
            seen.append(lines_of(await feed.next_group()))
            os.close(write_end)  # the thread's read ends, and it hands over the end
            await asyncio.to_thread(reader.join, 5)
            assert not reader.is_alive()
            assert not feed.reading
            return seen

    assert asyncio.run(run()) == [[1], None, None]


class FailingInput(io.RawIOBase):
    """A pipe-like input (no file behind it) whose second read fails, as a dropped mount does."""

    def __init__(self) -> None:
        self.lines = [b'{"name": "pet-1", "categoryId": 1}\n']

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        raise OSError("not a file")

    def readline(self, size: int | None = -1) -> bytes:
        if self.lines:
            return self.lines.pop()
        raise OSError(5, "Input/output error")


@pytest.mark.timeout(10)
def test_a_read_error_is_raised_once_then_the_feed_is_over() -> None:
    async def run() -> list[object]:
        stream = FailingInput()
        feed = Feed(read_records(stream, "jsonl"), stream, 3)  # type: ignore[arg-type]
        seen: list[object] = [lines_of(await feed.next_group())]
        with pytest.raises(OSError, match="Input/output error"):
            await feed.next_group()
        seen.append(await asyncio.wait_for(feed.next_group(), 5))  # over: no wait for more
        return seen

    assert asyncio.run(run()) == [[1], None]
