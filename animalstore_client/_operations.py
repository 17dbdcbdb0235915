"""The API's operations as request recipes.

Each checks its arguments and says what to send and what type the answer has.

Plain functions, shared by ``Client`` and ``AsyncClient``.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from attrs import define

from animalstore_client._converter import enum_value, unstructure
from animalstore_client._models import NewPet, Pet, PetStatus
from animalstore_client._validation import check_enum, check_int, check_str

__all__ = ["Operation", "create_pet", "get_pet", "list_pets"]

T = TypeVar("T")
#: Built once: a fresh `list[Pet]` per call would also be hashed afresh by every lookup.
_PETS = list[Pet]


# Not frozen, though never mutated: one is built per call, and a frozen attrs __init__ costs
# an object.__setattr__ per field.
@define
class Operation(Generic[T]):
    """What one API call sends, and the type its successful answer is structured into.

    Attributes:
        method: the HTTP method.
        path: the path relative to the base URL, without a leading slash (``"pets/7"``).
        result_type: the type of the structured answer (``Pet``, ``list[Pet]``).
        params: the query parameters.
        json: the JSON body, already in wire format.
    """

    method: str
    path: str
    result_type: Any
    params: dict[str, str | int] | None = None
    json: dict[str, Any] | None = None

    @property
    def idempotent(self) -> bool:
        """Whether sending it twice is harmless: every operation but a ``POST``."""
        return self.method != "POST"


def list_pets(*, limit: object, status: object) -> Operation[list[Pet]]:
    """Recipe for ``GET /pets``; ``limit`` and ``status`` are sent only when given.

    Raises:
        TypeError: ``limit`` is not an int, or ``status`` not a str.
        ValueError: ``limit`` is outside 1..100, or ``status`` is not a known status.
    """
    params: dict[str, str | int] = {}
    if limit is not None:
        params["limit"] = check_int("limit", limit, 1, 100)
    if status is not None:
        params["status"] = enum_value(check_enum("status", status, PetStatus))  # type: ignore[assignment]
    return Operation("GET", "pets", _PETS, params=params)


def create_pet(*, name: object, category_id: object, status: object) -> Operation[Pet]:
    """Recipe for ``POST /pets`` with a ``NewPet`` body.

    Raises:
        TypeError: ``name`` is not a str, ``category_id`` not an int, ``status`` not a str.
        ValueError: ``category_id`` is outside int64, or ``status`` is not a known status.
    """
    new_pet = NewPet(
        name=check_str("name", name),
        category_id=check_int("category_id", category_id),
        status=None if status is None else check_enum("status", status, PetStatus),
    )
    return Operation("POST", "pets", Pet, json=unstructure(new_pet))


def get_pet(pet_id: object) -> Operation[Pet]:
    """Recipe for the deprecated ``GET /pets/{petId}``.

    Raises:
        TypeError: ``pet_id`` is not an int.
        ValueError: ``pet_id`` is outside int64.
    """
    return Operation("GET", f"pets/{check_int('pet_id', pet_id)}", Pet)
