"""The progress bar as drawn on a terminal: its text, its pace, and how notes and the summary
replace it; against a clock the test sets, and a stream that stands for the terminal.
"""

from __future__ import annotations

import io
import os
import shutil
from array import array
from collections.abc import Callable

import pytest

from animalstore_client._cli import progress as progress_module
from animalstore_client._cli.progress import Progress, Tally
from tests.conftest import StoppedClock, stopped_clock

CLEAR = "\r\x1b[K"


def on_a_stream(
    *, bar: bool = True, fraction: Callable[[], float | None] = lambda: None
) -> tuple[io.StringIO, Progress]:
    """A stream, and a ``Progress`` that writes to it (a bar if ``bar``)."""
    stream = io.StringIO()
    return stream, Progress(stream, bar=bar, fraction=fraction)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> StoppedClock:
    """What ``progress.py`` reads of ``time``: a monotonic clock the test moves."""
    monkeypatch.setenv("COLUMNS", "200")  # what shutil.get_terminal_size reads first
    return stopped_clock(monkeypatch, progress_module, "time")


def test_the_bar_line_of_an_input_whose_size_is_unknown(clock: StoppedClock) -> None:
    bar = Progress(io.StringIO(), bar=True, fraction=lambda: None)

    line = bar.bar_line(Tally(created=1_500, refused=2, failed=3, unknown=4, read=2_000), 1004.0)

    assert line == "1,509 done  9 failed  377/s"


def test_the_bar_line_fills_by_the_share_read_times_the_share_of_the_read_done(
    clock: StoppedClock,
) -> None:
    bar = Progress(io.StringIO(), bar=True, fraction=lambda: 0.5)

    # Half the input read, and half of the records read done: a quarter of the way.
    line = bar.bar_line(Tally(created=50, invalid=10, created_earlier=40, read=200), 1030.0)

    assert line == "[#####...............] 100 done  10 failed  2/s  1:30 left"


def test_the_bar_is_full_only_when_every_record_read_is_done_and_the_input_is_read(
    clock: StoppedClock,
) -> None:
    read_all = Progress(io.StringIO(), bar=True, fraction=lambda: 1.0)
    almost = Tally(created=99, read=100)
    done = Tally(created=100, read=100)

    assert read_all.bar_line(almost, 1010.0) == (
        "[###################.] 99 done  0 failed  10/s  0:00 left"
    )
    assert read_all.bar_line(done, 1010.0) == (
        "[####################] 100 done  0 failed  10/s  0:00 left"
    )


def test_the_time_left_is_unknown_before_anything_is_done(clock: StoppedClock) -> None:
    started = Progress(io.StringIO(), bar=True, fraction=lambda: 0.3)

    assert (
        started.bar_line(Tally(), 1002.0) == "[....................] 0 done  0 failed  0/s  ? left"
    )
    assert started.bar_line(Tally(read=5), 1002.0) == (
        "[....................] 0 done  0 failed  0/s  ? left"
    )


def test_the_bar_line_at_the_very_start_divides_by_no_zero(clock: StoppedClock) -> None:
    bar = Progress(io.StringIO(), bar=True, fraction=lambda: None)

    assert bar.bar_line(Tally(created=1, read=1), clock.now) == "1 done  0 failed  1,000,000,000/s"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.4, "0:00"),
        (59.4, "0:59"),
        (59.5, "1:00"),
        (61, "1:01"),
        (3599, "59:59"),
        (3600, "1:00:00"),
        (3725, "1:02:05"),
        (36_000 * 3 + 5, "30:00:05"),
    ],
)
def test_a_duration_is_minutes_and_seconds_with_hours_when_there_are(
    seconds: float, shown: str
) -> None:
    assert progress_module._duration(seconds) == shown


def test_the_bar_is_redrawn_at_most_ten_times_a_second_in_place(clock: StoppedClock) -> None:
    stream, bar = on_a_stream()
    clock.now += 0.5

    bar.update(Tally(created=1, read=1))
    clock.now += 0.099
    bar.update(Tally(created=2, read=2))
    first = stream.getvalue()
    clock.now += 0.001
    bar.update(Tally(created=3, read=3))

    assert first == "\r1 done  0 failed  2/s\x1b[K"
    assert stream.getvalue() == first + "\r3 done  0 failed  5/s\x1b[K"


def test_the_bar_is_cut_to_one_column_less_than_the_terminal(
    clock: StoppedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "9")
    stream = io.StringIO()

    Progress(stream, bar=True, fraction=lambda: None).update(Tally(created=1_234, read=1_234))

    assert stream.getvalue() == "\r1,234 do\x1b[K"


def test_a_terminal_of_no_width_gets_an_empty_bar(
    clock: StoppedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "get_terminal_size", lambda: os.terminal_size((0, 24)))
    stream = io.StringIO()

    Progress(stream, bar=True, fraction=lambda: None).update(Tally(created=1, read=1))

    assert stream.getvalue() == "\r\x1b[K"


def test_without_a_terminal_no_bar_is_drawn(clock: StoppedClock) -> None:
    stream, bar = on_a_stream(bar=False, fraction=lambda: 0.5)

    bar.update(Tally(created=1, read=1))
    bar.note("a note")

    assert stream.getvalue() == "a note\n"


