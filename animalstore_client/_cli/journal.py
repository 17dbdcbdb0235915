"""The journal of ``pets create --from-file``: each record's key and outcome, on disk.

An append-only file of JSON lines. The first line is a header saying what the journal is for
(the command and the API's address); each other line is an ``Entry``: a record's line number,
its idempotency key, a digest of its content, and a state: ``started`` before its first send,
then ``created``, ``refused``, ``failed`` or ``unknown``, or ``unsent`` when the run stopped
before sending it after all. Every entry is whole on its own, so a record's state is its last
entry.

The file is created readable and writable by its owner alone (0600): it holds names, keys and
error messages. Entries are read back with ``os.pread``, never through a buffered reader on the
descriptor the entries are appended to: a seek inside such a reader's buffer does not move the
descriptor, which each append moves to the end, so its next refill would read from there.

Durability: entries are written with one ``write`` each, so a killed process loses none it
wrote; ``durable()`` flushes them to the disk (``fdatasync``), one flush for every entry
written before it (group commit), which is what a key needs before its first send. Only a
crash of the machine can cut the last line short: reopening drops such a line.

A re-run reads the journal once, keeping an index of where each line's last entry is (two
integers per record), and reads an entry back only when its line comes up.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import stat
from array import array
from typing import IO, Any

import attrs

from animalstore_client._core.safe_repr import tolerant_repr

__all__ = [
    "FINAL_STATES",
    "STATES",
    "Entry",
    "Header",
    "Journal",
    "JournalError",
    "NoJournal",
    "read_at",
]

_KIND = "animalstore pets create --from-file"
_VERSION = 1
STARTED, UNSENT = "started", "unsent"
CREATED, REFUSED, FAILED, UNKNOWN = "created", "refused", "failed", "unknown"
#: Every state an entry can have.
STATES = (STARTED, UNSENT, CREATED, REFUSED, FAILED, UNKNOWN)
#: The states after which a re-run sends nothing for the record.
FINAL_STATES = frozenset({CREATED, REFUSED})
#: The largest line number an entry may have: the index keeps each one as an int64.
_MAX_LINE = (1 << 63) - 1
#: The bytes read at a time when an entry is read back: most entries are shorter.
_CHUNK = 4096


class JournalError(Exception):
    """The journal cannot be used for this run; nothing was sent, and the file is untouched."""


@tolerant_repr
@attrs.frozen
class Header:
    """What a journal is for: its first line.

    Attributes:
        base_url: the API's address the records are sent to; a journal is refused for another.
        input: the input's path as given (``-`` for stdin), for messages only.
        format: ``jsonl`` or ``csv``, for messages only.
    """

    base_url: str
    input: str
    format: str

    def to_json(self) -> dict[str, Any]:
        """Return the header line's JSON object."""
        return {"journal": _KIND, "version": _VERSION, **attrs.asdict(self)}


def _line_number(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # A bool is an int to Python, not a line number; nor is one the index cannot hold.
    if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _MAX_LINE):
        raise ValueError(f"its line must be a line number (1 or more), got {_shown(value)}")


