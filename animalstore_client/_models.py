"""The API's resources as frozen, slotted attrs classes with snake_case attributes.

The wire format (``categoryId`` and so on) is handled by the one converter in ``_converter``;
``to_dict`` and ``from_dict`` are thin calls into it.
"""

from __future__ import annotations

import enum
from typing import Any

from attrs import frozen
from typing_extensions import Self

from animalstore_client._converter import structure, unstructure

__all__ = ["Error", "NewPet", "Pet", "PetStatus"]


class PetStatus(str, enum.Enum):
    """An animal's availability status. Compares equal to its wire value (``"available"`` ...)."""

    AVAILABLE = "available"
    PENDING = "pending"
    SOLD = "sold"

    def __str__(self) -> str:
        return self.value


class _WireModel:
    """Conversion to and from the wire format, shared by every model."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """Return the wire-format dict (camelCase keys, ``status`` omitted when ``None``)."""
        return unstructure(self)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Build an instance from a wire-format dict; unknown keys are ignored.

        Args:
            data: a decoded JSON object, as returned by ``to_dict`` or sent by the API.

        Returns:
            The model instance.

        Raises:
            WireFormatError: (a ``ValueError``) a field is missing or has the wrong type; the
                message names it by its wire name (for example ``$.categoryId``).
        """
        return structure(data, cls)


@frozen
class NewPet(_WireModel):
    """The body of a create request: an animal before the service assigns its id.

    Attributes:
        name: the animal's name.
        category_id: identifier of the category it belongs to (``categoryId`` on the wire).
        status: availability status, or ``None`` to leave it to the service.
    """

    name: str
    category_id: int
    status: PetStatus | None = None


@frozen
class Pet(_WireModel):
    """An animal as the service returns it.

    Attributes:
        id: unique identifier assigned by the service on creation.
        name: the animal's name.
        category_id: identifier of the category it belongs to (``categoryId`` on the wire).
        status: a ``PetStatus``; a plain ``str`` when the service sends a status this version of
            the SDK does not know; ``None`` when absent.
    """

    id: int
    name: str
    category_id: int
    status: PetStatus | str | None = None


@frozen
class Error(_WireModel):
    """The body of every error response.

    Attributes:
        code: machine-readable error code (the spec does not list the values).
        message: human-readable description.
        status: the HTTP status code, the same number as the response's.
    """

    code: str
    message: str
    status: int
