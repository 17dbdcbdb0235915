"""Sequences of ``pets create --from-file`` runs: faults, kills, signals and resumes, drawn.

The bulk loader promises that running the same command again after any failure sends the
rest, each record once. That is a property of sequences of runs, so it is checked on drawn
sequences: each draws an input (JSONL or CSV; valid and invalid lines, blank lines, own keys
or none, now and then a key another record already has), a fault plan for the store's creates
(500, 502, 503 and 429 with and without ``Retry-After``, refusals, drops before and after
processing, delays past ``--timeout``, malformed answers), the command's options, and for each
run an interruption at a random point (``SIGKILL``, ``SIGTERM``, ``SIGINT``, ``SIGHUP``, now
and then twice, or none); then it resumes until a run ends on its own with every valid record
settled. The store is the built-in one over real sockets, deduplicating by ``Idempotency-Key``
or not.

Checked after every run: no run fails to read its own journal; stdout has one line per record,
invalid exactly for the invalid lines; the summary counts what stdout shows; the exit status
is the documented one; a run that was not killed leaves no record ``started``; the lines marked
``resent`` are exactly those sent again that an earlier run may have created. After the
sequence: against the deduplicating store each valid record exists exactly once (at most once
if refused), no invalid one at all; against the plain store, every animal that exists twice is
on a line that a run listed as resent (a run killed with ``SIGKILL`` lists nothing: a later one
must).

Each sequence comes from one seed, printed on failure: ``python -m tests.cli.sequences --seed
S --count 1`` replays it. ``python -m tests.cli.sequences --count 2000`` is the soak.

How the runs are made changes nothing that is drawn (``Runner``): ``REAL`` runs each in a
process of the command as installed; ``FAST`` runs those that no signal interrupts in process
(``in_process.invoke``) and the others in processes whose SDK waits are virtual
(``VIRTUAL_WAITS``), with the store's delays and ``--timeout`` at a quarter of their length (a
delay past the timeout still is), for the suite's default tier.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import attrs

from animalstore_client.testing import FakeAnimalStore, Fault
from tests.cli.in_process import invoke
from tests.cli.test_cli import DEFAULT_LAUNCHER, KEY, environment

#: The command with the SDK's waits on a clock of its own (``-c`` code): a retry's backoff, a
#: ``Retry-After`` pause, return at once and move that clock on by their length, as the
#: suite's ``clock`` fixture does in process; the servers, the sockets, the timeouts and the
#: command's own pace keep real time. What the sequences check does not depend on how long a
#: wait lasts; the deep tier and the soak also run the command as it is.
VIRTUAL_WAITS = """
import sys, threading, time
from animalstore_client import _client
from animalstore_client._backends import httpx as httpx_backend
from animalstore_client._backends.eventloop import sleep as real_async_sleep
from animalstore_client._cli import run
from animalstore_client._core import call, retries, wire


class Clock:
    def __init__(self):
        self.offset = 0.0
        self.lock = threading.Lock()

    def monotonic(self):
        return time.monotonic() + self.offset

    def time(self):
        return time.time() + self.offset

    def sleep(self, seconds):
        with self.lock:
            self.offset += seconds

    async def async_sleep(self, seconds):
        self.sleep(seconds)
        await real_async_sleep(0)

    def __getattr__(self, name):
        return getattr(time, name)


clock = Clock()
for module in (_client, call, retries, wire):
    module.time = clock
