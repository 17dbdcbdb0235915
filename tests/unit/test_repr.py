"""``repr()`` of any SDK object never raises, whatever state its constructor stopped in.

A traceback formatted with captured locals (``unittest --locals``, ``pytest --showlocals``,
rich, Sentry) calls ``repr`` on the ``self`` of a constructor that raised.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
import traceback
from typing import Any

import pytest

import animalstore_client
import animalstore_client.testing
from animalstore_client import AsyncClient, Client


def sdk_classes() -> list[type]:
    """Every class defined in the package's modules, private ones included; enums aside."""
    found: dict[type, None] = {}
    prefix = animalstore_client.__name__ + "."
    for module_info in pkgutil.walk_packages(animalstore_client.__path__, prefix):
        if not module_info.name.endswith("__main__"):
            module = importlib.import_module(module_info.name)
            for value in vars(module).values():
                if (
                    inspect.isclass(value)
                    and value.__module__.startswith("animalstore_client")
                    and not issubclass(value, enum.Enum)
                ):
                    found[value] = None
    return list(found)


CLASSES = sdk_classes()


def test_the_classes_are_found() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"Client", "Pet", "APIResponse", "ClientOptions", "Answer"} <= names
    assert len(CLASSES) > 40  # every module walked: 48 when the layout changed


@pytest.mark.parametrize(
    "cls",
    # A NamedTuple is made whole by tuple.__new__ or not at all: none is ever half-built.
    [cls for cls in CLASSES if not issubclass(cls, tuple)],
    ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}",
)
def test_repr_and_str_of_an_object_whose_constructor_never_ran(cls: Any) -> None:
    # What a constructor that raised before its first assignment leaves behind.
    half_built = cls.__new__(cls)

    assert isinstance(repr(half_built), str)
    assert isinstance(str(half_built), str)


@pytest.mark.parametrize("client_class", [Client, AsyncClient])
def test_a_constructor_error_formatted_with_its_locals_shows_the_error(
    client_class: type[Client | AsyncClient],
) -> None:
    with pytest.raises(ValueError, match="absolute http") as caught:
        client_class(api_key="k", base_url="ftp://example.test/v1")

    # As `unittest --locals` formats it: every frame's locals, `self` included, by repr.
    text = "".join(
        traceback.TracebackException.from_exception(caught.value, capture_locals=True).format()
    )
    assert "must be an absolute http(s) URL" in text
    assert "repr() failed" not in text
    assert f"self = <{client_class.__name__} (not configured)>" in text


def test_tolerant_repr_keeps_what_works_and_names_the_class_for_what_raises() -> None:
    # Applied here, at test time: the package's own classes were decorated at import.
    from animalstore_client._core.safe_repr import tolerant_repr

    @tolerant_repr
    class Half:
        def __init__(self, ready: bool) -> None:
            if ready:
                self.name = "Rex"

        def __repr__(self) -> str:
            return f"Half({self.name!r})"

        def __str__(self) -> str:
            return f"half {self.name}"

    @tolerant_repr
    class NoStr:
        def __repr__(self) -> str:
            raise ValueError("broken")

    assert (repr(Half(True)), str(Half(True))) == ("Half('Rex')", "half Rex")
    assert (repr(Half(False)), str(Half(False))) == ("<Half (incomplete)>",) * 2
    assert Half.__repr__.__name__ == "__repr__"  # wrapped, not renamed
    assert Half.__str__.__qualname__.endswith("Half.__str__")
    assert "__str__" not in vars(NoStr)  # no __str__ of its own: none is added
    assert (repr(NoStr()), str(NoStr())) == ("<NoStr (incomplete)>",) * 2


def test_an_attrs_class_without_a_repr_gets_the_one_attrs_would_write() -> None:
    # The SDK's attrs classes are defined with repr=False (attrs compiles a repr per class at
    # import); tolerant_repr writes it from the fields, as attrs would have.
    import attrs

    from animalstore_client._core.safe_repr import tolerant_repr

    def both(**options: Any) -> tuple[Any, Any]:
        made = []
        for repr_option in (True, False):

            class Kennel:
                name: str
                secret: str = attrs.field(repr=False)
                size: int | None = None

            made.append(tolerant_repr(attrs.frozen(repr=repr_option)(Kennel))(**options))
        return made[0], made[1]

    by_attrs, ours = both(name="North", secret="s3cret", size=None)
    assert repr(ours) == repr(by_attrs) == "Kennel(name='North', size=None)"
    ours_class: Any = type(ours)
    attrs_class: Any = type(by_attrs)
    half_built = ours_class.__new__(ours_class)
    assert repr(half_built) == repr(attrs_class.__new__(attrs_class))
    assert repr(half_built) == "<Kennel (incomplete)>"
    assert repr(
        animalstore_client.Pet(
            id=1, name="Rex", category_id=3, status=animalstore_client.PetStatus.SOLD
        )
    ) == ("Pet(id=1, name='Rex', category_id=3, status=PetStatus.SOLD)")

    # Its own __repr__ is kept, attrs class or not (the core's Request shows two fields).
    @tolerant_repr
    @attrs.define(repr=False)
    class Shown:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

    assert repr(Shown("Rex")) == "<Rex>"
    options = Client(api_key="sk-abcdefgh12345678")._options
    assert "sk-abcdefgh" not in repr(options)
    assert repr(options).startswith("ClientOptions(base_url='https://")
