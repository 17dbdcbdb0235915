"""What type checkers must infer, accept and reject in the public API: checked, never run.

CI checks this module with ``mypy --strict`` and with pyright in strict mode (configured in
``pyproject.toml``). Each ``assert_type`` pins a type an editor shows. Each line that must be
rejected carries the error both checkers must report there: ``# type: ignore[code]`` for mypy
and ``# pyright: ignore[rule]`` for pyright (which is told to read only its own comments). Both
report an ignore comment that suppresses nothing, so a line that stops being rejected fails the
check as surely as a wrong type does.

The checks are functions that are never called (pytest does not collect this module either):
the rejected calls would raise at run time.

Return types are checked, not whole signatures, so that adding a keyword argument to a method
does not break these checks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

import httpx
from typing_extensions import assert_type

from animalstore_client import (
    NOT_GIVEN,
    AnimalStoreError,
    APIConnectionError,
    APIError,
    APIResponse,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AsyncClient,
    AsyncRawResponses,
    AuthenticationError,
    BadRequestError,
    Client,
    Environment,
    Error,
    InternalServerError,
    NewPet,
    NotFoundError,
    NotGiven,
    Pet,
    PetStatus,
    PetStatusLiteral,
    RateLimitError,
    RawResponses,
    Request,
    Response,
    ResponseTooLargeError,
    RetryPolicy,
    WireFormatError,
)
from animalstore_client.testing import FakeAnimalStore, FakeTransport, RecordedRequest


def client_methods(client: Client) -> None:
    assert_type(client.list_pets(), list[Pet])
    assert_type(client.list_pets(limit=5, status="available"), list[Pet])
    assert_type(client.list_pets(status=PetStatus.SOLD), list[Pet])
    assert_type(client.list_pets(status=None), list[Pet])
    assert_type(client.create_pet(name="Rex", category_id=3), Pet)
    assert_type(client.create_pet(name="Rex", category_id=3, status="pending"), Pet)
    assert_type(client.close(), None)
    with client as entered:
        assert_type(entered, Client)
    assert_type(client.base_url, str)
    assert_type(client.timeout, httpx.Timeout)
    assert_type(client.max_retries, int)


async def async_client_methods(client: AsyncClient) -> None:
    assert_type(await client.list_pets(), list[Pet])
    assert_type(await client.list_pets(limit=5, status="available"), list[Pet])
    assert_type(await client.create_pet(name="Rex", category_id=3, status="sold"), Pet)
    assert_type(await client.aclose(), None)
    async with client as entered:
        assert_type(entered, AsyncClient)
    assert_type(client.base_url, str)
    assert_type(client.timeout, httpx.Timeout)
    assert_type(client.max_retries, int)


def with_options_keeps_the_client_type(client: Client, async_client: AsyncClient) -> None:
    assert_type(client.with_options(), Client)
    assert_type(client.with_options(timeout=None, max_retries=0), Client)
    assert_type(client.with_options(timeout=NOT_GIVEN), Client)
    assert_type(client.with_options(deadline=2.5, max_response_bytes=None), Client)
    assert_type(client.deadline, float | None)
    assert_type(async_client.max_response_bytes, int | None)
    assert_type(async_client.with_options(timeout=httpx.Timeout(2.0)), AsyncClient)

    class MyClient(Client):
        pass

    assert_type(MyClient().with_options(max_retries=1), MyClient)


def raw_views(client: Client) -> None:
    raw = client.with_raw_response
    assert_type(raw, RawResponses)
    assert_type(raw.list_pets(limit=5, status="sold"), APIResponse[list[Pet]])
    assert_type(raw.create_pet(name="Rex", category_id=3), APIResponse[Pet])
    response = raw.list_pets()
    assert_type(response.parse(), list[Pet])
    assert_type(response.status_code, int)
    assert_type(response.headers, httpx.Headers)
    assert_type(response.request_id, str | None)
    assert_type(response.http_response, httpx.Response)
    assert_type(response.retries_taken, int)
    assert_type(response.deprecation, datetime | None)
    assert_type(response.sunset, datetime | None)


async def async_raw_views(client: AsyncClient) -> None:
    raw = client.with_raw_response
    assert_type(raw, AsyncRawResponses)
    assert_type(await raw.list_pets(limit=5, status="sold"), APIResponse[list[Pet]])
    assert_type(await raw.create_pet(name="Rex", category_id=3), APIResponse[Pet])
    assert_type((await raw.create_pet(name="Rex", category_id=3)).parse(), Pet)


async def deprecated_get_pet(client: Client, async_client: AsyncClient) -> None:
    # Each use is flagged, on the clients and on their raw views alike.
    assert_type(client.get_pet(7), Pet)  # type: ignore[deprecated]  # pyright: ignore[reportDeprecated]
    assert_type(await async_client.get_pet(7), Pet)  # type: ignore[deprecated]  # pyright: ignore[reportDeprecated]
    raw = client.with_raw_response
    assert_type(raw.get_pet(7), APIResponse[Pet])  # type: ignore[deprecated]  # pyright: ignore[reportDeprecated]
    async_raw = async_client.with_raw_response
    assert_type(await async_raw.get_pet(7), APIResponse[Pet])  # type: ignore[deprecated]  # pyright: ignore[reportDeprecated]


async def statuses(
    client: Client, async_client: AsyncClient, store: FakeAnimalStore, any_string: str
) -> None:
    chosen: PetStatusLiteral = "pending"
    assert_type(client.list_pets(status=chosen), list[Pet])
    # Only the three values, for every status argument.
    client.list_pets(status="weird")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.create_pet(name="Rex", category_id=3, status="weird")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    await async_client.list_pets(status="AVAILABLE")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    await async_client.create_pet(name="Rex", category_id=3, status="")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.with_raw_response.list_pets(status="weird")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    await async_client.with_raw_response.create_pet(name="R", category_id=3, status="x")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.list_pets(status=Environment.STAGING)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    unknown: PetStatusLiteral = "reserved"  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    client.list_pets(status=any_string)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    # The store's helper takes the same three values (run time still stores any string).
    assert_type(store.add_pet("Rex", 3, "sold"), Pet)
    assert_type(store.add_pet("Rex", 3, PetStatus.SOLD), Pet)
    store.add_pet("Rex", 3, "reserved")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    del unknown


async def per_call_options(client: Client, async_client: AsyncClient) -> None:
    assert_type(client.list_pets(timeout=None, extra_headers={"X-Trace": "1"}), list[Pet])
    assert_type(client.list_pets(timeout=2.5), list[Pet])
    assert_type(client.list_pets(deadline=10), list[Pet])
    assert_type(await async_client.list_pets(deadline=None), list[Pet])
    assert_type(await async_client.list_pets(timeout=httpx.Timeout(1.0)), list[Pet])
    assert_type(client.create_pet(name="Rex", category_id=3, idempotency_key="order-7"), Pet)
    assert_type(
        await async_client.with_raw_response.create_pet(
            name="Rex", category_id=3, idempotency_key=None, timeout=NOT_GIVEN
        ),
        APIResponse[Pet],
    )
    assert_type(client.with_options(api_key="k", default_headers={"X-Team": "a"}), Client)
    client.list_pets(timeout="5")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.list_pets(extra_headers={"X-Trace": 1})  # type: ignore[dict-item]  # pyright: ignore[reportArgumentType]
    client.list_pets(idempotency_key="k")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    client.create_pet(name="Rex", category_id=3, idempotency_key=7)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.with_options(api_key=None)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.with_options(default_headers=[("X-A", "1")])  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def other_arguments(client: Client) -> None:
    client.list_pets(limit="5")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.list_pets(5)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    client.create_pet(name="Rex")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    client.create_pet(name=b"Rex", category_id=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    Client(http_client=httpx.AsyncClient())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    AsyncClient(http_client=httpx.Client())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.with_options(max_retries="2")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    pets: list[Pet] = client.with_raw_response.create_pet(name="R", category_id=3).parse()  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    del pets


def tracing(client: Client, async_client: AsyncClient) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import NoOpTracerProvider

    assert_type(Client(tracing=TracerProvider()), Client)
    assert_type(AsyncClient(tracing=NoOpTracerProvider()), AsyncClient)
    assert_type(client.with_options(tracing=True), Client)
    assert_type(async_client.with_options(tracing=None), AsyncClient)
    Client(tracing="yes")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    client.with_options(tracing=1.0)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    AsyncClient(tracing=TracerProvider)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def retry_policies_and_key_providers(client: Client, async_client: AsyncClient) -> None:
    policy = RetryPolicy(max_retries=3, statuses={503})
    assert_type(policy.statuses, AbstractSet[int])
    assert_type(policy.max_retries, int)
    assert_type(Client(retry=policy), Client)
    assert_type(AsyncClient(api_key=lambda: "sk-rotating"), AsyncClient)
    assert_type(client.with_options(retry=policy, api_key=lambda: "k"), Client)
    assert_type(client.list_pets(retry=policy), list[Pet])
    assert_type(async_client.retry, RetryPolicy)
    Client(retry=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    Client(api_key=lambda: 3)  # type: ignore[arg-type,return-value]  # pyright: ignore[reportArgumentType]
    client.create_pet(name="Rex", category_id=3, retry={"max_retries": 1})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def models(pet: Pet, new_pet: NewPet, error: Error) -> None:
    assert_type(pet.id, int)
    assert_type(pet.name, str)
    assert_type(pet.category_id, int)
    # Open: the service may send a status this version of the SDK does not know.
    assert_type(pet.status, PetStatus | str | None)
    assert_type(new_pet.name, str)
    assert_type(new_pet.category_id, int)
    assert_type(new_pet.status, PetStatus | None)
    assert_type(error.code, str)
    assert_type(error.message, str)
    assert_type(error.status, int)
    assert_type(Pet.from_dict({"id": 1}), Pet)
    assert_type(NewPet.from_dict({}), NewPet)
    assert_type(Error.from_dict({}), Error)
    assert_type(pet.to_dict(), dict[str, Any])
    assert_type(Pet(id=1, name="Rex", category_id=3, status="reserved"), Pet)
    assert_type(PetStatus("sold"), PetStatus)
    Pet(id="7", name="Rex", category_id=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    NewPet(name="Rex", category_id=3, status="reserved")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    pet.name = "Tom"  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]


def exceptions() -> None:
    try:
        pass
    except NotFoundError as not_found:
        assert_type(not_found.status_code, int)
        assert_type(not_found.code, str | None)
        assert_type(not_found.message, str)
        assert_type(not_found.error, Error | None)
        assert_type(not_found.response, httpx.Response)
        assert_type(not_found.request, httpx.Request)
        assert_type(not_found.request_id, str | None)
    except (BadRequestError, AuthenticationError, RateLimitError, InternalServerError) as status:
        assert_type(status.status_code, int)
        assert_type(status.error, Error | None)
    except APIStatusError as other_status:
        assert_type(other_status.status_code, int)
    except ResponseTooLargeError as too_large:
        assert_type(too_large.request, httpx.Request)
    except APIResponseValidationError as invalid:
        assert_type(invalid.response, httpx.Response)
        assert_type(invalid.request, httpx.Request)
        assert_type(invalid.message, str)
    except APITimeoutError as timeout:
        assert_type(timeout.request, httpx.Request)
    except APIConnectionError as connection:
        assert_type(connection.message, str)
    except APIError as api:
        assert_type(api.request, httpx.Request)
    except WireFormatError as wire:
        assert_type(wire.problems, list[str])
        assert_type(wire.complete, bool)
    except AnimalStoreError as anything:
        assert_type(anything, AnimalStoreError)
    # from_dict's error is a ValueError too, as it was before it was public.
    wire_error: ValueError = WireFormatError(["$.id: required field is missing"])
    del wire_error


def sentinel() -> None:
    assert_type(NOT_GIVEN, NotGiven)


def testing(store: FakeAnimalStore) -> None:
    assert_type(store.client(), Client)
    assert_type(store.async_client(), AsyncClient)
    assert_type(store.transport(), FakeTransport)
    assert_type(store.pets, list[Pet])
    assert_type(store.requests, list[RecordedRequest])
    assert_type(store.requests[0].json(), Any)
    assert_type(store.add_pet("Rex", 3), Pet)
    with store.serve() as base_url:
        assert_type(base_url, str)
    store.add_pet("Rex", "3")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def middleware(request: Request, response: Response) -> None:
    def sync_handler(request: Request, call_next: Callable[[Request], Response]) -> Response:
        return call_next(request.with_headers({"X-Trace": "1"}))

    async def async_handler(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        return await call_next(request)

    assert_type(request.method, str)
    assert_type(request.url, str)
    assert_type(request.headers, Mapping[str, str])
    assert_type(request.content, bytes | None)
    assert_type(request.operation, str)
    assert_type(request.attempt, int)
    assert_type(request.with_headers({"X-A": "1"}), Request)
    assert_type(response.status_code, int)
    assert_type(response.headers, Mapping[str, str])
    assert_type(response.content, bytes)
    assert_type(response.json(), Any)
    assert_type(Response(200, json=[]), Response)
    Client(middleware=[sync_handler])
    AsyncClient(middleware=(async_handler,))
    Client(middleware=[async_handler])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
    AsyncClient(middleware=[sync_handler])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
    Response(200, content="text")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