httpx_backend.AsyncHttpxSender.sleep = staticmethod(clock.async_sleep)
run()  # as the entry points do
"""


@attrs.frozen
class Runner:
    """How a sequence's runs are made; it changes nothing that is drawn.

    Attributes:
        name: what it is called in a test's output.
        launcher: what starts the command in a process of its own.
        in_process: whether a run that no signal interrupts goes in this process
            (``in_process.invoke``) rather than in a process: it shows the same (its output,
            its exit status, the journal it leaves) without a process's start.
        pace: what the store's delays and ``--timeout`` are scaled by: the delays shorter
            than the timeout stay shorter, those longer stay longer (lost answers).
    """

    name: str
    launcher: tuple[str, ...] = attrs.field(repr=False)
    in_process: bool
    pace: float = 1.0


#: Every run a process of its own, the command as installed: the soak, and part of the deep
#: tier.
REAL = Runner("real", tuple(DEFAULT_LAUNCHER), in_process=False)
#: The SDK's waits virtual: in a process through ``VIRTUAL_WAITS``; in this one, the test's
#: ``clock`` fixture must make them so. The store's delays and ``--timeout`` at a quarter.
FAST = Runner("fast", (sys.executable, "-c", VIRTUAL_WAITS), in_process=True, pace=0.25)
#: The longest one run may take before the sequence fails as a hang.
RUN_TIMEOUT = 120.0
#: Runs in one sequence before it fails for never settling (the fault plan is finite).
MAX_RUNS = 25
#: What the summary line counts, in its order.
_COUNTS = ("created", "refused", "failed", "unknown", "invalid")
_SUMMARY = re.compile(
    r"pets create: ([\d,]+) created, ([\d,]+) refused, ([\d,]+) failed, ([\d,]+) unknown, "
    r"([\d,]+) invalid(?:, ([\d,]+) created and ([\d,]+) refused by an earlier run)?"
)
#: Each stopping signal: the exit status of a run it settles, and what the summary says.
_SIGNALS: dict[int, tuple[int, str]] = {
    signal.SIGINT: (130, "interrupted (Ctrl-C)"),
    signal.SIGTERM: (143, "terminated (SIGTERM)"),
    signal.SIGHUP: (129, "hung up (SIGHUP)"),
}


@attrs.define
class Expected:
    """What the input holds: each record's first line, and whether it is valid.

    Attributes:
        valid: the lines of the valid records, with each one's name (unique in the input).
        invalid: the lines of the invalid records, with each one's name, if it has one.
    """

    valid: dict[int, str] = attrs.Factory(dict)
    invalid: dict[int, str | None] = attrs.Factory(dict)


@attrs.frozen
class Servers:
    """The two stores a sequence runs against, each served on 127.0.0.1."""

    deduplicating: tuple[FakeAnimalStore, str]
    plain: tuple[FakeAnimalStore, str]


@attrs.define
class Sequence:
    """One drawn sequence, and what happened to it so far (for the failure message)."""

    seed: int
    log: list[str] = attrs.Factory(list)

    def fail(self, message: str) -> AssertionError:
        """Return the failure of this sequence: the seed, the steps, and what went wrong."""
        steps = "\n  ".join(self.log)
        return AssertionError(
            f"sequence seed {self.seed} (replay: python -m tests.cli.sequences --seed "
            f"{self.seed} --count 1):\n  {steps}\n{message}"
        )

    def check(self, condition: object, message: str) -> None:
        """Fail the sequence with ``message`` unless ``condition`` holds."""
        if not condition:
            raise self.fail(message)


# -- drawing an input -------------------------------------------------------------------------

_BAD_JSONL = [
    "{not json",
    '{"name": "{name}", "categoryId": "7"}',
    '{"categoryId": 3}',
    '{"name": "{name}", "categoryId": 3, "colour": "red"}',
    '{"name": "{name}", "categoryId": 3, "status": "lost"}',
    '{"name": "{name}", "categoryId": 3, "idempotency_key": "has space"}',
    '{"name": "{name}", "categoryId": NaN}',
    "[1, 2]",
]
_BAD_CSV = [
    ["{name}", "abc", "", ""],
    ["{name}", "3", "lost", ""],
    ["{name}", "3", "", "has space"],
    ["{name}", "3"],
]


def draw_input(rng: random.Random, path: Path, count: int, csv_format: bool) -> Expected:
    """Write ``count`` records (and blank lines) to ``path``; return what they are."""
    expected = Expected()
    own_keys = rng.choice(["none", "some", "all"])
    keys: list[str] = []  # the keys valid records hold, for the user's slip
    spelling = rng.choice(["categoryId", "category_id"])
    line = 1
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if csv_format:
        writer.writerow(["name", spelling, "status", "idempotency_key"])
        line += 1
    for record in range(count):
        if rng.random() < 0.05:
            out.write("\n")  # a blank line: skipped, but counted
            line += 1
        name = f"p{record}"
        if csv_format and rng.random() < 0.1:
            name += rng.choice([", a comma", ' "quoted"', "\non two lines"])
        start = out.tell()
        draw = rng.random()
        if draw < 0.1:
            if csv_format:
                row = rng.choice(_BAD_CSV)
                writer.writerow([cell.replace("{name}", name) for cell in row])
                expected.invalid[line] = name
            else:
                text = rng.choice(_BAD_JSONL)
                out.write(text.replace("{name}", name) + "\n")
                expected.invalid[line] = name if "{name}" in text else None
        else:
            key: str | None = None
            if own_keys == "all" or (own_keys == "some" and rng.random() < 0.5):
                key = f"key-{rng.getrandbits(48):x}-{record}"
            slip = keys and draw < 0.13
            if slip:
                key = rng.choice(keys)  # a key a valid record above already has
            status = rng.choice([None, "available", "pending", "sold"])
            category = rng.randrange(-3, 10**6)
            if csv_format:
                writer.writerow([name, category, status or "", key or ""])
            else:
                fields: dict[str, Any] = {"name": name, spelling: category}
                if status is not None:
                    fields["status"] = status
                if key is not None:
                    fields["idempotency_key"] = key
                out.write(json.dumps(fields) + "\n")
            if slip:
                expected.invalid[line] = name
            else:
                expected.valid[line] = name
                if key is not None:
                    keys.append(key)
        line += out.getvalue().count("\n", start)
    path.write_text(out.getvalue(), encoding="utf-8")
    return expected


def draw_faults(rng: random.Random, count: int, pace: float = 1.0) -> list[Fault]:
    """A finite plan of faults for the creates, passes (``delay(0)``) between them.

    ``pace`` scales the delays (as ``run_sequence`` scales ``--timeout``); it draws nothing.
    """
    faults: list[Fault] = []
    for _ in range(rng.randrange(0, 2 * count + 2)):
        kind = rng.random()
        retry_after = rng.choice([None, 0, 0.02])
        if kind < 0.45:
            fault = Fault.delay(0, operation="create")
        elif kind < 0.57:
            fault = Fault.error(rng.choice([500, 502]), operation="create")
        elif kind < 0.65:
            fault = Fault.error(503, retry_after=retry_after, operation="create")
        elif kind < 0.72:
            fault = Fault.error(429, retry_after=retry_after, operation="create")
        elif kind < 0.75:
            fault = Fault.error(rng.choice([400, 409, 422]), operation="create")
        elif kind < 0.83:
            processed, reset = rng.random() < 0.6, rng.random() < 0.5
            fault = Fault.drop(processed=processed, reset=reset, operation="create")
        elif kind < 0.92:
            fault = Fault.delay(rng.choice([0.01, 0.05, 0.4]) * pace, operation="create")
        else:
            malformed = rng.choice(["not_json", "wrong_schema", "truncated"])
            fault = Fault.malformed(malformed, operation="create")  # type: ignore[arg-type]
        faults.append(fault)
    return faults


# -- the runs ---------------------------------------------------------------------------------


@attrs.frozen
class Outcome:
    """One run as seen from outside: its exit status, its output, and what was done to it."""

    returncode: int
    stdout: str
    stderr: str
    signals: tuple[int, ...]


def start(command: list[str], base_url: str, stdout: Path, stderr: Path) -> subprocess.Popen[bytes]:
    """Start the command, its output to files (a pipe nobody reads would hold it up)."""

    def defaults() -> None:
        # A background job starts with SIGINT ignored, a nohup'd one with SIGHUP: a terminal's
        # foreground job, which a run plays, has the default actions.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)

    with stdout.open("wb") as out, stderr.open("wb") as err:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=environment(base_url, KEY),
            preexec_fn=defaults,
        )


def journal_lines(journal: Path) -> int:
    """How many whole lines the journal has (0 before it exists)."""
    try:
        return journal.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def wait_for_journal(process: subprocess.Popen[bytes], journal: Path, lines: int) -> None:
    """Return once the journal has ``lines`` lines or the run has ended."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while process.poll() is None and journal_lines(journal) < lines:
        if time.monotonic() > deadline:
            return
        time.sleep(0.002)


