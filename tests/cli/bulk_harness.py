"""One harness for the tests that drive ``Bulk`` itself against the store's in-process client.

``run_bulk`` builds the client, the ``Progress`` and the ``Bulk``, runs the bulk over an input
and gives back what the run left. What a test controls mid-run it hands in: the store with its
faults (``store.inject``: a fault at the Nth create), the journal (one that fails at a point),
stdout (one that fails or watches), a client of its own (one that holds its calls), and two
coroutines run on the run's loop: ``during``, beside the run (a stop request once a condition
holds: ``stop_when``), and ``after``, once the run is over and its client closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from animalstore_client import AsyncClient
from animalstore_client._cli.bulk import Bulk
from animalstore_client._cli.journal import Journal, NoJournal
from animalstore_client._cli.progress import Progress
from animalstore_client._cli.records import read_records
from animalstore_client.testing import FakeAnimalStore

KEY = "test-key"

#: What a test runs on the run's loop, given the run's ``Bulk``.
Hook = Callable[[Bulk], Awaitable[None]]


def records(count: int) -> bytes:
    """``count`` valid JSONL records, ``pet-1`` in category 1 onwards."""
    return b"".join(
        json.dumps({"name": f"pet-{line}", "categoryId": line}).encode() + b"\n"
        for line in range(1, count + 1)
    )


def records_file(directory: Path, count: int) -> Path:
    """The file ``pets.jsonl`` in ``directory``, holding ``records(count)``."""
    source = directory / "pets.jsonl"
    source.write_bytes(records(count))
    return source


def creates(store: FakeAnimalStore) -> int:
    """How many creates ``store`` was sent."""
    return sum(request.method == "POST" for request in store.requests)


@attrs.frozen
class Ran:
    """What a run left: its exit status, its ``Bulk``, its stdout and its stderr (``Progress``'s).

    The streams are read when asked: what the ``Bulk`` says after the run is there too.
    """

    status: int
    bulk: Bulk
    stdout_stream: io.StringIO
    stderr_stream: io.StringIO

    @property
    def stdout(self) -> str:
        """The text on stdout."""
        return self.stdout_stream.getvalue()

    @property
    def stderr(self) -> str:
        """The text on stderr."""
        return self.stderr_stream.getvalue()

    @property
    def printed(self) -> list[Any]:
        """Each line printed on stdout, decoded."""
        return [json.loads(line) for line in self.stdout.splitlines()]


def stop_when(condition: Callable[[Bulk], bool], *signals: int) -> Hook:
    """A ``during`` hook: once ``condition(bulk)`` holds, the run is sent ``signals`` in turn."""

    async def stop(bulk: Bulk) -> None:
        while not condition(bulk):
            await asyncio.sleep(0.005)  # a turn of the loop for the run, not a wait for time
        for signum in signals:
            bulk.interrupt(signum)

    return stop


def run_bulk(
    source: bytes | Path | BinaryIO,
    *,
    store: FakeAnimalStore | None = None,
    client: AsyncClient | None = None,
    journal: Journal | NoJournal | None = None,
    concurrency: int = 1,
    stdout: io.StringIO | None = None,
    during: Hook | None = None,
    after: Hook | None = None,
) -> Ran:
    """Run ``Bulk`` over the JSONL ``source``, on a loop of its own.

    Args:
        source: the input: its bytes, a file (opened here, so read a group at a time) or a
            stream the test opened.
        store: the store the run's client (no retries) calls; a new one if absent.
        client: a client to call instead of ``store``'s, left open.
        journal: the run's journal; none if absent.
        concurrency: the calls in flight at most.
        stdout: the run's stdout; a new ``StringIO`` if absent.
        during: run beside the run, started once the run is.
        after: run once the run is over and its client is closed.

    Returns:
        What the run left. A run (or ``during``) still going after 30 s fails the test.
    """
    store = FakeAnimalStore(api_keys=(KEY,)) if store is None else store
    stdout = io.StringIO() if stdout is None else stdout
    stderr = io.StringIO()

    @contextlib.asynccontextmanager
    async def the_client() -> AsyncIterator[AsyncClient]:
        if client is not None:
            yield client
            return
        async with store.async_client(max_retries=0) as own:
            yield own

    async def go(stream: BinaryIO) -> tuple[int, Bulk]:
        async with the_client() as calling:
            progress = Progress(stderr, bar=False, fraction=lambda: None)
            bulk = Bulk(
                calling, NoJournal() if journal is None else journal, concurrency, stdout, progress
            )
            running = asyncio.ensure_future(bulk.run(read_records(stream, "jsonl"), stream))
            if during is not None:
                await asyncio.wait_for(during(bulk), 30)  # a hang's bound only
            status = await asyncio.wait_for(running, 30)
        if after is not None:
            await after(bulk)
        return status, bulk

    with contextlib.ExitStack() as stack:
        if isinstance(source, bytes):
            stream: BinaryIO = io.BytesIO(source)
        elif isinstance(source, Path):
            stream = stack.enter_context(open(source, "rb"))
        else:
            stream = source
        status, bulk = asyncio.run(go(stream))
    return Ran(status, bulk, stdout, stderr)
