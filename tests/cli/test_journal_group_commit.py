"""The journal's group commit, with the interleavings forced rather than left to timing.

Each flush to disk runs in a thread; here the real flush is wrapped to note what the file held
when it began, then to wait on an event the test sets, so the test decides exactly what is
written while a flush is in progress.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import os
import threading
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import pytest

from animalstore_client._cli import journal as journal_module
from animalstore_client._cli.journal import Journal
from tests.cli.test_journal import HEADER, started

#: The most seconds a step waits for another; a hang fails the test instead of the run.
WAIT = 10.0


class OpenJournal:
    """A new journal, ``journal`` at ``path``, and how to run a test's steps on it (``run``)."""

    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "j"
        self.journal = Journal.open(str(self.path), HEADER)

    def run(self, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``main`` on a loop of its own; then, however it ended, let every held flush go
        (no thread is left held) and close the journal (no flush after one failed: what it
        holds is not trusted)."""
        try:
            asyncio.run(main())
        finally:
            self.let_go()
            self.journal.close()

    def let_go(self) -> None:
        """Let every flush held go: none is, here."""


class HeldFlushes(OpenJournal):
    """Wraps the real flush: notes the file's size as each flush begins, then holds it.

    ``began[n]`` is set once flush ``n`` has noted its size; it ends once ``release[n]`` is.
    """

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
        self.sizes: list[int] = []
        self.began = [threading.Event() for _ in range(count)]
        self.release = [threading.Event() for _ in range(count)]
        real: Callable[[int], None] = journal_module._flush_to_disk

        def held(fd: int) -> None:
            index = len(self.sizes)
            self.sizes.append(os.fstat(fd).st_size)
            self.began[index].set()
            assert self.release[index].wait(WAIT), f"flush {index} was never released"
            real(fd)

        monkeypatch.setattr(journal_module, "_flush_to_disk", held)
        super().__init__(tmp_path)

    def let_go(self) -> None:
        for release in self.release:
            release.set()

    async def wait_began(self, index: int) -> None:
        """Wait, without blocking the loop, until flush ``index`` has begun."""
        began = await asyncio.to_thread(self.began[index].wait, WAIT)
        assert began, f"flush {index} never began"

    async def next_began_before(self, index: int, waiters: Sequence[asyncio.Future[None]]) -> None:
        """Wait until flush ``index`` begins, and check that none of ``waiters`` ended first.

        A waiter that returns without that flush fails the test at once, not after ``WAIT``.
        """
        began = asyncio.ensure_future(self.wait_began(index))
        await asyncio.wait([began, *waiters], return_when=asyncio.FIRST_COMPLETED)
        returned = [waiter for waiter in waiters if waiter.done()]
        self.began[index].set()  # so that the thread waiting for it ends at once
        await began
        assert not returned, f"{len(returned)} returned before flush {index} began"


@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HeldFlushes:
    """A new journal whose first two flushes to disk are held."""
    return HeldFlushes(tmp_path, monkeypatch, 2)


def test_a_key_written_while_a_flush_runs_is_durable_only_after_the_next_flush(
    held: HeldFlushes,
) -> None:
    sizes: dict[int, int] = {}  # line -> the file's size once its entry was written

    async def main() -> None:
        first = held.journal.append(started(1))
        sizes[1] = held.path.stat().st_size
        first_durable = asyncio.ensure_future(held.journal.durable(first))
        await held.wait_began(0)  # the first flush runs, and covers entry 1 only
        second = held.journal.append(started(2))
        sizes[2] = held.path.stat().st_size
        second_durable = asyncio.ensure_future(held.journal.durable(second))
        await asyncio.sleep(0)  # it waits on the flush in progress
        held.release[0].set()
        await first_durable
        # Its entry was written after the first flush began: only a second one covers it.
        await held.next_began_before(1, [second_durable])
        assert held.sizes == [sizes[1], sizes[2]]
        assert not second_durable.done()
        held.release[1].set()
        await second_durable
        assert held.journal.fsyncs == 2

    held.run(main)


def test_every_caller_of_a_flush_in_progress_shares_the_next_one(held: HeldFlushes) -> None:
    async def main() -> None:
        first = asyncio.ensure_future(held.journal.durable(held.journal.append(started(1))))
        await held.wait_began(0)
        late = [
            asyncio.ensure_future(held.journal.durable(held.journal.append(started(line))))
            for line in range(2, 12)
        ]
        written = held.path.stat().st_size
        held.release[0].set()
        await first
        await held.next_began_before(1, late)
        held.release[1].set()
        await asyncio.gather(*late)
        assert held.sizes[1] == written  # one flush for the ten written during the first
        assert held.journal.fsyncs == 2

    held.run(main)


def test_flush_ahead_starts_the_flush_that_durable_then_waits_for(held: HeldFlushes) -> None:
    async def main() -> None:
        held.journal.flush_ahead()  # nothing written: nothing to flush
        assert not await asyncio.to_thread(held.began[0].wait, 0.3)
        ticket = held.journal.append(started(1), started(2))
        written = held.path.stat().st_size
        held.journal.flush_ahead()
        await held.wait_began(0)  # begun with no one waiting for it
        held.journal.flush_ahead()  # one is running: no second one
        waiter = asyncio.ensure_future(held.journal.durable(ticket))
        held.release[0].set()
        await waiter
        assert held.sizes == [written]
        held.journal.flush_ahead()  # all on disk: nothing to flush
        assert not await asyncio.to_thread(held.began[1].wait, 0.3)
        assert held.journal.fsyncs == 1

    held.run(main)
    assert len(held.sizes) == 1


@pytest.mark.skipif(os.name != "posix", reason="needs RLIMIT_FSIZE")
def test_flush_ahead_after_a_failed_write_flushes_nothing(held: HeldFlushes) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    async def main() -> None:
        held.journal.append(started(1))  # written, not yet flushed
        size = held.path.stat().st_size
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, hard))
        try:
            with pytest.raises(OSError, match="File too large"):
                held.journal.append(started(2))
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        held.journal.flush_ahead()  # what the journal holds is no longer known: no flush
        began = await asyncio.to_thread(held.began[0].wait, 0.5)
        assert not began

    held.run(main)
    assert held.sizes == []
    assert held.journal.fsyncs == 0


class FailingFlushes(OpenJournal):
    """A new journal whose every flush to disk fails, as on a disk that reports an I/O error;
    each failure noted in ``raised``."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.raised: list[OSError] = []

        def failing(fd: int) -> None:
            self.raised.append(OSError(errno.EIO, "Input/output error"))
            raise self.raised[-1]

        monkeypatch.setattr(journal_module, "_flush_to_disk", failing)
        super().__init__(tmp_path)


@pytest.fixture
def failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FailingFlushes:
    """A new journal whose every flush to disk fails."""
    return FailingFlushes(tmp_path, monkeypatch)


def test_a_failed_flush_fails_every_later_durable_and_append_without_another_flush(
    failing: FailingFlushes,
) -> None:
    async def main() -> None:
        ticket = failing.journal.append(started(1))
        with pytest.raises(OSError, match="Input/output error") as first:
            await failing.journal.durable(ticket)
        with pytest.raises(OSError, match="Input/output error") as again:
            await failing.journal.durable(ticket)
        assert again.value is first.value
        with pytest.raises(OSError, match="Input/output error") as appended:
            failing.journal.append(started(2))
        assert appended.value is first.value

    failing.run(main)
    assert len(failing.raised) == 1  # one flush tried, not one per call
    assert failing.journal.fsyncs == 0


def test_a_failed_flush_that_no_one_waited_for_is_not_reported_as_lost(
    failing: FailingFlushes,
) -> None:
    # flush_ahead() keeps the failure for the next append or durable to raise; asyncio must not
    # report it as an exception never retrieved (nor a callback of the flush fail).
    reported: list[dict[str, object]] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: reported.append(context)
        )
        failing.journal.append(started(1))
        failing.journal.flush_ahead()
        for _ in range(500):  # until the flush has failed: 5 s at most
            await asyncio.sleep(0.01)
            if failing.raised:
                break
        for _ in range(3):  # its callbacks, then the task is let go
            await asyncio.sleep(0)
        gc.collect()
        await asyncio.sleep(0)
        with pytest.raises(OSError, match="Input/output error"):
            failing.journal.append(started(2))

    failing.run(main)
    assert len(failing.raised) == 1
    assert reported == []
