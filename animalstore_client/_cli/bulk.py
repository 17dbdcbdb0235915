"""``pets create --from-file``: create every record of a file once, and resume after any stop.

One ``AsyncClient`` on one asyncio loop; ``concurrency`` workers, so at most that many calls
in flight. The input is read a group of records at a time, a bounded window ahead of the
calls (``feed.Feed``), so memory does not grow with the input but for the records' own keys,
remembered to refuse a second record with the same one. Each record's life:

1. A bad record is reported (stdout, with its line number) and never sent.
2. A record the journal shows as created or refused is not sent again: its outcome is
   printed as the earlier run wrote it.
3. Any other record gets its idempotency key: its own, the one the journal already holds for
   it, or a new one; a new key is written to the journal, and flushed to disk, before the
   record is first sent. The keys of a group (32 at least) are written together and their
   flush started at once, while the calls before them are in flight: one flush covers the
   group.
4. The call's outcome is journaled and printed: created, refused (a 400, 409, 413 or 422:
   the record itself was turned down), failed (any other error answer: 401, 429, 5xx ...) or
   unknown (no usable answer). A re-run resends the failed, unknown, started-but-unanswered
   and unsent records with their first keys.

Ctrl-C stops reading; the calls in flight finish (a second Ctrl-C cuts them short: they are
then unknown), the keys journaled for records not sent are journaled as unsent, the journal
is flushed, and the exit status is 130. SIGTERM (``docker stop``, Kubernetes, systemd) and
SIGHUP (the terminal closed) stop the run the same way, with 143 and 129; so does a closed
stdout, with 141. So does a run of ``2 x concurrency`` records (10 at least) that got no
answer, or an error answer that is not about the record: the service is down or refuses the
key; the rest is left for a re-run.

A record sent again that an earlier send may have created keeps that mark in the journal
(``resent``), so that every later run lists it among those a service that does not
deduplicate may hold twice, and ends with exit status 5 rather than 0 when every record is
created: a script can tell "each created once" from "created, some perhaps twice".
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import os
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import IO, Any, TextIO

import attrs

import animalstore_client as sdk
from animalstore_client._cli.feed import Feed, is_file
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
    JournalError,
    NoJournal,
    read_at,
)
from animalstore_client._cli.output import discard, error_json, json_line, print_error
from animalstore_client._cli.progress import Progress, Tally
from animalstore_client._cli.records import (
    InputError,
    Invalid,
    Record,
    format_of,
    read_records,
)
from animalstore_client._cli.status import (
    EXIT_API_ERROR,
    EXIT_BROKEN_PIPE,
    EXIT_HANGUP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_RESENT,
    EXIT_TERMINATED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
)
from animalstore_client._core.safe_repr import tolerant_repr

__all__ = [
    "BULK_EPILOG",
    "DEFAULT_CONCURRENCY",
    "MAX_CONCURRENCY",
    "Bulk",
    "create_from_file",
    "exit_status",
]

_log = logging.getLogger("animalstore_client.cli")

#: Calls in flight unless ``--concurrency`` says otherwise: past about 10, the default
#: backend's pool gets slower, not faster (docs/performance.md).
DEFAULT_CONCURRENCY = 8
#: The SDK's pool holds 100 connections: more calls in flight would only queue for one.
MAX_CONCURRENCY = 100
#: The fewest records read (and their keys journaled, then flushed to disk together) at a
#: time, when they need no wait: each flush, in a thread, costs the loop about a millisecond of
#: handing the interpreter's lock back and forth (measured), so a flush covers 32 keys at least.
_MIN_GROUP = 32
#: The most seconds a record's line waits in stdout's buffer, unless stdout is a terminal.
_FLUSH_SECONDS = 0.1
#: Error answers about the record itself: a re-run would get the same, so none is sent.
REFUSED_STATUSES = frozenset({400, 409, 413, 422})
#: The signals that stop a run as Ctrl-C does: each one's exit status, and what the summary
#: says.
_STOPPED_BY: dict[int, tuple[int, str]] = {
    signal.SIGINT: (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
    signal.SIGTERM: (EXIT_TERMINATED, "terminated (SIGTERM)"),
}
if hasattr(signal, "SIGHUP"):  # not on Windows
    _STOPPED_BY[signal.SIGHUP] = (EXIT_HANGUP, "hung up (SIGHUP)")
#: The exit statuses of a stop by a signal: they outrank any other reason to stop.
_SIGNAL_STATUSES = frozenset(status for status, _ in _STOPPED_BY.values())


@tolerant_repr
@attrs.define
class _Stop:
    """Why the run stopped before the end of the input, and the exit status that says so.

    Attributes:
        message: for the summary.
        status: the exit status; ``None``: the one the outcomes give (``exit_status``).
    """

    message: str
    status: int | None


@tolerant_repr
@attrs.frozen
class _Ready:
    """A record about to be sent, with its key.

    Attributes:
        record: the record.
        key: its idempotency key.
        ticket: the journal's ticket for its ``started`` entry, on disk before the send (0:
            none needed, the journal has it in doubt already).
        resent: whether an earlier run may have had it created: sent, and its answer lost (or
            not waited for), or a server error (5xx but 503) that may have come after.
    """

    record: Record
    key: str
    ticket: int
    resent: bool


class Bulk:
    """One run of ``pets create --from-file`` over an input, a client and a journal.

    ``concurrency`` workers each take the next record and send it; when no record is ready,
    the worker that finds so reads the next group, prints what needs no call (invalid lines,
    records done by an earlier run) and journals the new keys of the rest in one go. (A task
    per call instead costs about a quarter more time per record with httpx, measured.)

    Args:
        client: the client to create with; the run does not close it.
        journal: the journal (``Journal``), or ``NoJournal`` without ``--journal``.
        concurrency: the most calls in flight.
        stdout: where the record lines go.
        progress: the bar and summary on stderr.
    """

    def __init__(
        self,
        client: sdk.AsyncClient,
        journal: Journal | NoJournal,
        concurrency: int,
        stdout: TextIO,
        progress: Progress,
    ) -> None:
        self.tally = Tally()
        #: Why the run stopped early (``None``: it read the whole input).
        self.stop: _Stop | None = None
        self._client = client
        self._journal = journal
        self._concurrency = concurrency
        self._stdout = stdout
        self._terminal = stdout.isatty()
        self._progress = progress
        self._ready: collections.deque[_Ready] = collections.deque()
        self._reading = asyncio.Lock()
        self._workers: list[asyncio.Task[None]] = []
        self._flushed_at = 0.0
        self._no_answer_in_a_row = 0
        self._give_up_after = max(10, 2 * concurrency)
        self._interrupts = 0
        self._finished = False
        self._input: Feed | None = None

    async def run(self, records: Iterator[Record | Invalid], stream: IO[bytes]) -> int:
        """Create the records, ``concurrency`` at a time, until the input ends or a stop; finish.

        Args:
            records: the records, read and checked by ``records.read_records``.
            stream: the input they are read from.

        Returns:
            The exit status (``finish``).
        """
        self._input = Feed(records, stream, max(self._concurrency, _MIN_GROUP))
        self._workers = [asyncio.ensure_future(self._work()) for _ in range(self._concurrency)]
        try:
            # Every call started is seen to its end (or, after a second Ctrl-C, cut short),
            # so that each has its outcome journaled.
            ended = await asyncio.gather(*self._workers, return_exceptions=True)
            for outcome in ended:
                if isinstance(outcome, Exception):  # a bug: not one to hide
                    raise outcome
        finally:
            while self._ready:  # keys journaled for records that a stop left unsent
                self._not_sent(self._ready.popleft())
            status = self.finish()
        return status

    @property
    def reading(self) -> bool:
        """Whether a thread of the run may still be in a read of the input (from a pipe)."""
        return self._input is not None and self._input.reading

    def finish(self) -> int:
        """Flush the journal, print the summary, and return the exit status.

        Returns:
            130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP; 2, 4 or 141 after a stop
            those say (input, journal, stdout);
            otherwise 3 if any answer was lost, else 1 if any record was refused or failed,
            else 2 if any line was invalid, else 5 if any record was resent after a send that
            may have created it, else 0.
        """
        self._finished = True
        self._flush_stdout()
        journal = self._journal
        try:
            journal.close()
        except OSError as error:
            self._halt(f"cannot write the journal: {error.strerror or error}", EXIT_OUTPUT)
        if journal.path is not None:
            _log.debug(
                "journal %s: %d entries written, %d flushes to disk",
                journal.path,
                journal.entries,
                journal.fsyncs,
            )
        stop = self.stop
        self._progress.finish(
            self.tally,
            journal=self._journal.path,
            stopped=None if stop is None else self._stopped(stop),
        )
        return exit_status(self.tally, None if stop is None else stop.status)

    def _stopped(self, stop: _Stop) -> str:
        """Return why the run stopped early and, after a signal, how to go on from there.

        A signal stops a run that is otherwise fine, whose records a re-run with the journal
        takes up where it stopped; without one, a re-run starts again from the first record.
        """
        if stop.status not in _SIGNAL_STATUSES:
            return stop.message
        journal = self._journal.path
        if journal is not None:
            return (
                f"{stop.message}; run the same command again to go on: the journal {journal} "
                "holds what is done, and nothing done is sent again"
            )
        return (
            f"{stop.message}; without --journal, running the command again sends every record "
            "again, those created included (stdout lists them); give --journal FILE to be able "
            "to go on after a stop"
        )

    # -- the records, one after the other -------------------------------------------------

    async def _work(self) -> None:
        """Send the next ready record, until there is none or the run stops."""
        while (ready := await self._next()) is not None:
            await self._send(ready)

    async def _next(self) -> _Ready | None:
        """Return the next record to send, reading a group when none is ready.

        Once one is taken, the next group is read too if it needs no wait (a file), so that
        its keys are on disk before a worker needs one.
        """
        assert self._input is not None
        async with self._reading:
            try:
                while not self._ready and self.stop is None:
                    group = await self._input.next_group()
                    if group is None:
                        return None
                    self._take(group)
                if self.stop is not None:
                    return None
                ready = self._ready.popleft()
                if len(self._ready) < self._concurrency:
                    self._take(self._input.available())
            except OSError as error:
                self._halt(f"cannot read the input: {error.strerror or error}", EXIT_USAGE)
                return None
        return ready

    def _take(self, group: list[Record | Invalid]) -> None:
        """Print what needs no call; journal the new keys of the rest, then make them ready.

        The new keys go to the journal in one write, and their flush starts at once, while the
        calls before them are in flight, rather than when the first of them is due.
        """
        prepared: list[_Ready] = []
        fresh: list[Entry] = []
        self.tally.read += len(group)
        for item in group:
            if isinstance(item, Invalid):
                self.tally.invalid += 1
                self._print(item.line, "invalid", error=_invalid_error(item.message))
                continue
            try:
                ready = self._prepare(item)
            except JournalError as error:
                self._halt(str(error), EXIT_USAGE)
                return
            if ready is None:
                continue
            prepared.append(ready)
            if ready.ticket:
                fresh.append(
                    Entry(item.line, ready.key, item.digest, STARTED, resent=ready.resent or None)
                )
        ticket = 0
        if fresh:
            try:
                ticket = self._journal.append(*fresh)
            except OSError as error:
                self._halt(f"cannot write the journal: {error.strerror or error}", EXIT_OUTPUT)
                return
            self._journal.flush_ahead()
        self._ready.extend(
            attrs.evolve(ready, ticket=ticket) if ready.ticket else ready for ready in prepared
        )
        self._progress.update(self.tally)

    def _prepare(self, record: Record) -> _Ready | None:
        """Return the record with its key, or ``None`` when an earlier run saw it through.

        A key to journal as ``started`` before the send (a new one, or one an earlier run left
        unsent or refused unprocessed) has ``ticket`` 1 until it is.

        Raises:
            JournalError: the journal's entry for this line is for another record.
        """
        earlier = self._journal.entry(record.line)
        if earlier is None:
            key = record.idempotency_key or str(uuid.uuid4())
            return _Ready(record, key, 1, resent=False)
        if earlier.digest != record.digest:
            raise JournalError(
                f"line {record.line} of the input is not the record that the journal "
                f"{self._journal.path!r} holds for line {record.line}: the journal was written "
                "for another input, or the input changed since; nothing more is sent"
            )
        if earlier.state in (CREATED, REFUSED):
            if earlier.state == CREATED:
                self.tally.created_earlier += 1
            else:
                self.tally.refused_earlier += 1
            if earlier.resent:
                self.tally.resent_earlier.append(record.line)
            self._print(
                record.line,
                earlier.state,
                key=earlier.key,
                pet=earlier.pet,
                error=earlier.error,
                resent=bool(earlier.resent),
                earlier=True,
            )
            return None
        # Once it may have been created, it may be so twice.
        resent = _maybe_created(earlier) or bool(earlier.resent)
        # A record the journal shows as not sent (unsent, or refused unprocessed: a 503 ...) is
        # journaled started again before it is sent: a run killed after the send must leave
        # it in doubt, not as the journal had it. Its key is on disk already.
        ticket = 0 if _maybe_created(earlier) else 1
        return _Ready(record, earlier.key, ticket, resent=resent)

    def _not_sent(self, ready: _Ready) -> None:
        """Journal that a record given a key by this run is not sent after all (a stop).

        So that a re-run does not count it among the records that may exist twice.
        """
        if ready.ticket:  # a key this run journaled; an earlier run's keeps its state
            record, resent = ready.record, ready.resent or None
            with contextlib.suppress(OSError):  # the stop was the journal's failure
                self._journal.append(
                    Entry(record.line, ready.key, record.digest, UNSENT, resent=resent)
                )

    async def _send(self, ready: _Ready) -> None:
        """Send one record once its key is on disk; journal and print the outcome."""
        try:
            await self._journal.durable(ready.ticket)
        except OSError as error:
            self._halt(f"cannot write the journal: {error.strerror or error}", EXIT_OUTPUT)
            return
        except asyncio.CancelledError:
            self._not_sent(ready)
            raise
        if self.stop is not None:  # it came while the key was being flushed
            self._not_sent(ready)
            return
        record, key, resent = ready.record, ready.key, ready.resent
        if resent:
            self.tally.resent.append(record.line)
        pet = record.pet
        try:
            created = await self._client.create_pet(
                name=pet.name, category_id=pet.category_id, status=pet.status, idempotency_key=key
            )
        except asyncio.CancelledError:
            self._outcome(record, key, UNKNOWN, resent, error=_interrupted_error())
            raise
        except sdk.APIStatusError as error:
            refused = error.status_code in REFUSED_STATUSES
            self._outcome(record, key, REFUSED if refused else FAILED, resent, error)
        except sdk.APIError as error:
            # No answer, or one that cannot be read (it may say the animal was created).
            self._outcome(record, key, UNKNOWN, resent, error)
        else:
            self._outcome(record, key, CREATED, resent, pet=created.to_dict())

    def _outcome(
        self,
        record: Record,
        key: str,
        state: str,
        resent: bool,
        error: Exception | dict[str, Any] | None = None,
        pet: dict[str, Any] | None = None,
    ) -> None:
        tally = self.tally
        shown = error_json(error) if isinstance(error, Exception) else error
        if state == CREATED:
            tally.created += 1
        elif state == REFUSED:
            tally.refused += 1
        elif state == FAILED:
            tally.failed += 1
        else:
            tally.unknown += 1
            tally.lost.append(record.line)
        # Written before it is printed: what stdout shows, the journal holds.
        try:
            self._journal.append(
                Entry(record.line, key, record.digest, state, pet, shown, resent or None)
            )
        except OSError as error:
            self._halt(f"cannot write the journal: {error.strerror or error}", EXIT_OUTPUT)
        self._print(record.line, state, key=key, pet=pet, error=shown, resent=resent)
        self._progress.update(tally)
        if state in (CREATED, REFUSED):
            self._no_answer_in_a_row = 0
            return
        self._no_answer_in_a_row += 1
        if self._no_answer_in_a_row >= self._give_up_after:
            self._halt(
                f"the last {self._no_answer_in_a_row} records all failed (the latest: "
                f"{(shown or {}).get('message')}); the records not yet sent are left for a "
                "re-run",
                None,
            )

    # -- output and stops ---------------------------------------------------------------------

    def _print(
        self,
        line: int,
        state: str,
        *,
        key: str | None = None,
        pet: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        resent: bool = False,
        earlier: bool = False,
    ) -> None:
        """Print a record's line on stdout: line number, status, then what it has."""
        if self.stop is not None and self.stop.status in (EXIT_BROKEN_PIPE, EXIT_OUTPUT):
            return
        value: dict[str, Any] = {"line": line, "status": state}
        if pet is not None:
            value["pet"] = pet
        if error is not None:
            value["error"] = error
        if key is not None:
            value["idempotency_key"] = key
        if resent:
            value["resent"] = True
        if earlier:
            value["earlier"] = True
        try:
            self._stdout.write(json_line(value, terminal=self._terminal) + "\n")
            now = time.monotonic()
            # Each line at once to a person; to a pipe or a file a few times a second (a write
            # per record cost about a tenth of the throughput). The journal, not stdout, is what
            # a re-run reads.
            if self._terminal or now - self._flushed_at >= _FLUSH_SECONDS:
                self._flushed_at = now
                self._stdout.flush()
        except OSError as error:
            self._stdout_failed(error)

    def _flush_stdout(self) -> None:
        if self.stop is not None and self.stop.status in (EXIT_BROKEN_PIPE, EXIT_OUTPUT):
            return
        try:
            self._stdout.flush()
        except OSError as error:
            self._stdout_failed(error)

    def _stdout_failed(self, error: OSError) -> None:
        """Stop as on Ctrl-C, printing nothing more: stdout was closed (``| head``) or failed."""
        discard(self._stdout)
        if isinstance(error, BrokenPipeError):
            self._halt("stdout was closed", EXIT_BROKEN_PIPE)
        else:
            self._halt(f"cannot write to stdout: {error.strerror or error}", EXIT_OUTPUT)

    def _halt(self, message: str, status: int | None) -> None:
        """Stop reading and sending: the calls in flight finish. The first reason is kept.

        Args:
            message: why, for the summary.
            status: the exit status to end with; ``None`` for the one the outcomes give.
        """
        if self.stop is None or status in _SIGNAL_STATUSES:
            self.stop = _Stop(message, status)
        if self._input is not None:
            self._input.stop()

    def interrupt(self, signum: int) -> None:
        """Stop the run on a signal, as Ctrl-C does; cut the calls in flight short at a second.

        After ``finish`` there is nothing left to stop: the signal is let go.

        Args:
            signum: the signal.
        """
        if self._finished:
            return
        self._interrupts += 1
        if self._interrupts == 1:
            status, what = _STOPPED_BY[signum]
            self._halt(what, status)
            what, again = (
                ("interrupted", "Ctrl-C again")
                if signum == signal.SIGINT
                else (what, "another signal")
            )
            self._progress.note(
                f"{what}: waiting for the calls in flight to end; {again} to stop waiting "
                "(their records are then resent by a re-run)"
            )
            return
        for worker in self._workers:
            worker.cancel()


