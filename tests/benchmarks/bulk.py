"""Case 11: ``animalstore pets create --from-file`` against a hand-written asyncio loop.

Both read the same JSONL file of N animals and create each over loopback sockets against the
built-in store (served from this process, whose main thread only waits), 8 calls in flight:
the command with its journal (a key flushed to disk before each record's first send, the
outcome after), the loop with ``AsyncClient.create_pet`` in 8 worker tasks and nothing else.
Each contender is a process of its own, started afresh each round, so that starting Python
and importing the SDK count for both. Throughput is records created per second of the whole
process; the store is emptied before each run and must then hold exactly N animals.

Apart from the timed rounds, untimed: the command's peak memory (its process's ``ru_maxrss``)
with 100 records and with N, and how many times it flushed its journal to disk (``-v``).
POSIX only (``resource``), as the suite's other peak-memory probes.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attrs import frozen

from animalstore_client.testing import FakeAnimalStore
from tests.benchmarks._harness import HEADER
from tests.benchmarks.concurrency import Batch, Throughput

__all__ = ["BulkFacts", "bulk_create", "sizes"]

API_KEY = "bench-key"
CONCURRENCY = 8
#: The hand-written baseline: what a user would write instead of the command.
_LOOP = """
import asyncio, json, sys
from animalstore_client import AsyncClient

async def main(path, url, concurrency):
    async with AsyncClient(base_url=url) as client:
        with open(path, "rb") as file:
            lines = iter(file)

            async def worker():
                for line in lines:
                    fields = json.loads(line)
                    await client.create_pet(
                        name=fields["name"],
                        category_id=fields["categoryId"],
                        status=fields.get("status"),
                    )

            await asyncio.gather(*(worker() for _ in range(concurrency)))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


@frozen
class BulkFacts:
    """What case 11 measured apart from the timed rounds."""

    records: int
    #: Peak resident memory of the command's process, KiB: with 100 records, with N.
    peak_small_kib: int
    peak_kib: int
    #: Journal entries written and flushes to disk, in the run of N records.
    entries: int
    flushes: int

    def lines(self, throughput: Throughput) -> list[str]:
        """The rates and the facts, as lines of the report."""

        def rate(batches: tuple[Batch, ...]) -> float:
            return statistics.median(b.calls_per_second for b in batches)

        growth = self.peak_kib / self.peak_small_kib - 1
        return [
            f"case 11 vs asyncio loop: command {rate(throughput.sdk):,.0f} records/s, loop "
            f"{rate(throughput.base):,.0f} records/s, throughput "
            f"{1 / throughput.comparison().ratio:.2f}x (target >= {throughput.target:.2f})",
            f"case 11 command: peak memory {self.peak_small_kib / 1024:.1f} MiB with 100 "
            f"records, {self.peak_kib / 1024:.1f} MiB with {self.records:,} ({growth:+.1%}; "
            f"target within 10%); journal: {self.flushes:,} flushes to disk for "
            f"{self.records:,} records ({self.flushes / self.records:.3f} per record), "
            f"{self.entries:,} entries",
        ]

    @property
    def memory_flat(self) -> bool:
        """Whether the peak with N records is within 10% of the one with 100."""
        return self.peak_kib <= self.peak_small_kib * 1.10


def _pets_file(path: Path, count: int) -> Path:
    with path.open("w") as file:
        for line in range(1, count + 1):
            status = ("available", "pending", "sold")[line % 3]
            record = {"name": f"pet-{line}", "categoryId": line % 7, "status": status}
            file.write(json.dumps(record) + "\n")
    return path


