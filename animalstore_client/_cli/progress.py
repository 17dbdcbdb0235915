"""What ``pets create --from-file`` counts, and shows on stderr: a progress bar and a summary.

The bar is drawn only on a terminal, at most ten times a second, on one line that the summary
replaces; it is full only once every record read is done and the input is read to its end.
The summary line is always written, and after it the lines of the records that a
service which does not deduplicate by ``Idempotency-Key`` may have created twice.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import time
from array import array
from collections.abc import Callable
from typing import TextIO

import attrs

from animalstore_client._core.safe_repr import tolerant_repr

__all__ = ["Progress", "Tally"]

_REDRAW_SECONDS = 0.1
_BAR_WIDTH = 20
#: Lines listed by number on stderr before "and N more"; stdout lists every one.
_LISTED = 50


@tolerant_repr
@attrs.define
class Tally:
    """The count of each outcome, for the bar, the summary and the exit status.

    Attributes:
        created: records created by this run.
        refused: records the API refused, in this run (a 400 or the like: final).
        failed: records that got another error answer (401, 429, 5xx ...): resent by a re-run.
        unknown: records sent whose answer was lost (no answer, or one that cannot be read).
        invalid: lines that are not valid records: never sent.
        created_earlier: records a journaled earlier run created: not sent again.
        refused_earlier: records a journaled earlier run saw refused: not sent again.
        read: records and invalid lines read from the input so far, done or not.
        lost: the lines of the records whose answer this run lost.
        resent: the lines of the records this run sent again that an earlier run may have
            created (its answer lost, or a server error).
        resent_earlier: the lines of the records an earlier run saw through after such a
            resend (created or refused): they too may exist twice.
    """

    created: int = 0
    refused: int = 0
    failed: int = 0
    unknown: int = 0
    invalid: int = 0
    created_earlier: int = 0
    refused_earlier: int = 0
    read: int = 0
    lost: array[int] = attrs.field(factory=lambda: array("q"))
    resent: array[int] = attrs.field(factory=lambda: array("q"))
    resent_earlier: array[int] = attrs.field(factory=lambda: array("q"))

    @property
    def sent(self) -> int:
        """Records this run sent and got an outcome for."""
        return self.created + self.refused + self.failed + self.unknown

    @property
    def done(self) -> int:
        """Records with an outcome: sent by this run, found invalid, or done earlier."""
        return self.sent + self.invalid + self.created_earlier + self.refused_earlier

    @property
    def not_created(self) -> int:
        """Records with an outcome other than created."""
        return self.done - self.created - self.created_earlier


class Progress:
    """The progress bar (on a terminal) and the summary line, on ``stream``.

    Args:
        stream: where to draw: stderr.
        bar: whether to draw the bar (``stream`` is a terminal).
        fraction: returns how much of the input has been read, 0 to 1, or ``None`` when that
            cannot be known (a pipe); with the share of the records read that are done, it
            gives how far the bar is and the time left.
    """

    def __init__(self, stream: TextIO, *, bar: bool, fraction: Callable[[], float | None]) -> None:
        self._stream = stream
        self._bar = bar
        self._fraction = fraction
        self._started = time.monotonic()
        self._drawn_at = -math.inf  # never: the first update draws
        self._drawn = False

    def update(self, tally: Tally) -> None:
        """Redraw the bar for ``tally``, unless it was drawn less than 0.1 s ago."""
        if not self._bar:
            return
        now = time.monotonic()
        if now - self._drawn_at < _REDRAW_SECONDS:
            return
        self._drawn_at = now
        width = shutil.get_terminal_size().columns
        self._write("\r" + self.bar_line(tally, now)[: max(width - 1, 0)] + "\x1b[K")
        self._drawn = True

    def note(self, message: str) -> None:
        """Write ``message`` on a line of its own, above the bar."""
        self._write(("\r\x1b[K" if self._drawn else "") + message + "\n")
        self._drawn = False
        self._drawn_at = -math.inf  # the bar comes back at the next update

    def bar_line(self, tally: Tally, now: float) -> str:
        """Return the bar's text: how far, done, failed, rate and time left.

        Args:
            tally: the counts so far.
            now: ``time.monotonic()``.

        Returns:
            One line, without a line end.
        """
        elapsed = max(now - self._started, 1e-9)
        fraction = self._fraction()
        if fraction is None:
            bar, left = "", ""
        else:
            # Read is not done: the records read ahead of the calls are not there yet.
            fraction = fraction * tally.done / tally.read if tally.read else 0.0
            filled = int(fraction * _BAR_WIDTH)  # full only when all is done
            bar = "[" + "#" * filled + "." * (_BAR_WIDTH - filled) + "] "
            left = "  " + (
                _duration(elapsed * (1 - fraction) / fraction) + " left" if fraction else "? left"
            )
        rate = tally.sent / elapsed
        return f"{bar}{tally.done:,} done  {tally.not_created:,} failed  {rate:,.0f}/s{left}"

    def finish(self, tally: Tally, *, journal: str | None, stopped: str | None) -> None:
        """Replace the bar with the summary line, then list the lines at risk of duplicates.

        Args:
            tally: the final counts.
            journal: the journal's path, or ``None`` without ``--journal``.
            stopped: why the run stopped before the end of the input, if it did.
        """
        elapsed = time.monotonic() - self._started
        lines = self.summary(tally, elapsed=elapsed, journal=journal, stopped=stopped)
        self._write(("\r\x1b[K" if self._drawn else "") + "".join(line + "\n" for line in lines))

    def _write(self, text: str) -> None:
        # A stderr that cannot be written (the terminal hung up) has no one to tell; the
        # journal and the exit status still say what happened.
        with contextlib.suppress(OSError):
            self._stream.write(text)
            self._stream.flush()

    @staticmethod
    def summary(
        tally: Tally, *, elapsed: float, journal: str | None, stopped: str | None
    ) -> list[str]:
        """Return the summary line, and one line for each list of records at risk.

        Args:
            tally: the final counts.
            elapsed: how long the run took, in seconds.
            journal: the journal's path, or ``None``.
            stopped: why the run stopped early, if it did.

        Returns:
            The lines, without line ends.
        """
        counts = [
            f"{tally.created:,} created",
            f"{tally.refused:,} refused",
            f"{tally.failed:,} failed",
            f"{tally.unknown:,} unknown",
            f"{tally.invalid:,} invalid",
        ]
        if tally.created_earlier or tally.refused_earlier:
            counts.append(
                f"{tally.created_earlier:,} created and {tally.refused_earlier:,} refused "
                "by an earlier run (not sent again)"
            )
        rate = tally.sent / elapsed if elapsed > 0 else 0.0
        where = f"journal {journal}" if journal is not None else "no journal"
        lines = [f"pets create: {', '.join(counts)}; {elapsed:.1f} s, {rate:,.0f}/s; {where}"]
        if stopped is not None:
            lines.append(f"stopped early: {stopped}")
        if tally.lost:
            again = (
                f"run the same command again with --journal {journal} to resend them with "
                "the same keys"
                if journal is not None
                else "without --journal their keys are only in the output above"
            )
            lines.append(
                f"answer lost for {len(tally.lost):,} record(s), which may have been created: "
                f"line(s) {_numbers(tally.lost)}; {again}"
            )
        if tally.resent:
            lines.append(
                f"resent {len(tally.resent):,} record(s) that an earlier run may have created "
                "(its answer lost, or a server error), with their first keys: a service that "
                "does not deduplicate by Idempotency-Key may have created them twice: line(s) "
                f"{_numbers(tally.resent)}"
            )
        if tally.resent_earlier:
            lines.append(
                f"{len(tally.resent_earlier):,} record(s) seen through by an earlier run were "
                "resent then, and may exist twice too: line(s) "
                f"{_numbers(tally.resent_earlier)}"
            )
        return lines


def _numbers(lines: array[int]) -> str:
    shown = ", ".join(str(line) for line in sorted(lines)[:_LISTED])
    more = len(lines) - _LISTED
    return shown + (f" and {more:,} more (see stdout)" if more > 0 else "")


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"