def exit_status(tally: Tally, stopped: int | None) -> int:
    """Return a run's exit status: what stopped it, else the worst outcome.

    Args:
        tally: the counts.
        stopped: the status of what stopped the run early, if something did.

    Returns:
        ``stopped`` if it is 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP), 2 (input or journal),
        4 or 141 (stdout); else 3 if an answer was lost, 1 if a record was refused or failed
        (now or earlier), 2 if a line was invalid, 5 if every record was created but some
        were resent (now or earlier) after a send that may have created them, 0 if every
        record was created once.
    """
    if stopped is not None and (
        stopped in _SIGNAL_STATUSES or stopped in (EXIT_USAGE, EXIT_OUTPUT, EXIT_BROKEN_PIPE)
    ):
        return stopped
    if tally.unknown:
        return EXIT_UNREACHABLE
    if tally.refused or tally.failed or tally.refused_earlier:
        return EXIT_API_ERROR
    if tally.invalid:
        return EXIT_USAGE
    if tally.resent or tally.resent_earlier:
        return EXIT_RESENT
    return EXIT_OK


def _maybe_created(entry: Entry) -> bool:
    """Whether the record of a journal entry that is not final may have been created.

    Yes when it was sent and its answer lost (or not waited for: ``started`` after a crash),
    or answered with a server error, which may come after the animal was stored; no when it
    was never sent (``unsent``), or refused unprocessed (a 4xx, 429, 503).
    """
    if entry.state in (STARTED, UNKNOWN):
        return True
    status = (entry.error or {}).get("status")
    return entry.state == FAILED and isinstance(status, int) and status >= 500 and status != 503