def test_a_note_clears_the_bar_and_the_next_update_draws_it_at_once(clock: StoppedClock) -> None:
    stream, bar = on_a_stream()
    clock.now += 1.0

    bar.update(Tally(created=1, read=1))
    bar.note("first")
    bar.note("second")
    clock.now += 0.01
    bar.update(Tally(created=2, read=2))

    assert stream.getvalue() == (
        "\r1 done  0 failed  1/s\x1b[K"
        + CLEAR
        + "first\n"
        + "second\n"
        + "\r2 done  0 failed  2/s\x1b[K"
    )


def test_the_summary_replaces_a_drawn_bar(clock: StoppedClock) -> None:
    stream, bar = on_a_stream()
    clock.now += 1.0
    bar.update(Tally(created=1, read=1))
    clock.now += 1.0

    bar.finish(Tally(created=1, read=1), journal=None, stopped=None)

    assert stream.getvalue() == (
        "\r1 done  0 failed  1/s\x1b[K"
        + CLEAR
        + "pets create: 1 created, 0 refused, 0 failed, 0 unknown, 0 invalid; 2.0 s, 0/s; "
        "no journal\n"
    )


def test_the_summary_without_a_bar_is_the_lines_alone(clock: StoppedClock) -> None:
    stream, bar = on_a_stream(bar=False)
    clock.now += 4.0

    bar.finish(
        Tally(created=6, refused=1, failed=1, read=8), journal="run.journal", stopped="SIGINT"
    )

    assert stream.getvalue() == (
        "pets create: 6 created, 1 refused, 1 failed, 0 unknown, 0 invalid; 4.0 s, 2/s; "
        "journal run.journal\n"
        "stopped early: SIGINT\n"
    )


def test_the_summary_of_no_time_has_no_rate() -> None:
    [line] = Progress.summary(Tally(created=3, read=3), elapsed=0.0, journal=None, stopped=None)

    assert line == (
        "pets create: 3 created, 0 refused, 0 failed, 0 unknown, 0 invalid; 0.0 s, 0/s; no journal"
    )


def test_the_summary_lists_fifty_lines_at_risk_and_counts_the_rest() -> None:
    lost = array("q", range(120, 0, -2))  # 60 lines, unsorted

    lines = Progress.summary(
        Tally(unknown=60, read=60, lost=lost), elapsed=1.0, journal="j", stopped=None
    )

    listed = ", ".join(str(n) for n in range(2, 102, 2))
    assert lines[1] == (
        f"answer lost for 60 record(s), which may have been created: line(s) {listed} and 10 "
        "more (see stdout); run the same command again with --journal j to resend them with "
        "the same keys"
    )


def test_a_stderr_that_cannot_be_written_is_let_be(clock: StoppedClock) -> None:
    class HungUp(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(5, "Input/output error")

    bar = Progress(HungUp(), bar=True, fraction=lambda: None)

    bar.update(Tally(created=1, read=1))
    bar.note("lost")
    bar.finish(Tally(created=1, read=1), journal=None, stopped=None)


def test_the_first_update_draws_however_early(clock: StoppedClock) -> None:
    clock.now = 0.0  # a monotonic clock may start anywhere, 0 included
    stream, bar = on_a_stream()
    clock.now += 0.05

    bar.update(Tally(created=1, read=1))

    assert stream.getvalue() == "\r1 done  0 failed  20/s\x1b[K"


def test_the_summarys_rate_is_per_second_of_the_run() -> None:
    [line] = Progress.summary(Tally(created=3, read=3), elapsed=0.5, journal=None, stopped=None)
    assert line.endswith("; 0.5 s, 6/s; no journal")


def test_the_summary_says_where_the_keys_of_lost_answers_are_without_a_journal() -> None:
    lines = Progress.summary(
        Tally(unknown=1, read=1, lost=array("q", [4])), elapsed=1.0, journal=None, stopped=None
    )
    assert lines[1] == (
        "answer lost for 1 record(s), which may have been created: line(s) 4; without --journal "
        "their keys are only in the output above"
    )


@pytest.mark.parametrize(("count", "more"), [(50, ""), (51, " and 1 more (see stdout)")])
def test_the_summary_lists_fifty_lines_and_counts_any_more(count: int, more: str) -> None:
    lines = Progress.summary(
        Tally(unknown=count, read=count, lost=array("q", range(1, count + 1))),
        elapsed=1.0,
        journal=None,
        stopped=None,
    )
    listed = ", ".join(str(n) for n in range(1, 51))
    assert lines[1].startswith(
        f"answer lost for {count} record(s), which may have been created: line(s) {listed}{more}; "
    )


def test_the_bar_is_redrawn_once_a_tenth_of_a_second_has_passed(clock: StoppedClock) -> None:
    clock.now = 0.0  # 0.1 - 0.0 is 0.1 exactly in floating point
    stream, bar = on_a_stream()
    bar.update(Tally(created=1, read=1))
    clock.now = 0.1

    bar.update(Tally(created=2, read=2))

    assert stream.getvalue().count("\r") == 2