def _text(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise ValueError(f"its {attribute.name} must be a string, got {_shown(value)}")


def _state(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in STATES:
        raise ValueError(f"its state must be one of {', '.join(STATES)}, got {_shown(value)}")


def _optional_true(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and value is not True:  # 1 == True, but 1 is no flag
        raise ValueError(f"its {attribute.name} must be true or absent, got {_shown(value)}")


def _optional_object(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, dict):
        raise TypeError(f"{attribute.name} must be an object or absent")


@tolerant_repr
@attrs.frozen
class Entry:
    """One line of the journal: a record's key and state, whole on its own.

    Attributes:
        line: the record's line in the input, from 1.
        key: its idempotency key, sent on every attempt of every run.
        digest: the digest of its content (``records.Record.digest``).
        state: one of ``STATES``.
        pet: the created animal's wire JSON (``created``).
        error: the Error JSON of the failure (``refused``, ``failed``, ``unknown``).
        resent: ``True`` on the outcome of a record sent again that an earlier send may have
            created (its answer lost, or a server error): it may exist twice, whatever comes
            after; ``None`` otherwise (left out of the line).
    """

    line: int = attrs.field(validator=_line_number)
    key: str = attrs.field(validator=_text)
    digest: str = attrs.field(validator=_text)
    state: str = attrs.field(validator=_state)
    pet: dict[str, Any] | None = attrs.field(default=None, validator=_optional_object)
    error: dict[str, Any] | None = attrs.field(default=None, validator=_optional_object)
    resent: bool | None = attrs.field(default=None, validator=_optional_true)

    def to_json(self) -> dict[str, Any]:
        """Return the entry's JSON object, absent fields left out."""
        # Not recursive: the pet and the error are plain JSON already, not copied again.
        return attrs.asdict(self, recurse=False, filter=lambda _, value: value is not None)


class Journal:
    """A journal file opened for one run: its past entries indexed, new ones appended.

    Use ``Journal.open``; close it with ``close()``. Not thread-safe: one event loop uses it.

    Attributes:
        path: the file's path.
        fsyncs: how many flushes to disk this run made.
    """

    def __init__(self, path: str, fd: int, lines: array[int], offsets: array[int]) -> None:
        self.path = path
        self.fsyncs = 0
        self._fd = fd
        # Sorted line numbers, and the offset of each one's last entry: the whole index.
        self._lines = lines
        self._offsets = offsets
        self._written = 0  # entries written by this run
        self._synced = 0  # of which this many are on disk
        self._sync: asyncio.Task[None] | None = None
        self._failure: OSError | None = None

    @property
    def entries(self) -> int:
        """How many entries this run wrote."""
        return self._written

    @property
    def last_line(self) -> int:
        """The largest line number an earlier run journaled (0: none)."""
        return self._lines[-1] if self._lines else 0

    @property
    def mode(self) -> int:
        """The file's permission bits (``0o600`` for a journal this command created)."""
        return stat.S_IMODE(os.fstat(self._fd).st_mode)

    @classmethod
    def open(cls, path: str, header: Header) -> Journal:
        """Open (or create) the journal at ``path`` for a run with ``header``; lock it.

        A last line cut short (the machine crashed while it was written) is dropped.

        Args:
            path: the file's path.
            header: what the run is: the journal must have been written for the same API.

        Returns:
            The journal, its past entries indexed.

        Raises:
            JournalError: the file is not a journal of this command (or not a regular file),
                was written for another API address, has an entry that cannot be read, or is
                in use by another run.
            OSError: the file cannot be opened, read or written.
        """
        # The owner's alone: the entries hold names, keys and error messages.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                # /dev/stdout, a pipe ...: neither read back nor flushed to a disk.
                raise JournalError(f"the journal {path!r} is not a regular file")
            _lock(fd, path)
            # Read once, before anything is appended; entries are read back with pread.
            with open(fd, "rb", closefd=False) as reader:
                lines, offsets, end = _read_index(reader, path, header)
            if end < os.fstat(fd).st_size:
                os.ftruncate(fd, end)  # the torn last line
            if end == 0:
                _write_all(fd, _encode(header.to_json()))
                os.fsync(fd)
                _sync_directory(path)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, lines, offsets)

    def entry(self, line: int) -> Entry | None:
        """Return the last entry an earlier run wrote for ``line``, or ``None``.

        Raises:
            JournalError: the entry cannot be read back.
        """
        index = bisect.bisect_left(self._lines, line)
        if index == len(self._lines) or self._lines[index] != line:
            return None
        return _entry(self._read_line(self._offsets[index]), self.path, None)

    def _read_line(self, offset: int) -> bytes:
        """Return the line of the file that starts at ``offset``, with its line end."""
        chunks = []
        while chunk := read_at(self._fd, _CHUNK, offset):
            end = chunk.find(b"\n")
            if end >= 0:
                chunks.append(chunk[: end + 1])
                break
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks)

    def append(self, *entries: Entry) -> int:
        """Write ``entries`` at the end of the file, in one write (not yet flushed to disk).

        Returns:
            A ticket: ``durable(ticket)`` returns once the entries are on disk.

        Raises:
            OSError: the write failed, or an earlier write or flush did: once one has, the
                journal is no longer trusted.
        """
        if self._failure is not None:
            raise self._failure
        try:
            _write_all(self._fd, b"".join(_encode(entry.to_json()) for entry in entries))
        except OSError as error:
            self._failure = error
            raise
        self._written += len(entries)
        return self._written

    async def durable(self, ticket: int) -> None:
        """Return once the entry of ``ticket`` is on disk, flushing what is written if needed.

        One flush covers every entry written before it starts; callers that arrive during a
        flush share the next one.

        Raises:
            OSError: the flush failed (then every later call fails too).
        """
        while self._synced < ticket:
            if self._failure is not None:
                raise self._failure
            if self._sync is None:
                self._sync = asyncio.ensure_future(self._flush())
            # Shielded: a caller cancelled while it waits must not cancel the others' flush.
            await asyncio.shield(self._sync)

    def flush_ahead(self) -> None:
        """Start flushing what is written to disk, if it is not, without waiting for it.

        A failure is kept for the next ``append`` or ``durable`` to raise.
        """
        if self._sync is None and self._synced < self._written and self._failure is None:
            self._sync = asyncio.ensure_future(self._flush())
            # Retrieved here, so that a failure nobody awaits is not reported as such.
            self._sync.add_done_callback(lambda flush: flush.cancelled() or flush.exception())

    async def _flush(self) -> None:
        target = self._written
        try:
            await asyncio.get_running_loop().run_in_executor(None, _flush_to_disk, self._fd)
        except OSError as error:
            self._failure = error
            raise
        finally:
            self._sync = None
        self.fsyncs += 1
        self._synced = target

    def close(self) -> None:
        """Flush what this run wrote to disk, and close the file (which unlocks it).

        Raises:
            OSError: the last flush failed; the file is closed all the same.
        """
        try:
            if self._written > self._synced and self._failure is None:
                _flush_to_disk(self._fd)
                self.fsyncs += 1
                self._synced = self._written
        finally:
            os.close(self._fd)


class NoJournal:
    """What a run without ``--journal`` uses: nothing is kept, nothing is read back."""

    path = None
    fsyncs = 0
    entries = 0

    last_line = 0

    def entry(self, line: int) -> Entry | None:
        """Return ``None``: no earlier run is known."""
        return None

    def append(self, *entries: Entry) -> int:
        """Keep nothing; return a ticket that is already durable."""
        return 0

    async def durable(self, ticket: int) -> None:
        """Return at once."""

    def flush_ahead(self) -> None:
        """Do nothing."""

    def close(self) -> None:
        """Do nothing."""


def _encode(value: dict[str, Any]) -> bytes:
    # ASCII: a name with a lone surrogate (which an answer may hold) still writes.
    return json.dumps(value, separators=(",", ":")).encode("ascii") + b"\n"


def read_at(fd: int, size: int, offset: int) -> bytes:
    """Read up to ``size`` bytes of the file ``fd`` at ``offset``, whatever its position."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    # Windows has no pread; nothing reads this descriptor in another thread.
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _flush_to_disk(fd: int) -> None:
    # The data, and the size that finds it: all that reading the entries back needs.
    (os.fdatasync if hasattr(os, "fdatasync") else os.fsync)(fd)


def _sync_directory(path: str) -> None:
    """Flush the new file's directory entry, so that the file itself survives a crash."""
    if os.name != "posix":  # Windows cannot open a directory; NTFS journals its metadata
        return
    directory = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _lock(fd: int, path: str) -> None:
    """Lock the journal for this run; released when the file is closed or the process dies."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; two runs on one journal are not caught
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JournalError(f"the journal {path!r} is in use by another run") from None


def _read_index(reader: IO[bytes], path: str, header: Header) -> tuple[array[int], array[int], int]:
    """Read every entry once; return the index (lines, offsets) and where the file ends whole."""
    lines: array[int] = array("q")
    offsets: array[int] = array("q")
    first = reader.readline()
    if not first:
        return lines, offsets, 0
    if not first.endswith(b"\n") and first.startswith(b'{"journal":'):
        return lines, offsets, 0  # the header itself was cut short: nothing else was written
    _check_header(first, path, header)
    offset = len(first)
    number = 1
    for raw in reader:
        number += 1
        if not raw.endswith(b"\n"):
            break  # the last line, cut short by a crash: dropped, its record resent
        line = _entry(raw, path, number).line
        _index(lines, offsets, line, offset)
        offset += len(raw)
    return lines, offsets, offset


def _check_header(raw: bytes, path: str, header: Header) -> None:
    try:
        found = json.loads(raw)
    except ValueError:
        found = None
    if not (isinstance(found, dict) and found.get("journal") == _KIND):
        raise JournalError(
            f"{path!r} is not a journal of 'pets create --from-file' (its first line is not a "
            "journal header); it was left as it is: give a new file or one an earlier run wrote"
        )
    if found.get("version") != _VERSION:
        raise JournalError(f"the journal {path!r} has version {found.get('version')!r}, not 1")
    if found.get("base_url") != header.base_url:
        raise JournalError(
            f"the journal {path!r} was written for the API at {found.get('base_url')!r}, not "
            f"{header.base_url!r}: its records' outcomes say nothing of this one; give "
            "another --journal"
        )


def _entry(raw: bytes, path: str, number: int | None) -> Entry:
    try:
        return Entry(**json.loads(raw))
    except (ValueError, TypeError, RecursionError) as error:
        where = f"line {number}" if number is not None else "an entry"
        raise JournalError(
            f"{where} of the journal {path!r} cannot be read: {error}; it was left as it is"
        ) from None


def _shown(value: object) -> str:
    # A huge integer's repr would fill the line (and past 4,300 digits raise ValueError).
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else "a huge integer"
    return text if len(text) <= 40 else text[:37] + "..."


def _index(lines: array[int], offsets: array[int], line: int, offset: int) -> None:
    """Point ``line`` at the entry at ``offset``, keeping ``lines`` sorted."""
    # Entries come in line order but for a record's later entries, and for a line first
    # journaled by a later run (an invalid line since corrected): those are looked up.
    if not lines or line > lines[-1]:
        lines.append(line)
        offsets.append(offset)
        return
    index = bisect.bisect_left(lines, line)
    if lines[index] == line:
        offsets[index] = offset
    else:
        lines.insert(index, line)
        offsets.insert(index, offset)
