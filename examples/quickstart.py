"""A tour of the SDK: list, create, fetch (deprecated), and handle a 404 and a 401.

With ANIMALSTORE_API_KEY set, it talks to the configured service (ANIMALSTORE_BASE_URL, or
production). Without it, it starts the built-in reference store on 127.0.0.1 and uses that.

    python examples/quickstart.py
"""

from __future__ import annotations

import os
import warnings
from contextlib import ExitStack

from animalstore_client import AuthenticationError, Client, NotFoundError, Pet, PetStatus


def show(pets: list[Pet]) -> None:
    print(f"  {'id':>4}  {'name':<12} {'category':>8}  status")
    for pet in pets:
        print(f"  {pet.id:>4}  {pet.name:<12} {pet.category_id:>8}  {pet.status or '-'}")


def tour(client: Client) -> None:
    print(f"\n1. Add two animals at {client.base_url}")
    rex = client.create_pet(name="Rex", category_id=1, status=PetStatus.AVAILABLE)
    tom = client.create_pet(name="Tom", category_id=2, status="pending")
    show([rex, tom])

    print("\n2. List the available ones (at most 5)")
    show(client.list_pets(status=PetStatus.AVAILABLE, limit=5))

    print(f"\n3. Fetch Rex by id {rex.id} (a deprecated operation)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        show([client.get_pet(rex.id)])  # type: ignore[deprecated]
    for warning in caught:
        print(f"  {warning.category.__name__}: {warning.message}")

    print("\n4. Fetch an animal that does not exist")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            client.get_pet(999_999)  # type: ignore[deprecated]
        except NotFoundError as exc:
            print(f"  {type(exc).__name__}: {exc}")

    print("\n5. Call with a wrong API key")
    with Client(api_key="not-the-right-key", base_url=client.base_url, max_retries=0) as bad:
        try:
            bad.list_pets()
        except AuthenticationError as exc:
            print(f"  {type(exc).__name__}: {exc}")


def main() -> None:
    with ExitStack() as stack:
        if os.environ.get("ANIMALSTORE_API_KEY"):
            client = stack.enter_context(Client())
        else:
            from animalstore_client.testing import FakeAnimalStore

            store = FakeAnimalStore(api_keys={"demo-key"})
            url = stack.enter_context(store.serve())
            print(f"ANIMALSTORE_API_KEY is not set: using the built-in reference store at {url}")
            client = stack.enter_context(Client(api_key="demo-key", base_url=url))
        tour(client)


if __name__ == "__main__":
    main()
