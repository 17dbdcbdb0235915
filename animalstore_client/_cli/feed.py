"""How ``pets create --from-file`` gets its records: a group at a time, never far ahead.

``Feed`` hands the run the records that ``records.read_records`` reads and checks, from a file
in the event loop itself, from a pipe through a thread of its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import stat
import threading
from collections.abc import Iterator
from typing import IO

from animalstore_client._cli.records import Invalid, Record

__all__ = ["Feed", "is_file"]


class Feed:
    """The records, handed over a group at a time, a bounded window ahead of the calls.

    From a file they are read in the loop itself: a read from a file does not wait for long,
    and reading in a thread of its own made every call wait for the interpreter's lock (about
    a fifth of the throughput). From a pipe or a terminal, where a read may wait for as long
    as the writer likes, a daemon thread reads them, one record at a time, so that the calls
    in flight (and Ctrl-C) are never held up; a daemon, so that one blocked on a pipe does not
    hold up the exit. Either way at most a group is held, and as many in the queue: memory
    does not grow with the input.

    Args:
        records: the records, from ``records.read_records``.
        stream: the input they are read from.
        group: the most records ``next_group`` and ``available`` return.
    """

    def __init__(self, records: Iterator[Record | Invalid], stream: IO[bytes], group: int) -> None:
        self._records = records
        self._group = group
        self._ended = False
        self._queue: asyncio.Queue[Record | Invalid | OSError | None] | None = None
        # What next_group waited for, taken before the queue's: at most one.
        self._waited: list[Record | Invalid | OSError | None] = []
        self._read_all = False
        if not is_file(stream):
            self._queue = asyncio.Queue(group)
            loop = asyncio.get_running_loop()
            threading.Thread(
                target=self._read, args=(loop,), name="animalstore-input", daemon=True
            ).start()

    @property
    def reading(self) -> bool:
        """Whether its thread may be in a read of the input, or start one: not done with it."""
        return self._queue is not None and not self._read_all  # a queue: a thread reads

    async def next_group(self) -> list[Record | Invalid] | None:
        """Return the next records, waiting for the first: up to the group size.

        Returns:
            The records, or ``None`` at the end of the input or after ``stop()``.

        Raises:
            OSError: reading the input failed.
        """
        queue = self._queue
        if queue is not None and not self._ended and not self._waited and queue.empty():
            self._waited.append(await queue.get())
        return self.available() or None

    def available(self) -> list[Record | Invalid]:
        """Return the next records that need no wait, up to the group size (maybe none).

        Raises:
            OSError: reading the input failed.
        """
        if self._ended:
            return []
        if self._queue is None:
            group = list(itertools.islice(self._records, self._group))
            self._ended = not group
            return group
        group = []
        while len(group) < self._group and (self._waited or not self._queue.empty()):
            value = self._waited.pop() if self._waited else self._queue.get_nowait()
            if isinstance(value, OSError):
                self._ended = True
                raise value
            if value is None:
                self._ended = True
                break
            group.append(value)
        return group

    def stop(self) -> None:
        """Make ``next_group`` return ``None`` from now on, waking it if it waits."""
        self._ended = True
        if self._queue is not None and self._queue.empty():
            self._queue.put_nowait(None)

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        def hand_over(value: Record | Invalid | OSError | None) -> None:
            assert self._queue is not None
            put = self._queue.put(value)
            try:
                asyncio.run_coroutine_threadsafe(put, loop).result()
            except BaseException:
                # The loop was closed first: the put never ran, and would be reported as a
                # coroutine never awaited. (Once it ran, its task is over: closing is a no-op.)
                put.close()
                raise

        end: OSError | None = None
        try:
            try:
                for item in self._records:
                    hand_over(item)
            except OSError as error:
                end = error
            finally:
                self._read_all = True  # no read after this one: the input may be closed
            hand_over(end)
        except (RuntimeError, concurrent.futures.CancelledError):
            pass  # the run ended first, and its loop with it


def is_file(stream: IO[bytes]) -> bool:
    """Return whether ``stream`` reads a regular file (not a pipe, a terminal, a socket)."""
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError):
        return False