def _invalid_error(message: str) -> dict[str, Any]:
    return {"code": "invalid_record", "message": message, "status": None}


def _interrupted_error() -> dict[str, Any]:
    return {
        "code": "interrupted",
        "message": "the run was interrupted while the call was in flight: its answer is unknown",
        "status": None,
    }


def _handle_signals(
    loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]
) -> Callable[[], None]:
    """Call ``handler(signum)`` in the loop on each signal of ``_STOPPED_BY``; return the undo.

    A signal that is ignored is left so, as Python itself leaves it: a background job's
    SIGINT, ``nohup``'s SIGHUP.
    """
    undo: list[Callable[[], object]] = []
    for signum in _STOPPED_BY:
        previous = signal.getsignal(signum)
        if previous is signal.SIG_IGN:
            continue
        try:
            loop.add_signal_handler(signum, handler, signum)
            undo.append(functools.partial(loop.remove_signal_handler, signum))
        except NotImplementedError:  # Windows: from the signal handler, through the loop
            signal.signal(signum, lambda number, _: loop.call_soon_threadsafe(handler, number))
        if previous is not None:  # the loop's removal leaves Python's default, not the caller's
            undo.append(functools.partial(signal.signal, signum, previous))

    def restore() -> None:
        for step in undo:
            step()

    return restore


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """Hold back the signals of ``_STOPPED_BY`` for the block; yield the list of those caught.

    The handlers in force before the block are back once it is over; what the signals caught
    meanwhile mean is the caller's to decide. One that is ignored stays so.
    """
    caught: list[int] = []
    held = {
        signum: signal.signal(signum, lambda number, _frame: caught.append(number))
        for signum in _STOPPED_BY
        if signal.getsignal(signum) not in (signal.SIG_IGN, None)
    }
    try:
        yield caught
    finally:
        for signum, handler in held.items():
            signal.signal(signum, handler)


