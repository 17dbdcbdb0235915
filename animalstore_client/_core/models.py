"""The API's resources as frozen, slotted attrs classes with snake_case attributes.

The wire format (``categoryId`` and so on) is handled by the one converter in ``_converter``;
``to_dict`` and ``from_dict`` are thin calls into it. Each model, and the ``PetList`` that
``list_pets`` returns, shows as an HTML table in Jupyter (``_display``).
"""

from __future__ import annotations

import enum
from typing import Any, SupportsIndex, TypeVar, cast, overload

from attrs import frozen
from typing_extensions import Self

from animalstore_client._core.converter import plain_row, structure, unstructure
from animalstore_client._core.safe_repr import tolerant_repr

__all__ = ["Error", "NewPet", "Pet", "PetList", "PetStatus"]

_T = TypeVar("_T")


class PetStatus(str, enum.Enum):
    """An animal's availability status. Compares equal to its wire value (``"available"`` ...)."""

    AVAILABLE = "available"
    PENDING = "pending"
    SOLD = "sold"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        # Valid Python that reads well in a model's repr: PetStatus.SOLD, not <PetStatus...>.
        return f"{type(self).__name__}.{self.name}"


class _WireModel:
    """Conversion to and from the wire format, and display in Jupyter, shared by every model."""

    __slots__ = ()

    def to_dict(self, use_api_names: bool = True) -> dict[str, Any]:
        """Return the model as a dict of plain JSON values.

        Args:
            use_api_names: ``True`` (the default): the wire format, camelCase keys
                (``categoryId``), a ``None`` status left out. ``False``: every field under
                its Python name (``category_id``), ``None`` included: a row for a table, such
                as ``pandas.DataFrame([pet.to_dict(use_api_names=False) for pet in pets])``.

        Returns:
            A new dict; a status is its string value.
        """
        return unstructure(self, use_api_names=use_api_names)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Build an instance from a dict in either form ``to_dict`` writes; ignore unknown keys.

        Rows read back from a table work too: an optional field that is ``None``, ``NaN`` or
        ``pandas.NA`` is absent, and integers of another library (``numpy.int64``) are taken
        as ``int``; booleans and floats are not integers.

        Args:
            data: a decoded JSON object, as returned by ``to_dict`` (either form), sent by the
                API, or read from a row of a ``pandas.DataFrame``.

        Returns:
            The model instance.

        Raises:
            WireFormatError: (a ``ValueError``) a field is missing or has the wrong type; the
                message names it by its wire name (for example ``$.categoryId``).
        """
        return structure(plain_row(data, cls), cls)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the model as a one-row HTML table."""
        from animalstore_client._core.display import html_table  # html is imported at first display

        return html_table([self], type(self))


@tolerant_repr
@frozen(repr=False)  # tolerant_repr writes it
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


@tolerant_repr
@frozen(repr=False)  # tolerant_repr writes it
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


class PetList(list[Pet]):
    """What ``list_pets`` returns: a plain ``list`` of ``Pet`` that Jupyter shows as one table.

    Type checkers see ``list[Pet]``; it compares equal to a plain list of the same pets. What
    is made from it stays a ``PetList``, and shows as a table too: a slice (``pets[:3]``), a
    copy, ``pets * 2``, and ``pets + others`` or ``others + pets`` when ``others`` is a list
    of pets (with anything else in it, the result is a plain ``list``).
    """

    __slots__ = ()

    @overload
    def __getitem__(self, index: SupportsIndex, /) -> Pet: ...

    @overload
    def __getitem__(self, index: slice, /) -> PetList: ...

    def __getitem__(self, index: SupportsIndex | slice, /) -> Pet | PetList:
        """Return the pet at ``index``, or a slice of them as a ``PetList``."""
        if isinstance(index, slice):
            return PetList(super().__getitem__(index))
        return super().__getitem__(index)

    @overload
    def __add__(self, other: list[Pet], /) -> PetList: ...

    @overload
    def __add__(self, other: list[_T], /) -> list[_T | Pet]: ...

    def __add__(self, other: list[Any], /) -> list[Any]:
        """Return the pets, then ``other``'s: a ``PetList`` if ``other`` holds only pets."""
        joined = super().__add__(other)
        return PetList(joined) if _all_pets(other) else joined

    def __radd__(self, other: object, /) -> list[Any]:
        """Return ``other``'s items, then the pets: a ``PetList`` if ``other`` holds only pets.

        Python asks a subclass of ``list`` on the right first, so ``[pet] + pets`` comes here.
        """
        if not isinstance(other, list):
            return NotImplemented
        items: list[Any] = cast(Any, other)  # a list of unknown items, to pyright
        joined = [*items, *self]
        return PetList(joined) if _all_pets(items) else joined

    def __mul__(self, times: SupportsIndex, /) -> PetList:
        """Return the pets repeated ``times`` times, as a ``PetList``."""
        return PetList(super().__mul__(times))

    def __rmul__(self, times: SupportsIndex, /) -> PetList:
        """Return the pets repeated ``times`` times, as a ``PetList`` (``2 * pets``)."""
        return PetList(super().__rmul__(times))

    def copy(self) -> PetList:
        """Return a shallow copy, as a ``PetList``."""
        return PetList(self)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: one HTML table, a row per pet (its header alone when empty)."""
        from animalstore_client._core.display import html_table

        return html_table(self, Pet)


def _all_pets(items: list[Any]) -> bool:
    return all(isinstance(item, Pet) for item in items)


@tolerant_repr
@frozen(repr=False)  # tolerant_repr writes it
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
