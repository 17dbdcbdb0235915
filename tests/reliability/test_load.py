"""Load over real sockets against the reference store: one shared ``Client`` across 16 threads,
one ``AsyncClient`` with 1,000 calls in flight; every answer right, every pet created once,
and no file descriptor or thread left behind.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
import warnings
from collections import Counter

import pytest

from animalstore_client import AsyncClient, Client, DefaultAioHttpClient, Pet, PetStatus
from animalstore_client.testing import FakeAnimalStore
from tests.reliability.conftest import API_KEY

THREADS = 16
SYNC_CALLS = 2_000
ASYNC_CALLS = 1_000
SEEDED = [Pet(id=i, name=f"seed-{i}", category_id=i, status=PetStatus.SOLD) for i in (1, 2, 3)]


def resource_counts() -> tuple[int, int]:
    return len(os.listdir("/proc/self/fd")), threading.active_count()


def settle(before: tuple[int, int]) -> tuple[int, int]:
    """Give the interpreter a moment to let go of what is already closed; return the counts."""
    deadline = time.monotonic() + 3
    while True:
        gc.collect()
        now = resource_counts()
        if now == before or time.monotonic() > deadline:
            return now
        time.sleep(0.05)


def seeded_store() -> FakeAnimalStore:
    store = FakeAnimalStore(api_keys=[API_KEY])
    for pet in SEEDED:
        store.add_pet(pet.name, pet.category_id, PetStatus.SOLD)
    return store


def plan(calls: int, prefix: str) -> list[tuple[str, object]]:
    """Mixed work: 6 creates, 3 lists and 1 get in every 10 calls; create names are unique."""
    work: list[tuple[str, object]] = []
    for i in range(calls):
        slot = i % 10
        if slot < 6:
            work.append(("create", f"{prefix}-{i}"))
        elif slot < 9:
            work.append(("list", None))
        else:
            work.append(("get", SEEDED[i % len(SEEDED)]))
    return work


def check_answer(kind: str, argument: object, answer: object) -> None:
    if kind == "create":
        assert isinstance(answer, Pet)
        assert (answer.name, answer.category_id) == (argument, 7)
    elif kind == "get":
        assert answer == argument
    else:
        assert isinstance(answer, list)
        assert 3 <= len(answer) <= 100
        assert all(isinstance(p, Pet) for p in answer)
        assert answer[:3] == SEEDED  # the store lists in id order


def check_store(
    store: FakeAnimalStore, work: list[tuple[str, object]], answers: list[object]
) -> None:
    created_names = [arg for kind, arg in work if kind == "create"]
    stored = store.pets
    assert stored[:3] == SEEDED
    assert Counter(p.name for p in stored[3:]) == Counter(created_names)  # each exactly once
    by_id = {p.id: p for p in stored}
    for (kind, _), answer in zip(work, answers, strict=True):
        if kind == "create":
            assert by_id[answer.id] == answer  # type: ignore[attr-defined]
    assert len(store.requests) == len(work)  # no retries, no duplicates


@pytest.mark.deep
def test_one_client_shared_by_16_threads() -> None:
    store = seeded_store()
    work = plan(SYNC_CALLS, "sync")
    answers: list[object] = [None] * len(work)
    errors: list[BaseException] = []
    before = resource_counts()

    with store.serve() as base_url:
        client = Client(api_key=API_KEY, base_url=base_url, max_retries=0)

        def worker(index: int) -> None:
            try:
                for i in range(index, len(work), THREADS):
                    kind, argument = work[i]
                    if kind == "create":
                        answers[i] = client.create_pet(name=str(argument), category_id=7)
                    elif kind == "list":
                        answers[i] = client.list_pets(limit=100)
                    else:
                        assert isinstance(argument, Pet)
                        answers[i] = client.get_pet(argument.id)  # type: ignore[deprecated]
                    check_answer(kind, argument, answers[i])
            except BaseException as exc:
                errors.append(exc)

        # get_pet warns DeprecationWarning on every call. Warning filters are process-wide:
        # set once here, for every worker, rather than in each thread.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
        assert not any(thread.is_alive() for thread in threads)
        client.close()

    assert errors == []
    check_store(store, work, answers)
    assert settle(before) == before


@pytest.mark.deep
@pytest.mark.parametrize("backend", ["httpx", "aiohttp"])
def test_one_async_client_with_1000_calls_in_flight(backend: str) -> None:
    store = seeded_store()
    work = plan(ASYNC_CALLS, "async")
    before = resource_counts()

    async def run(base_url: str) -> list[object]:
        # The SDK's own pool (httpx, 100 connections), or aiohttp's (100 connections too).
        http = DefaultAioHttpClient() if backend == "aiohttp" else None
        async with (
            AsyncClient(
                api_key=API_KEY, base_url=base_url, max_retries=0, http_client=http
            ) as client,
        ):

            async def one(kind: str, argument: object) -> object:
                if kind == "create":
                    answer: object = await client.create_pet(name=str(argument), category_id=7)
                elif kind == "list":
                    answer = await client.list_pets(limit=100)
                else:
                    assert isinstance(argument, Pet)
                    answer = await client.get_pet(argument.id)  # type: ignore[deprecated]
                check_answer(kind, argument, answer)
                return answer

            with warnings.catch_warnings():  # get_pet warns on every call
                warnings.simplefilter("ignore", DeprecationWarning)
                calls = (one(kind, arg) for kind, arg in work)
                answers = list(await asyncio.gather(*calls, return_exceptions=True))
        if http is not None:
            await http.close()
        return answers

    with store.serve() as base_url:
        answers = asyncio.run(run(base_url))

    failures = Counter(repr(a) for a in answers if isinstance(a, BaseException))
    assert failures == Counter(), f"{failures.total()} of {len(work)} calls failed"
    check_store(store, work, answers)
    assert settle(before) == before