BULK_EPILOG = f"""\
--from-file FILE (- for stdin):
  JSON lines (.jsonl, .ndjson), one object per line, or CSV (.csv) with a header; fields
  name, categoryId (or category_id), status, and optionally idempotency_key. Each record
  is checked before it is sent; a bad one is reported with its line number, never sent,
  and the others go on. At most --concurrency calls are in flight (default: {DEFAULT_CONCURRENCY}).

  stdout: one JSON line per record, in the order the outcomes come:
    {{"line": N, "status": "created", "pet": {{...}}, "idempotency_key": "..."}}
    status is created, refused (400, 409, 413, 422: final), failed (another error answer),
    unknown (the answer was lost) or invalid; "error" holds the Error JSON. A re-run adds
    "earlier": true to what a past run did, "resent": true to what it sends again that a
    past run may have created (its answer lost, or a server error).
  stderr: a progress bar on a terminal, then a summary line, always.

--journal FILE:
  JSON lines: a header (the command and the API's address), then each record's line,
  key, content digest and state. A new key is on disk before its record is first sent.
  Created readable by its owner only. Run the same command with the same journal again
  after a failure, an outage, Ctrl-C, SIGTERM or kill -9: records created or refused are
  not sent again; the others are sent with their first keys, so a service that
  deduplicates by Idempotency-Key creates none twice. One that does not may create twice
  only the records whose answer was lost (or that got a server error): each run lists
  them. A journal is refused for another API address or another input (line by line).
  Two records with the same idempotency_key are one too many: the later is invalid.

checking a run:
  the last line of each record in the journal (or its stdout line) is its outcome; the
  summary on stderr counts them and lists the lines that may exist twice, with their keys
  on stdout. The API cannot find an animal by key, nor list more than 100 animals: a
  doubt about a listed line cannot be settled through it, only by a service that
  deduplicates (run again) or by its operators.

exit status: 0 every record created, each once; 1 the API refused or failed some; 2 bad
  usage, a bad line (nothing else wrong), or a journal that does not belong; 3 an answer
  was lost (run again with the journal); 4 stdout or the journal could not be written; 5
  every record created, but some were resent after a send that may have created them (a
  service that does not deduplicate may hold those twice: the summary lists them); 129
  SIGHUP, 130 Ctrl-C, 143 SIGTERM (the journal is consistent: run again to go on).
"""


