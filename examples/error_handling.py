"""The errors an SDK call raises, provoked one at a time, with what each one carries.

The exception classes are in the README's "Errors" section. RateLimitError (429) and
InternalServerError (5xx) are not provoked here: the built-in store never answers them.

With ANIMALSTORE_API_KEY set, it talks to the configured service (ANIMALSTORE_BASE_URL, or
production). Without it, it uses the built-in reference store, in process.

    python examples/error_handling.py
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from contextlib import ExitStack

from animalstore_client import (
    AnimalStoreError,
    APIConnectionError,
    APIError,
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    Client,
    NotFoundError,
)


def describe(exc: Exception) -> str:
    """One line: the exception's class and what it carries."""
    name = type(exc).__name__
    if isinstance(exc, APIStatusError):  # the service answered, with a non-2xx status
        return (
            f"{name}: status_code={exc.status_code} code={exc.code!r} "
            f"request_id={exc.request_id!r} message={exc.message!r}"
        )
    if isinstance(exc, APIError):  # no answer at all: no status, code or request id
        return f"{name}: message={exc.message!r}"
    return f"{name}: {exc}"  # TypeError or ValueError, from the SDK's own argument checks


def create_or_explain(client: Client, name: str) -> str:
    """The handler you would write around a call: the most specific classes first."""
    try:
        pet = client.create_pet(name=name, category_id=3)
    except BadRequestError as exc:  # 400: the service rejected the animal
        return f"rejected: {exc.code}: {exc.message}"
    except AuthenticationError:  # 401
        return "the API key was refused: check ANIMALSTORE_API_KEY"
    except APIStatusError as exc:  # any other non-2xx: RateLimitError, InternalServerError ...
        return f"the service answered {exc}"
    except AnimalStoreError as exc:  # no answer, or one that does not fit the schema
        return f"no usable answer ({type(exc).__name__}): try again later"
    return f"created {pet.name} with id {pet.id}"


def tour(connect: Callable[..., Client]) -> None:
    with ExitStack() as stack:
        client = stack.enter_context(connect())
        wrong_key = stack.enter_context(connect(api_key="not-the-right-key"))
        # Nothing listens on port 9; no retries and a short timeout, to fail fast.
        offline = stack.enter_context(
            Client(api_key="demo-key", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=2)
        )

        print("1. A wrong API key: AuthenticationError (401)")
        try:
            wrong_key.list_pets()
        except AuthenticationError as exc:
            print(f"  {describe(exc)}")

        print("\n2. An animal that does not exist: NotFoundError (404)")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # get_pet is deprecated
                client.get_pet(999_999)  # type: ignore[deprecated, unused-ignore]
        except NotFoundError as exc:
            print(f"  {describe(exc)}")

        print("\n3. Bad arguments: TypeError or ValueError, raised before anything is sent")
        bad_calls: list[Callable[[], object]] = [
            lambda: client.create_pet(name="Rex", category_id="3"),  # type: ignore[arg-type]
            lambda: client.list_pets(limit=500),
            lambda: client.list_pets(status="lost"),  # type: ignore[arg-type]
        ]
        for bad_call in bad_calls:
            try:
                bad_call()
            except (TypeError, ValueError) as exc:
                print(f"  {describe(exc)}")
        # These checks mirror the service's, so a BadRequestError (400) only comes from rules
        # the spec does not show; its code and message then name the field (see step 5).

        print("\n4. No service at the address: APIConnectionError (APITimeoutError on a timeout)")
        try:
            offline.list_pets()
        except APIConnectionError as exc:
            print(f"  {describe(exc)}")

        print("\n5. One handler for all of them")
        for label, each in [("right key", client), ("wrong key", wrong_key), ("offline", offline)]:
            print(f"  {label:<10} {create_or_explain(each, 'Rex')}")


def main() -> None:
    if os.environ.get("ANIMALSTORE_API_KEY"):
        tour(Client)
    else:
        from animalstore_client.testing import FakeAnimalStore

        store = FakeAnimalStore(api_keys={"demo-key"})
        print("ANIMALSTORE_API_KEY is not set: using the built-in reference store, in process\n")
        tour(store.client)


if __name__ == "__main__":
    main()
