"""The recipe of docs/process-pools.md: a file loaded by worker processes, each record once.

The default tier runs the recipe's ``load`` with a ``ProcessPoolExecutor`` of forked workers
and a few hundred records; the deep tier runs the script itself as the page documents it: a
Dask ``LocalCluster`` of worker processes and 2,000 records, next to the command line's bulk
loader (a cluster takes seconds to start, more than a test of the default tier may take).
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from types import ModuleType

import pytest

from animalstore_client import Client
from animalstore_client.testing import FakeAnimalStore
from tests.examples.test_examples import EXAMPLES, example_env

SCRIPT = EXAMPLES / "dask_load.py"


@pytest.fixture(scope="module")
def recipe() -> Iterator[ModuleType]:
    """The example script as a module, importable by name in forked workers."""
    spec = importlib.util.spec_from_file_location("dask_load", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["dask_load"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["dask_load"]


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
def test_the_recipe_creates_each_record_once_through_worker_processes(
    recipe: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANIMALSTORE_API_KEY", recipe.KEY)  # the workers' key, never pickled
    store = FakeAnimalStore(api_keys=(recipe.KEY,), honour_idempotency_keys=True)
    records = recipe.make_records(3 * recipe.BATCH)
    context = multiprocessing.get_context("fork")

    with store.serve() as base_url, ProcessPoolExecutor(2, mp_context=context) as pool:
        client = Client(base_url=base_url)
        ids = recipe.load(pool, client, records)
        again = recipe.load(pool, client, records[: recipe.BATCH])  # a task run twice

    stored = {pet.name: pet.id for pet in store.pets}
    assert [stored[record["name"]] for record in records] == ids
    assert len(stored) == len(records) == len(set(ids))
    assert again == ids[: recipe.BATCH]
    creates = [request for request in store.requests if request.method == "POST"]
    assert len(creates) == len(records) + recipe.BATCH
    assert {request.headers["idempotency-key"] for request in creates} == {
        record["idempotency_key"] for record in records
    }


@pytest.mark.deep
@pytest.mark.timeout(180)
def test_the_dask_script_loads_2000_records_once_and_prints_both_throughputs() -> None:
    pytest.importorskip("dask.distributed", reason="Dask is in the test extra")
    result = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env=example_env(),
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "Dask, 2 worker processes: 2000 animals, each once",
        "Command line, --concurrency 8: 2000 animals",
    ]
    assert re.fullmatch(r"  Dask +\d+ records/s \(cluster start excluded\)", lines[2])
    assert re.fullmatch(r"  command line +\d+ records/s \(its start included\)", lines[3])