def create_from_file(
    client: sdk.AsyncClient,
    source: str,
    *,
    given_format: str | None,
    concurrency: int,
    journal: str | None,
) -> int:
    """Run ``pets create --from-file``: open the input and the journal, create, summarise.

    Args:
        client: the client, not yet used; closed here.
        source: the input's path, ``-`` for stdin.
        given_format: ``--format``, or ``None`` to go by the extension.
        concurrency: the most calls in flight.
        journal: the journal's path, or ``None``.

    Returns:
        The exit status (see ``exit_status``); 2 when the input, its format or the journal
        cannot be used, 4 when stdout is closed: in either case nothing was sent.
    """
    if sys.stdout is None:  # started with stdout closed (`>&-`): no outcome could be shown
        return _refuse(
            "stdout is closed: no record's outcome could be shown; none was sent", EXIT_OUTPUT
        )
    try:
        stream, records, opened = _open_input(client.base_url, source, given_format, journal)
    except _Unusable as error:
        return _refuse(str(error))
    progress = Progress(sys.stderr, bar=sys.stderr.isatty(), fraction=_fraction_read(stream))
    bulk = Bulk(client, opened, concurrency, sys.stdout, progress)

    async def run() -> int:
        async with client:
            return await bulk.run(records, stream)

    try:
        with _event_loop(bulk.interrupt) as loop:
            return loop.run_until_complete(run())
    finally:
        # A pipe's reader may still wait in a read (its writer keeps it open: `tail -f`);
        # closing the input would wait for that read, for ever. The exit closes it.
        if not bulk.reading:
            stream.close()