#: Runs a command and prints its peak memory: from a small process, since a child's
#: ``ru_maxrss`` counts what it was before ``exec`` too, a copy of the process that forked it.
_PEAK = """
import resource, subprocess, sys
completed = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(completed.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _environment() -> dict[str, str]:
    return {**os.environ, "ANIMALSTORE_API_KEY": API_KEY}


def _run(command: list[str]) -> float:
    """Run ``command`` to its end; return how many seconds it took."""
    started = time.perf_counter()
    completed = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_environment()
    )
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise AssertionError(
            f"{command[:4]} exited {completed.returncode}: {completed.stderr[-500:]!r}"
        )
    return seconds


def _peak(command: list[str]) -> tuple[int, str]:
    """Run ``command`` to its end; return its peak memory (KiB on Linux) and its stderr."""
    completed = subprocess.run(
        [sys.executable, "-c", _PEAK, *command],
        capture_output=True,
        text=True,
        env=_environment(),
        check=True,
    )
    status, peak = completed.stdout.split()
    if status != "0":
        raise AssertionError(f"{command[:4]} exited {status}: {completed.stderr[-500:]}")
    return int(peak), completed.stderr


def bulk_create(rounds: int, *, records: int) -> tuple[list[Throughput], BulkFacts]:
    """Case 11: the command against the loop, ``rounds`` alternating rounds of ``records``.

    Returns:
        The comparison (target: the command's throughput at least 0.8 times the loop's), and
        the untimed facts.
    """
    store = FakeAnimalStore(api_keys=[API_KEY])
    with tempfile.TemporaryDirectory() as folder, store.serve() as url:
        source = _pets_file(Path(folder) / "pets.jsonl", records)
        small = _pets_file(Path(folder) / "small.jsonl", 100)
        journal = Path(folder) / "pets.journal"

        def command(path: Path, *options: str) -> list[str]:
            return [
                sys.executable,
                "-m",
                "animalstore_client",
                "--base-url",
                url,
                *options,
                "pets",
                "create",
                "--from-file",
                str(path),
                "--journal",
                str(journal),
                "--concurrency",
                str(CONCURRENCY),
            ]

        contenders = {
            "command": command(source),
            "loop": [sys.executable, "-c", _LOOP, str(source), url, str(CONCURRENCY)],
        }
        batches: dict[str, list[Batch]] = {name: [] for name in contenders}
        for round_number in range(rounds):
            names = list(contenders)
            for name in reversed(names) if round_number % 2 else names:
                store.reset()
                journal.unlink(missing_ok=True)
                seconds = _run(contenders[name])
                created = len(store.pets)
                batches[name].append(
                    Batch(seconds=seconds, calls=records, failures=records - created)
                )
                if created != records:
                    raise AssertionError(f"{name} created {created} of {records} animals")

        journal.unlink(missing_ok=True)
        peak_small, _ = _peak(command(small, "-v"))
        journal.unlink(missing_ok=True)
        peak, stderr = _peak(command(source, "-v"))
    [(entries, flushes)] = re.findall(
        r"journal \S+: (\d+) entries written, (\d+) flushes to disk", stderr
    )
    throughput = Throughput(
        case=f"11. pets create --from-file, {records:,} records",
        baseline="asyncio loop",
        sdk=tuple(batches["command"]),
        base=tuple(batches["loop"]),
        peaks=None,
        target=0.8,
    )
    facts = BulkFacts(records, peak_small, peak, int(entries), int(flushes))
    return [throughput], facts


def sizes(*, quick: bool) -> tuple[int, int]:
    """Return the rounds and records of case 11: 3 of 1,000 for ``--quick``, else 5 of 10,000.

    Each round runs the command and the loop once, each in a fresh process.
    """
    return (3, 1_000) if quick else (5, 10_000)


def main() -> None:
    """Run case 11 alone: ``python -m tests.benchmarks.bulk [--quick]``."""
    rounds, records = sizes(quick="--quick" in sys.argv[1:])
    [throughput], facts = bulk_create(rounds, records=records)
    print(HEADER)
    print(throughput.comparison().row())
    for line in facts.lines(throughput):
        print(line)


if __name__ == "__main__":
    main()
