"""Many calls at once on one AsyncClient: 50 creates, then filtered lists, with asyncio.gather.

An asyncio.Semaphore keeps at most MAX_IN_FLIGHT creates running at a time, the usual way to
stay polite to a service (and within its rate limits) when you have many calls to make.

The animals created are counted by status from the creates' answers: a list call returns at
most 100 animals and the API has no paging, so in a store that already holds many, the lists
show only some (or none) of those just created. The lists are shown for what they are.

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
PAGE = 100  # the most one list_pets call returns: the API has no paging


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


async def list_by_status(client: AsyncClient) -> dict[PetStatus, list[Pet]]:
    """List each status at once, one request each: at most PAGE animals of each."""
    pages = await asyncio.gather(
        *(client.list_pets(status=status, limit=PAGE) for status in STATUSES)
    )
    return dict(zip(STATUSES, pages, strict=True))


async def run(client: AsyncClient) -> None:
    pets = await create_pets(client, COUNT)
    ids = {pet.id for pet in pets}
    print(f"Created {len(pets)} animals, at most {MAX_IN_FLIGHT} requests at a time")
    # Requests finish in any order, so which name gets which id varies from run to run.
    print(f"  {pets[0].name} to {pets[-1].name}, ids {min(ids)} to {max(ids)}")
    for status in STATUSES:  # each create's answer says what the service stored
        print(f"  {status.value:<10} {sum(pet.status == status for pet in pets):>3}")

    print(f"Listed each status, {len(STATUSES)} requests at once, at most {PAGE} animals each")
    for status, page in (await list_by_status(client)).items():
        ours = sum(pet.id in ids for pet in page)
        full = ": a full page, there may be more" if len(page) == PAGE else ""
        print(f"  {status.value:<10} {len(page):>3} listed, {ours:>3} of those created{full}")


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