class _Unusable(Exception):
    """The input, its format or the journal cannot be used: the message says why."""


def _open_input(
    base_url: str, source: str, given_format: str | None, journal: str | None
) -> tuple[IO[bytes], Iterator[Record | Invalid], Journal | NoJournal]:
    """Open the input and its journal, and check that they belong together.

    Returns:
        The input, its records (read as they are iterated) and the journal, open.

    Raises:
        _Unusable: one of them cannot be used; what was opened is closed.
    """
    with contextlib.ExitStack() as opened:
        try:
            format = format_of(source, given_format)
            # stdin through a file object of the run's own: a reader thread left in a read of
            # sys.stdin's would make the interpreter's exit, which flushes it, abort.
            stream = opened.enter_context(open(os.dup(0) if source == "-" else source, "rb"))
            start = os.lseek(stream.fileno(), 0, os.SEEK_CUR) if is_file(stream) else None
        except InputError as error:
            raise _Unusable(str(error)) from None
        except OSError as error:
            raise _Unusable(f"cannot read {source!r}: {error.strerror or error}") from None
        try:
            records = read_records(stream, format)
            kept: Journal | NoJournal = (
                NoJournal()
                if journal is None
                else opened.enter_context(
                    contextlib.closing(Journal.open(journal, Header(base_url, source, format)))
                )
            )
        except (InputError, JournalError) as error:
            raise _Unusable(str(error)) from None
        except OSError as error:
            what = f"the journal {journal!r}" if journal else repr(source)
            raise _Unusable(f"cannot use {what}: {error.strerror or error}") from None
        try:
            _check_journal(kept, stream, start, source)
        except (JournalError, OSError) as error:
            raise _Unusable(str(error)) from None
        opened.pop_all()  # the run closes them
    return stream, records, kept


