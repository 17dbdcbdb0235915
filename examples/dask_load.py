"""Load a file of animals through a Dask cluster of worker processes, each animal created once.

The recipe of docs/process-pools.md. A ``Client`` pickles without its key: in each task it
arrives as a new client with its own connection pool, and reads ``ANIMALSTORE_API_KEY`` from
the worker's environment (which the cluster's worker processes inherit). Each record carries its
own idempotency key, so a task that runs again (a worker lost, a task retried) is answered from
the service's memory of those keys instead of creating the animals twice.

    python examples/dask_load.py                          # 2,000 records, 2 worker processes
    python examples/dask_load.py --records 500 --workers 4

It runs against the built-in reference store (which honours idempotency keys), runs two of the
tasks a second time, checks that every animal exists exactly once, then loads the same file with
the command line's bulk loader into a new store and prints both throughputs. ``load`` takes any
``concurrent.futures.Executor``: a ``ProcessPoolExecutor`` runs the same recipe without Dask.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from animalstore_client import Client
from animalstore_client.testing import FakeAnimalStore

KEY = "dask-demo-key"
#: Records per task: enough that a task's new client and connection cost little per record.
BATCH = 100


def make_records(count: int) -> list[dict[str, Any]]:
    """The file's records: each with an idempotency key of its own, stable across runs."""
    return [
        {"name": f"pet-{n:05d}", "category_id": n % 7 + 1, "idempotency_key": f"load-{n:05d}"}
        for n in range(count)
    ]


def create_batch(client: Client, batch: Sequence[dict[str, Any]]) -> list[int]:
    """Create each record of ``batch``; runs in a worker, with a client that came pickled."""
    with client:  # this task's own client: closing it closes only its own pool
        return [client.create_pet(**record).id for record in batch]


def load(executor: Executor, client: Client, records: Sequence[dict[str, Any]]) -> list[int]:
    """Create every record through ``executor``, ``BATCH`` records a task; their ids in order."""
    batches = [records[start : start + BATCH] for start in range(0, len(records), BATCH)]
    tasks = [executor.submit(create_batch, client, batch) for batch in batches]
    return [pet_id for task in tasks for pet_id in task.result()]


def with_dask(workers: int, client: Client, records: Sequence[dict[str, Any]]) -> float:
    """Load ``records`` through a local cluster of worker processes; return the seconds taken.

    The cluster's start is not counted. Two tasks then run again, as after a lost worker.
    """
    from dask.distributed import LocalCluster

    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=workers, threads_per_worker=4, processes=True, dashboard_address=None
    )
    with cluster, cluster.get_client() as dask:  # type: ignore[no-untyped-call]
        executor = dask.get_executor(pure=False)  # each task runs, even with equal arguments
        started = time.perf_counter()
        ids = load(executor, client, records)
        seconds = time.perf_counter() - started
        again = load(executor, client, records[: 2 * BATCH])
    assert again == ids[: 2 * BATCH], "a task run again must find the animals it created"
    return seconds


def with_command_line(path: Path, base_url: str) -> float:
    """Load the file with ``animalstore pets create --from-file``; return its wall time."""
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            *(sys.executable, "-m", "animalstore_client", "pets", "create"),
            *("--from-file", str(path), "--concurrency", "8"),
            *("--journal", str(Path(scratch) / "load.journal")),
        ]
        started = time.perf_counter()
        subprocess.run(
            command,
            env={**os.environ, "ANIMALSTORE_BASE_URL": base_url},
            capture_output=True,  # its outcomes and summary: the store is checked instead
            check=True,
        )
        return time.perf_counter() - started


def main(arguments: Sequence[str] | None = None) -> None:
    """Run the recipe against the built-in store and print what it measured."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args(arguments)
    records = make_records(options.records)
    os.environ["ANIMALSTORE_API_KEY"] = KEY  # what the workers read: never in the pickle
    store = FakeAnimalStore(api_keys=(KEY,), honour_idempotency_keys=True)

    with store.serve() as base_url, tempfile.TemporaryDirectory() as scratch:
        client = Client(base_url=base_url)
        dask_seconds = with_dask(options.workers, client, records)
        names = [pet.name for pet in store.pets]
        assert sorted(names) == [record["name"] for record in records], "each animal once"
        print(f"Dask, {options.workers} worker processes: {len(names)} animals, each once")

        path = Path(scratch) / "pets.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
        store.reset()
        cli_seconds = with_command_line(path, base_url)
        assert len(store.pets) == len(records)
        print(f"Command line, --concurrency 8: {len(store.pets)} animals")

    print(f"  Dask          {len(records) / dask_seconds:8.0f} records/s (cluster start excluded)")
    print(f"  command line  {len(records) / cli_seconds:8.0f} records/s (its start included)")


if __name__ == "__main__":
    main()
