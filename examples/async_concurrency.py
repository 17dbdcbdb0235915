"""Many calls at once on one AsyncClient: 50 creates, then filtered lists, with asyncio.gather.

An asyncio.Semaphore keeps at most MAX_IN_FLIGHT creates running at a time, the usual way to
stay polite to a service (and within its rate limits) when you have many calls to make.

With ANIMALSTORE_API_KEY set, it talks to the configured service (ANIMALSTORE_BASE_URL, or
production). Without it, it starts the built-in reference store on 127.0.0.1 and uses that.

    python examples/async_concurrency.py
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack

from animalstore_client import AsyncClient, Pet, PetStatus

COUNT = 50
MAX_IN_FLIGHT = 10
STATUSES = list(PetStatus)


async def create_pets(client: AsyncClient, count: int) -> list[Pet]:
    """Create `count` animals concurrently, at most MAX_IN_FLIGHT requests at a time."""
    semaphore = asyncio.Semaphore(MAX_IN_FLIGHT)

    async def create(number: int) -> Pet:
        async with semaphore:  # waits while MAX_IN_FLIGHT creates are under way
            return await client.create_pet(
                name=f"pet-{number:02}",
                category_id=number % 5 + 1,
                status=STATUSES[number % len(STATUSES)],
            )

    # gather returns the results in the order of its arguments, whatever order they finish in.
    return await asyncio.gather(*(create(number) for number in range(1, count + 1)))


async def count_by_status(client: AsyncClient, ids: set[int]) -> dict[PetStatus, int]:
    """List each status at once (one request each) and count the animals among `ids`."""
    pages = await asyncio.gather(
        *(client.list_pets(status=status, limit=100) for status in STATUSES)
    )
    return {
        status: sum(pet.id in ids for pet in page)
        for status, page in zip(STATUSES, pages, strict=True)
    }


async def run(client: AsyncClient) -> None:
    pets = await create_pets(client, COUNT)
    ids = {pet.id for pet in pets}
    print(f"Created {len(pets)} animals, at most {MAX_IN_FLIGHT} requests at a time")
    # Requests finish in any order, so which name gets which id varies from run to run.
    print(f"  {pets[0].name} to {pets[-1].name}, ids {min(ids)} to {max(ids)}")

    print(f"Listed them by status, {len(STATUSES)} requests at once")
    for status, count in (await count_by_status(client, ids)).items():
        print(f"  {status.value:<10} {count:>3}")


async def main() -> None:
    async with AsyncExitStack() as stack:
        if os.environ.get("ANIMALSTORE_API_KEY"):
            client = await stack.enter_async_context(AsyncClient())
        else:
            from animalstore_client.testing import FakeAnimalStore

            store = FakeAnimalStore(api_keys={"demo-key"})
            base_url = stack.enter_context(store.serve())
            print("ANIMALSTORE_API_KEY is not set: using the built-in reference store on 127.0.0.1")
            client = await stack.enter_async_context(
                AsyncClient(api_key="demo-key", base_url=base_url)
            )
        await run(client)


if __name__ == "__main__":
    asyncio.run(main())