@contextlib.contextmanager
def _event_loop(interrupt: Callable[[int], None]) -> Iterator[asyncio.AbstractEventLoop]:
    """Yield a new event loop on which each signal of ``_STOPPED_BY`` calls ``interrupt``.

    Not asyncio.run, nor asyncio.Runner (which Python 3.10 lacks): from Python 3.11 they
    handle SIGINT themselves, by cancelling the run from outside, until the run's first step
    sets the handlers; set here, before the loop runs, they leave it nothing to handle. They
    last until the very end (the summary, the client's closing, the loop's own): a signal that
    comes once the run is over has nothing to stop. A signal inside the loop's constructor or
    its close would interrupt it half done, and its __del__ then prints a traceback: one that
    comes while the loop is built stops the run as at its first step; one while it closes
    comes after the run, with nothing left to stop.
    """
    with _signals_held() as early:
        loop = asyncio.new_event_loop()
    restore = _handle_signals(loop, interrupt)
    for signum in early:
        interrupt(signum)
    try:
        yield loop
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            restore()
            with _signals_held():
                loop.close()


def _check_journal(
    journal: Journal | NoJournal, stream: IO[bytes], start: int | None, source: str
) -> None:
    """Refuse a journal that cannot be this input's; say so if others may read it.

    Raises:
        JournalError: the journal has an entry for a line the input (a file) does not have.
        OSError: the input cannot be read.
    """
    if journal.path is None:
        return
    if start is not None and journal.last_line and not _has_line(stream, start, journal.last_line):
        raise JournalError(
            f"the journal {journal.path!r} has an entry for line {journal.last_line:,}, which "
            f"{source!r} does not have: it was written for another input; give another --journal"
        )
    if os.name == "posix" and journal.mode & 0o077:
        print(
            f"notice: the journal {journal.path!r} can be read by other users (mode "
            f"{journal.mode:04o}) and holds names, keys and error messages: "
            f"chmod 600 {journal.path!r}",
            file=sys.stderr,
            flush=True,
        )


def _has_line(stream: IO[bytes], start: int, line: int) -> bool:
    """Whether the file read from ``start`` has a line ``line`` (from 1): it is read up to it."""
    fd = stream.fileno()
    seen, offset, last = 0, start, b"\n"
    while seen < line:
        chunk = read_at(fd, 1 << 20, offset)
        if not chunk:
            # A last line without its line end counts too.
            return seen + (last != b"\n") >= line
        seen += chunk.count(b"\n")
        offset += len(chunk)
        last = chunk[-1:]
    return True


def _refuse(message: str, status: int = EXIT_USAGE) -> int:
    print_error(ValueError(message), as_json=False)
    return status


def _fraction_read(stream: IO[bytes]) -> Callable[[], float | None]:
    """Return how to tell how much of ``stream`` was read: ``None`` for a pipe."""
    size = os.fstat(stream.fileno()).st_size if is_file(stream) else 0
    if not size:
        return lambda: None
    # What the records read so far took, not the descriptor's offset, which is a buffer ahead
    # (a file is read in the loop: nothing else moves the stream meanwhile).
    return lambda: min(stream.tell() / size, 1.0)
