"""The API's operations: each declared once, and its request recipe.

An ``Endpoint`` says what the spec says of one operation (its method and route, what its
successful answer holds, whether it is deprecated and until when) and the names the SDK gives
it (the clients' method, the reference store's fault name, a summary for the command line).
The recipes below, the deprecation warnings, the reference store's routes, its fault
vocabulary and deprecation headers, and the command line's help read it here;
``tests/contract/test_every_operation.py`` checks ``ENDPOINTS`` against the OpenAPI document.
Adding an operation is one entry there and its recipe (docs/development.md, "Adding an
operation").

A recipe checks its arguments, per-call options included, and says what to send: an
``Operation`` of its ``Endpoint``, warning first when the endpoint is deprecated. Plain
functions, shared by ``Client``, ``AsyncClient`` and their raw views, which call a recipe with
the arguments their method was given: each takes its client method's parameters, with the same
names, kinds and defaults.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Any, Generic, NamedTuple, TypeVar

from attrs import define

from animalstore_client._core.config import check_deadline, check_headers, check_timeout
from animalstore_client._core.converter import enum_value, unstructure
from animalstore_client._core.deprecation import warn_deprecated
from animalstore_client._core.models import NewPet, Pet, PetList, PetStatus
from animalstore_client._core.retry_policy import RetryPolicy, check_retry
from animalstore_client._core.safe_repr import tolerant_repr
from animalstore_client._core.types import NOT_GIVEN, NotGiven
from animalstore_client._core.validation import check_enum, check_int, check_str, check_token

__all__ = [
    "CREATE_PET",
    "ENDPOINTS",
    "GET_PET",
    "LIST_PETS",
    "Endpoint",
    "Operation",
    "Removal",
    "create_pet",
    "get_pet",
    "list_pets",
]

T = TypeVar("T")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


# NamedTuples, not attrs classes: declared once each, at import, where an attrs class costs a
# quarter of a millisecond to build (docs/performance.md, case 6).
class Removal(NamedTuple):
    """An operation the spec deprecates: when the service removes it, and what to use instead.

    Attributes:
        on: the day the service removes it (the spec's date; the ``Sunset`` a service sends).
        instead: what to call instead, as a client method (``"list_pets() with a status
            filter"``).
    """

    on: date
    instead: str

    @property
    def day(self) -> str:
        """The day of removal in words, as messages say it (``"5 December 2030"``)."""
        return f"{self.on.day} {_MONTHS[self.on.month - 1]} {self.on.year}"  # not %B: a locale's


class Endpoint(NamedTuple):
    """One operation of the API.

    Attributes:
        method: the HTTP method (``"GET"``).
        route: the path as the spec writes it, from the base URL (``"/pets/{petId}"``).
        method_name: the clients' method for it (``"get_pet"``): the spec's ``operationId`` in
            snake case.
        fault_name: what the reference store's faults call it (``"get"``).
        result: the type its successful answer is structured into (``Pet``, ``PetList``);
            ``None`` for an answer without a body (a 204): the call then returns ``None``.
        summary: what it does, for the command line's help (``"fetch one animal by id"``).
        removal: when and for what the spec deprecates it; ``None`` if it does not.
    """

    method: str
    route: str
    method_name: str
    fault_name: str
    result: Any
    summary: str
    removal: Removal | None = None

    @property
    def name(self) -> str:
        """``"GET /pets/{petId}"``: how messages, logs, the store and its faults name it."""
        return f"{self.method} {self.route}"

    @property
    def idempotent(self) -> bool:
        """Whether sending it twice is harmless (every method but ``POST``).

        A failure that may have reached the service is then retried.
        """
        return self.method != "POST"

    def path(self, **values: object) -> str:
        """Return the route with each parameter's value, without its leading slash.

        Args:
            values: one value per parameter of the route, by its name (``petId=7``), already
                checked.

        Returns:
            The path relative to the base URL (``"pets/7"``).
        """
        return self.route[1:].format_map(values)  # the spec's {petId} is str.format's field

    @property
    def deprecation(self) -> str | None:
        """What calling it warns, or ``None`` when the spec does not deprecate it."""
        if self.removal is None:
            return None
        return (
            f"{self.method_name}() calls {self.name}, which is deprecated and will be removed "
            f"on {self.removal.day}; use {self.removal.instead} instead"
        )


LIST_PETS = Endpoint("GET", "/pets", "list_pets", "list", PetList, "list animals")
CREATE_PET = Endpoint(
    "POST", "/pets", "create_pet", "create", Pet, "add an animal, or every animal of a file"
)
GET_PET = Endpoint(
    "GET",
    "/pets/{petId}",
    "get_pet",
    "get",
    Pet,
    "fetch one animal by id",
    Removal(date(2030, 12, 5), "list_pets() with a status filter"),
)

#: Every operation, in the spec's order.
ENDPOINTS: tuple[Endpoint, ...] = (LIST_PETS, CREATE_PET, GET_PET)
#: Stripe's limit, which services that deduplicate on the key commonly share.
_MAX_IDEMPOTENCY_KEY = 255


# Not frozen, though never mutated: one is built per call, and a frozen attrs __init__ costs
# an object.__setattr__ per field. Nothing compares them: no __eq__ to build at import.
@tolerant_repr
@define(eq=False, repr=False)  # tolerant_repr writes the repr
class Operation(Generic[T]):
    """What one API call sends, and the type its successful answer is structured into.

    Attributes:
        endpoint: the operation, as ``_core/endpoints.py`` declares it.
        path: the path relative to the base URL, without a leading slash (``"pets/7"``).
        params: the query parameters.
        json: the JSON body, already in wire format.
        headers: this call's own headers, names in lower case, sent over the client's.
        timeout: this call's timeout as the request extension httpx reads; ``None`` for the
            client's.
        deadline: this call's deadline in seconds (``None``: none); ``NOT_GIVEN`` for the
            client's.
        retry: this call's retry policy; ``None`` for the client's.
    """

    endpoint: Endpoint
    path: str
    params: dict[str, str | int] | None = None
    json: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    timeout: dict[str, float | None] | None = None
    deadline: float | NotGiven | None = NOT_GIVEN
    retry: RetryPolicy | None = None

    @property
    def method(self) -> str:
        """The HTTP method."""
        return self.endpoint.method

    @property
    def name(self) -> str:
        """The operation as the spec names it (``"GET /pets/{petId}"``), for messages."""
        return self.endpoint.name

    @property
    def result_type(self) -> Any:
        """The type of the structured answer (``Pet``, ``PetList``)."""
        return self.endpoint.result

    @property
    def deprecated(self) -> bool:
        """Whether the SDK itself warns when the operation is called.

        The service's own deprecation signals for it are then not warned about a second time.
        """
        return self.endpoint.removal is not None

    @property
    def idempotent(self) -> bool:
        """Whether sending it twice is harmless: every operation but a ``POST``."""
        return self.endpoint.idempotent


def list_pets(
    *,
    limit: object = None,
    status: object = None,
    timeout: object = NOT_GIVEN,
    deadline: object = NOT_GIVEN,
    retry: object = NOT_GIVEN,
    extra_headers: object = None,
) -> Operation[list[Pet]]:
    """Recipe for ``GET /pets``; ``limit`` and ``status`` are sent only when given.

    ``timeout``, ``deadline``, ``retry`` and ``extra_headers`` are the call's own, as the
    client methods take them.

    Raises:
        TypeError: ``limit`` is not an int, ``status`` not a str, or a per-call option has the
            wrong type.
        ValueError: ``limit`` is outside 1..100, ``status`` is not a known status, or a
            per-call option is invalid.
    """
    params: dict[str, str | int] = {}
    if limit is not None:
        params["limit"] = check_int("limit", limit, 1, 100)
    if status is not None:
        params["status"] = enum_value(check_enum("status", status, PetStatus))  # type: ignore[assignment]
    return Operation(
        LIST_PETS,
        LIST_PETS.path(),
        params=params,
        # Checked only when given: the plain call is the hot path.
        headers=None if extra_headers is None else _extra_headers(extra_headers),
        timeout=None if timeout is NOT_GIVEN else _timeout(timeout),
        deadline=deadline if deadline is NOT_GIVEN else check_deadline("deadline", deadline),
        retry=None if retry is NOT_GIVEN else check_retry("retry", retry),
    )


def create_pet(
    *,
    name: object,
    category_id: object,
    status: object = None,
    idempotency_key: object = None,
    timeout: object = NOT_GIVEN,
    deadline: object = NOT_GIVEN,
    retry: object = NOT_GIVEN,
    extra_headers: object = None,
) -> Operation[Pet]:
    """Recipe for ``POST /pets`` with a ``NewPet`` body and an ``Idempotency-Key``.

    The key is ``idempotency_key`` when given, else a fresh UUID4: one per call, sent on every
    attempt of it.

    Raises:
        TypeError: ``name`` is not a str, ``category_id`` not an int, ``status`` not a str,
            ``idempotency_key`` not a str, or a per-call option has the wrong type.
        ValueError: ``category_id`` is outside int64, ``status`` is not a known status,
            ``idempotency_key`` is not 1 to 255 printable ASCII characters without
            whitespace, or a per-call option is invalid.
    """
    new_pet = NewPet(
        name=check_str("name", name),
        category_id=check_int("category_id", category_id),
        status=None if status is None else check_enum("status", status, PetStatus),
    )
    if idempotency_key is None:
        key = _fresh_idempotency_key()
    else:
        key = check_token("idempotency_key", idempotency_key, _MAX_IDEMPOTENCY_KEY)
    headers = {} if extra_headers is None else _extra_headers(extra_headers)
    headers["idempotency-key"] = key  # never in extra_headers: check_headers refuses it
    return Operation(
        CREATE_PET,
        CREATE_PET.path(),
        json=unstructure(new_pet),
        headers=headers,
        timeout=None if timeout is NOT_GIVEN else _timeout(timeout),
        deadline=deadline if deadline is NOT_GIVEN else check_deadline("deadline", deadline),
        retry=None if retry is NOT_GIVEN else check_retry("retry", retry),
    )


def get_pet(
    pet_id: object,
    *,
    timeout: object = NOT_GIVEN,
    deadline: object = NOT_GIVEN,
    retry: object = NOT_GIVEN,
    extra_headers: object = None,
) -> Operation[Pet]:
    """Recipe for the deprecated ``GET /pets/{petId}``.

    Raises:
        TypeError: ``pet_id`` is not an int, or a per-call option has the wrong type.
        ValueError: ``pet_id`` is outside int64, or a per-call option is invalid.
    """
    operation: Operation[Pet] = Operation(
        GET_PET,
        GET_PET.path(petId=check_int("pet_id", pet_id)),
        # Checked only when given: the plain call is the hot path.
        headers=None if extra_headers is None else _extra_headers(extra_headers),
        timeout=None if timeout is NOT_GIVEN else _timeout(timeout),
        deadline=deadline if deadline is NOT_GIVEN else check_deadline("deadline", deadline),
        retry=None if retry is NOT_GIVEN else check_retry("retry", retry),
    )
    return _warned(operation)


def _warned(operation: Operation[T]) -> Operation[T]:
    """Warn that the operation is deprecated, at the caller's line, once its arguments passed.

    The client's method and its raw view's alike, with the message its declaration makes.
    """
    message = operation.endpoint.deprecation
    if message is not None:
        warn_deprecated(message)
    return operation


def _fresh_idempotency_key() -> str:
    """Return a random UUID4 in its text form, as ``str(uuid.uuid4())`` does, in half the time.

    ``uuid`` builds a ``UUID`` object only to print it: here the 122 random bits go straight
    into the version-4 layout, and ``uuid`` is never imported.
    """
    octets = bytearray(os.urandom(16))
    octets[6] = (octets[6] & 0x0F) | 0x40  # version 4
    octets[8] = (octets[8] & 0x3F) | 0x80  # the RFC 4122 variant
    text = octets.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _extra_headers(extra_headers: object) -> dict[str, str]:
    """Check a call's ``extra_headers``; names in lower case, as in the client's headers."""
    checked = check_headers("extra_headers", extra_headers)
    return {name.lower(): value for name, value in checked.items()}


def _timeout(timeout: object) -> dict[str, float | None]:
    """Check a call's ``timeout`` and return it as the request extension httpx reads."""
    return check_timeout(timeout).as_dict()
