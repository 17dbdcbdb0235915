"""Typed Python client for the animal store API, sync and async.

Example::

    from animalstore_client import Client

    with Client() as client:  # key from ANIMALSTORE_API_KEY
        pet = client.create_pet(name="Rex", category_id=3, status="available")
        print(client.list_pets(status="available"))

The built-in reference store for tests and demos is in ``animalstore_client.testing``.
"""

from animalstore_client._backends.defaults import (
    DefaultAioHttpClient,
    DefaultAsyncHttpx2Client,
    DefaultAsyncHttpxClient,
    DefaultHttpx2Client,
    DefaultHttpxClient,
)
from animalstore_client._client import AsyncClient, AsyncRawResponses, Client, RawResponses
from animalstore_client._core.config import (
    BASE_URLS,
    DEFAULT_CONNECTION_LIMITS,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    Environment,
    TimeoutLike,
    TracerProviderLike,
)
from animalstore_client._core.converter import WireFormatError
from animalstore_client._core.exceptions import (
    AnimalStoreError,
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    RateLimitError,
    ResponseTooLargeError,
)
from animalstore_client._core.exchange import Request, Response
from animalstore_client._core.models import Error, NewPet, Pet, PetList, PetStatus
from animalstore_client._core.response import APIResponse
from animalstore_client._core.retry_policy import DEFAULT_MAX_RETRIES, RetryPolicy
from animalstore_client._core.types import NOT_GIVEN, NotGiven, PetStatusLiteral
from animalstore_client._exports import publish
from animalstore_client._version import __version__

__all__ = [
    "BASE_URLS",
    "DEFAULT_CONNECTION_LIMITS",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "NOT_GIVEN",
    "APIConnectionError",
    "APIError",
    "APIResponse",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AnimalStoreError",
    "AsyncClient",
    "AsyncRawResponses",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "DefaultAioHttpClient",
    "DefaultAsyncHttpx2Client",
    "DefaultAsyncHttpxClient",
    "DefaultHttpx2Client",
    "DefaultHttpxClient",
    "Environment",
    "Error",
    "InternalServerError",
    "NewPet",
    "NotFoundError",
    "NotGiven",
    "Pet",
    "PetList",
    "PetStatus",
    "PetStatusLiteral",
    "RateLimitError",
    "RawResponses",
    "Request",
    "Response",
    "ResponseTooLargeError",
    "RetryPolicy",
    "TimeoutLike",
    "TracerProviderLike",
    "WireFormatError",
    "__version__",
]

publish(globals())