def one_run(
    rng: random.Random,
    sequence: Sequence,
    runner: Runner,
    options: list[str],
    base_url: str,
    journal: Path,
    workdir: Path,
    interrupt: int | None,
    entries: int,
) -> Outcome:
    """Run the command once, interrupted by ``interrupt`` if not ``None``.

    The signal comes once the run has written a drawn number of journal lines, fewer than
    ``entries``: a run writes about two a record, so most signals come within its first half,
    before it ends.
    """
    if interrupt is None and runner.in_process:
        invoked = invoke(options, {"ANIMALSTORE_BASE_URL": base_url, "ANIMALSTORE_API_KEY": KEY})
        return Outcome(invoked.returncode, invoked.stdout.decode("utf-8"), invoked.stderr, ())
    out, err = workdir / "stdout", workdir / "stderr"
    process = start([*runner.launcher, *options], base_url, out, err)
    sent: list[int] = []
    try:
        if interrupt is not None:
            wait_for_journal(process, journal, journal_lines(journal) + rng.randrange(1, entries))
            if process.poll() is None:
                process.send_signal(interrupt)
                sent.append(interrupt)
                if interrupt != signal.SIGKILL and rng.random() < 0.25:
                    # A second one: the calls in flight are cut short.
                    wait_for_journal(process, journal, journal_lines(journal) + 1)
                    if process.poll() is None:
                        process.send_signal(interrupt)
                        sent.append(interrupt)
        process.wait(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise sequence.fail(f"a run took more than {RUN_TIMEOUT} s: {err.read_text()}") from None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return Outcome(
        process.returncode,
        out.read_bytes().decode("utf-8"),
        err.read_bytes().decode("utf-8"),
        tuple(sent),
    )


def last_states(journal: Path) -> dict[int, dict[str, Any]]:
    """Each journaled line's last entry; a torn last line (a kill mid-write cannot make one,
    but a crash could) left out."""
    if not journal.exists():
        return {}
    raw = journal.read_bytes().split(b"\n")
    return {entry["line"]: entry for entry in map(json.loads, raw[1:-1])}


def maybe_created(entry: dict[str, Any]) -> bool:
    """Whether a record whose journal says ``entry`` may exist already (the docs' rule)."""
    if entry["state"] in ("started", "unknown"):
        return True
    status = (entry.get("error") or {}).get("status")
    return (
        entry["state"] == "failed" and isinstance(status, int) and status >= 500 and status != 503
    )


def check_run(
    sequence: Sequence,
    run: Outcome,
    expected: Expected,
    before: dict[int, dict[str, Any]],
    after: dict[int, dict[str, Any]],
) -> set[int]:
    """Check what one run printed, its exit status and the journal it left.

    Returns:
        The lines it listed as resent (none for a run that was killed).
    """
    check = sequence.check
    check(KEY not in run.stdout + run.stderr, "the API key was printed")
    check("Traceback" not in run.stderr, f"a traceback: {run.stderr}")
    # The journal is always its own: never unreadable, never another input's.
    check("of the journal" not in run.stderr, f"the journal was refused: {run.stderr}")
    check("holds for line" not in run.stderr, f"the journal was refused: {run.stderr}")
    killed = run.returncode < 0
    if killed:  # a SIGKILL (or a signal that came after the run's handlers were gone)
        check(run.signals, f"died of signal {-run.returncode} unasked")
        return set()
    summary = _SUMMARY.search(run.stderr)
    if summary is None:  # a signal before the run set its handlers: it sent nothing
        check(run.signals and run.returncode == _SIGNALS[run.signals[0]][0], run.stderr)
        check(after == before and not run.stdout, "no summary, but the run did something")
        return set()
    printed: dict[int, dict[str, Any]] = {}
    for text in run.stdout.splitlines():
        record = json.loads(text)
        check(record["line"] not in printed, f"line {record['line']} printed twice")
        printed[record["line"]] = record
    invalid = {line for line, record in printed.items() if record["status"] == "invalid"}
    check(invalid <= set(expected.invalid), f"valid lines said invalid: {invalid}")
    check(set(printed) <= set(expected.valid) | set(expected.invalid), "an unknown line")
    stopped = "stopped early:" in run.stderr
    if not stopped:
        check(
            set(printed) == set(expected.valid) | set(expected.invalid),
            f"lines not printed: {sorted(set(expected.valid) - set(printed))[:20]}",
        )
    # The summary counts what stdout shows.
    numbers = [int((group or "0").replace(",", "")) for group in summary.groups()]
    fresh = Counter(r["status"] for r in printed.values() if not r.get("earlier"))
    earlier = Counter(r["status"] for r in printed.values() if r.get("earlier"))
    shown = [fresh[name] for name in _COUNTS] + [earlier["created"], earlier["refused"]]
    check(numbers == shown, f"summary {numbers} but stdout {shown}")
    # The exit status, as documented.
    code, said = _SIGNALS[run.signals[0]] if run.signals else (None, None)
    if said is not None and f"stopped early: {said}" in run.stderr:
        check(run.returncode == code, f"stopped by {said}, exit {run.returncode}")
    elif code is not None and run.returncode == code:
        pass  # the signal came once the run was over (its summary written): its default action
    else:
        resent = any(record.get("resent") for record in printed.values())
        status = (
            3
            if fresh["unknown"]
            else 1
            if fresh["refused"] or fresh["failed"] or earlier["refused"]
            else 2
            if fresh["invalid"]
            else 5
            if resent  # every record created, some perhaps twice
            else 0
        )
        check(run.returncode == status, f"exit {run.returncode}, documented {status}")
    # Settled: nothing this run started is left without an outcome. (A record a killed run
    # left started, which this one stopped before sending, stays so: it is still in doubt.)
    started = [
        line
        for line, entry in after.items()
        if entry["state"] == "started"
        and (before.get(line, {}).get("state") != "started" or line in printed)
    ]
    check(not started, f"lines left started: {started[:20]}")
    # Resent: exactly the records sent again that an earlier run may have created, and
    # those an earlier run saw through after such a resend.
    for line, record in printed.items():
        if record["status"] == "invalid":
            continue
        entry = before.get(line, {})
        at_risk = bool(entry.get("resent")) or (
            not record.get("earlier") and bool(entry) and maybe_created(entry)
        )
        check(bool(record.get("resent")) == at_risk, f"line {line}: resent is wrong: {record}")
    return {line for line, record in printed.items() if record.get("resent")}


def run_sequence(
    seed: int, servers: Servers, workdir: Path, max_records: int, runner: Runner = REAL
) -> str:
    """Draw and run one sequence from ``seed``; return a line saying what it did.

    ``runner`` says how its runs are made (``REAL`` or ``FAST``).

    Raises:
        AssertionError: an invariant failed; the message has the seed and the steps.
    """
    rng = random.Random(seed)
    sequence = Sequence(seed)
    deduplicating = rng.random() < 0.6
    store, base_url = servers.deduplicating if deduplicating else servers.plain
    store.reset()
    csv_format = rng.random() < 0.4
    count = rng.choice([rng.randrange(1, 40), rng.randrange(40, max_records + 1)])
    source = workdir / ("pets.csv" if csv_format else "pets.jsonl")
    journal = workdir / "pets.journal"
    journal.unlink(missing_ok=True)
    expected = draw_input(rng, source, count, csv_format)
    faults = draw_faults(rng, count, runner.pace)
    store.inject(*faults)
    options = ["--max-retries", str(rng.choice([0, 1, 2]))]
    if rng.random() < 0.3:
        # A 0.4 s delay is then a lost answer (both scaled by the runner's pace).
        options += ["--timeout", f"{0.2 * runner.pace:g}"]
    options += ["pets", "create", "--from-file", str(source), "--journal", str(journal)]
    options += ["--concurrency", str(rng.choice([1, 2, 4, 8, 16]))]
    sequence.log.append(
        f"{'deduplicating' if deduplicating else 'plain'} store; {count} records "
        f"({len(expected.invalid)} invalid) as {'CSV' if csv_format else 'JSONL'}; "
        f"{len(faults)} faults; animalstore {shlex.join(options)}"
    )
    listed: set[int] = set()  # the lines the runs listed as resent
    notes: list[str] = []
    runs = 0
    while True:
        runs += 1
        sequence.check(runs <= MAX_RUNS, f"not settled after {MAX_RUNS} runs")
        interrupt = None
        if rng.random() < (0.6 if runs == 1 else 0.3) and runs < MAX_RUNS // 2:
            interrupt = rng.choice([signal.SIGKILL, *_SIGNALS])
        before = last_states(journal)
        run = one_run(
            rng, sequence, runner, options, base_url, journal, workdir, interrupt, count + 2
        )
        after = last_states(journal)
        sequence.log.append(
            f"run {runs}: signals {[signal.Signals(s).name for s in run.signals]}, exit "
            f"{run.returncode}; {run.stderr.strip().splitlines()[-1:] if run.stderr else ''}"
        )
        signals = "+".join(signal.Signals(number).name[3:] for number in run.signals)
        notes.append(f"{signals or '-'}:{run.returncode}")
        listed |= check_run(sequence, run, expected, before, after)
        settled = all(
            after.get(line, {}).get("state") in ("created", "refused") for line in expected.valid
        )
        if run.returncode >= 0 and not run.signals and settled:
            break
        if run.returncode in (0, 2, 5) and not run.signals:
            # 0 or 5: every record created; 2 (a run that read its input): only invalid lines.
            sequence.check(settled, f"exit {run.returncode} with records left to send")
    final = last_states(journal)
    names = Counter(pet.name for pet in store.pets)
    for line, name in expected.invalid.items():
        sequence.check(name is None or names[name] == 0, f"invalid line {line} was stored")
    for line, name in expected.valid.items():
        state = final[line]["state"]
        if deduplicating:
            wanted = (1,) if state == "created" else (0, 1)
            sequence.check(names[name] in wanted, f"line {line} ({state}) stored {names[name]}x")
        else:
            sequence.check(names[name] >= (state == "created"), f"line {line} ({state}) lost")
            sequence.check(
                names[name] <= 1 or line in listed,
                f"line {line} stored {names[name]}x but never listed as resent",
            )
    sequence.check(
        len(store.pets) == sum(names[name] for name in expected.valid.values()), "strays"
    )
    return f"seed {seed}: {sequence.log[0]}; runs (signals:exit) {' '.join(notes)}"


def sequences(master_seed: int, count: int) -> Iterator[int]:
    """The seeds of ``count`` sequences, drawn from ``master_seed``."""
    rng = random.Random(master_seed)
    for _ in range(count):
        yield rng.getrandbits(48)


def serve_both(stack: ExitStack) -> Servers:
    """Serve a deduplicating and a plain store until ``stack`` closes."""
    dedup = FakeAnimalStore(api_keys=[KEY], honour_idempotency_keys=True)
    plain = FakeAnimalStore(api_keys=[KEY])
    return Servers(
        (dedup, stack.enter_context(dedup.serve())), (plain, stack.enter_context(plain.serve()))
    )


def main() -> int:
    """The soak: many sequences, each one's seed printed as it starts."""
    parser = argparse.ArgumentParser(prog="python -m tests.cli.sequences", description=__doc__)
    parser.add_argument("--count", type=int, default=1000, help="sequences (default: 1000)")
    parser.add_argument("--seed", type=int, help="the first sequence's seed (default: random)")
    parser.add_argument(
        "--records", type=int, default=2000, help="the most records an input has (default: 2000)"
    )
    parser.add_argument(
        "--fast",
        action="store_true",
        help="the runs no signal interrupts in this process, every wait of the SDK virtual in "
        "the others (default: every run the command as installed, in a process)",
    )
    args = parser.parse_args()
    first = random.randrange(1 << 48) if args.seed is None else args.seed
    seeds = [first, *sequences(first, args.count - 1)]
    runner = FAST if args.fast else REAL
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        servers = serve_both(stack)
        for number, seed in enumerate(seeds, 1):
            print(f"{number}/{len(seeds)} seed {seed}", flush=True)
            line = run_sequence(seed, servers, Path(folder), args.records, runner)
            print("  " + line, flush=True)
    print(f"{len(seeds)} sequences passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
