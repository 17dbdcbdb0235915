"""Load over real sockets against the reference store: one shared ``Client`` across threads,
one ``AsyncClient`` with many calls in flight; every answer right, every pet created once,
and no file descriptor or thread left behind.

The default tier runs each property small, which shows exactly-once and no leak as well: 4
threads and 200 calls; 110 calls in flight, more than the pool's 100 connections, so that some
wait for one. The deep tier (``pytest --deep``) runs them at full scale: 16 threads and 2,000
calls; 1,000 calls in flight.
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
from tests.conftest import at_scale
from tests.reliability.conftest import API_KEY

SEEDED = [Pet(id=i, name=f"seed-{i}", category_id=i, status=PetStatus.SOLD) for i in (1, 2, 3)]


def resource_counts() -> tuple[int, int]:
    return len(os.listdir("/proc/self/fd")), threading.active_count()


def settle(before: tuple[int, int]) -> tuple[int, int]:
    """Give the interpreter a moment to let go of what is already closed; return the counts.

    Returns as soon as the counts are back; the limit, generous so that a busy machine cannot
    fail it, only bounds the wait for a leak, which never settles.
    """
    deadline = time.monotonic() + 10
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


@pytest.mark.parametrize("scale", at_scale((4, 200), (16, 2_000), "threads,calls"))
def test_one_client_shared_by_threads(scale: tuple[int, int]) -> None:
    threads_count, calls = scale
    store = seeded_store()
    work = plan(calls, "sync")
    answers: list[object] = [None] * len(work)
    errors: list[BaseException] = []
    before = resource_counts()

    with store.serve() as base_url:
        client = Client(api_key=API_KEY, base_url=base_url, max_retries=0)

        def worker(index: int) -> None:
            try:
                for i in range(index, len(work), threads_count):
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
            threads = [threading.Thread(target=worker, args=(n,)) for n in range(threads_count)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
        assert not any(thread.is_alive() for thread in threads)
        client.close()

    assert errors == []
    check_store(store, work, answers)
    assert settle(before) == before


@pytest.mark.parametrize("in_flight", at_scale(110, 1_000, "in_flight"))
@pytest.mark.parametrize("backend", ["httpx", "aiohttp"])
def test_one_async_client_with_many_calls_in_flight(backend: str, in_flight: int) -> None:
    store = seeded_store()
    work = plan(in_flight, "async")
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
