"""The API's operations, each declared once: what everything else reads about an operation.

An ``Endpoint`` says what the spec says of one operation (its method and route, what its
successful answer holds, whether it is deprecated and until when) and the names the SDK gives
it (the clients' method, the reference store's fault name, a summary for the command line).
The request recipes (``operations.py``), the deprecation warnings, the reference store's routes,
its fault vocabulary and deprecation headers, and the command line's help read it here;
``tests/contract/test_every_operation.py`` checks it against the OpenAPI document. Adding an
operation is one entry in ``ENDPOINTS`` (docs/development.md, "Adding an operation").
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from attrs import field, frozen

from animalstore_client._core.models import Pet, PetList
from animalstore_client._core.safe_repr import tolerant_repr

__all__ = [
    "CREATE_PET",
    "ENDPOINTS",
    "GET_PET",
    "LIST_PETS",
    "ROUTE_PARAMETER",
    "Endpoint",
    "Removal",
]

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
#: A route's parameter, as the spec writes it: ``{petId}``; group 1 is its name.
ROUTE_PARAMETER = re.compile(r"\{(\w+)\}")


@tolerant_repr
@frozen(eq=False, repr=False)  # one of each, never compared; tolerant_repr writes the repr
class Removal:
    """An operation the spec deprecates: when the service removes it, and what to use instead.

    Attributes:
        on: the day the service removes it (the spec's date; the ``Sunset`` a service sends).
        instead: what to call instead, as a client method (``"list_pets() with a status
            filter"``).
    """

    on: date
    instead: str


@tolerant_repr
@frozen(eq=False, repr=False)
class Endpoint:
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
        name: ``"GET /pets/{petId}"``: how messages, logs, the store and its faults name it.
        idempotent: whether sending it twice is harmless (every method but ``POST``), so that a
            failure that may have reached the service may be retried.
    """

    method: str
    route: str
    method_name: str
    fault_name: str
    result: Any
    summary: str
    removal: Removal | None = None
    name: str = field(init=False)
    idempotent: bool = field(init=False)

    @name.default
    def _name(self) -> str:
        return f"{self.method} {self.route}"

    @idempotent.default
    def _idempotent(self) -> bool:
        return self.method != "POST"

    def path(self, **values: object) -> str:
        """Return the route with each parameter's value, without its leading slash.

        Args:
            values: one value per parameter of the route, by its name (``petId=7``), already
                checked.

        Returns:
            The path relative to the base URL (``"pets/7"``).
        """
        if not values:  # most operations: no parameter, no regular expression per call
            return self.route[1:]
        return ROUTE_PARAMETER.sub(lambda match: str(values[match[1]]), self.route)[1:]

    @property
    def deprecation(self) -> str | None:
        """What calling it warns, or ``None`` when the spec does not deprecate it."""
        if self.removal is None:
            return None
        on = self.removal.on
        removed = f"{on.day} {_MONTHS[on.month - 1]} {on.year}"  # not %B: the locale's
        return (
            f"{self.method_name}() calls {self.name}, which is deprecated and will be removed "
            f"on {removed}; use {self.removal.instead} instead"
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
