"""The one cattrs converter between the wire format (JSON) and the SDK's attrs models.

Strict where a typed SDK has to be: cattrs' stock hooks coerce (``"7"`` becomes ``7``), these
reject any value of the wrong JSON type. Lenient where the API may grow: unknown keys are
ignored, and an enum field typed ``SomeEnum | str`` keeps a value it does not know as a plain
string. Field names are snake_case in Python and camelCase on the wire, for every model.
``plain_row`` and ``unstructure(..., use_api_names=False)`` read and write the other form of a
model, a row of a table, with Python names.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
from cattrs import Converter
from cattrs.cols import is_mutable_sequence, list_structure_factory
from cattrs.errors import ClassValidationError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from animalstore_client._core.root_error import AnimalStoreError
from animalstore_client._core.safe_repr import tolerant_repr
from animalstore_client._core.validation import INT64_MAX, INT64_MIN, is_boolean

__all__ = ["WireFormatError", "enum_value", "plain_row", "structure", "unstructure", "wire_name"]

T = TypeVar("T")

_MAX_PROBLEMS = 3


@tolerant_repr
class WireFormatError(AnimalStoreError, ValueError):
    """Data does not have the shape of the wire format; the message names the field as on the wire.

    Raised by ``Model.from_dict``; a ``ValueError`` too. A response body that does not fit
    raises ``APIResponseValidationError`` instead.

    Args:
        problems: each problem as ``"<path>: <what is wrong>"``, in the order of the data.
        complete: ``False`` when ``problems`` are only the first ones found: the check of a
            large list stops once it has found more problems than the message shows.

    Attributes:
        problems: each problem as ``"<path>: <what is wrong>"``, for example
            ``"$[3].categoryId: expected an integer, got str '7'"``.
        complete: whether ``problems`` lists every problem in the data.
    """

    def __init__(self, problems: list[str], complete: bool = True) -> None:
        # The arguments are the only state, so that pickle (which replays them positionally)
        # rebuilds the same exception; a complete list keeps the one argument, and the repr,
        # it always had.
        super().__init__(*((problems,) if complete else (problems, complete)))
        self.problems: list[str] = problems
        self.complete: bool = complete

    def __str__(self) -> str:
        shown = "; ".join(self.problems[:_MAX_PROBLEMS])
        if not self.complete:
            return shown + "; and more"
        more = len(self.problems) - _MAX_PROBLEMS
        return shown + (f"; and {more} more" if more > 0 else "")


def wire_name(attribute: str) -> str:
    """Return the wire (camelCase) name of a snake_case attribute name."""
    head, *rest = attribute.split("_")
    return head + "".join(word.capitalize() for word in rest)


def _excerpt(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _wrong_type(expected: str, value: object) -> TypeError:
    shown = "null" if value is None else f"{type(value).__name__} {_excerpt(value)}"
    return TypeError(f"expected {expected}, got {shown}")


def _strict_int(value: object, _: type) -> int:
    # `type(...) is int` also rejects bool, which JSON true/false would otherwise pass as.
    if type(value) is not int:
        raise _wrong_type("an integer", value)
    # Every integer in the API is an int64; what the SDK returns it must accept back.
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"expected an int64, got {_excerpt(value)}")
    return value


def _strict_str(value: object, _: type) -> str:
    if type(value) is not str:
        raise _wrong_type("a string", value)
    return value


def _enum_in_union(type_: Any) -> type[enum.Enum] | None:
    if typing.get_origin(type_) not in (typing.Union, types.UnionType):
        return None
    args = typing.get_args(type_)
    enums = [arg for arg in args if isinstance(arg, type) and issubclass(arg, enum.Enum)]
    return enums[0] if len(enums) == 1 else None


def _optional_enum_hook(type_: Any) -> Any:
    """Structure ``E | None`` (closed) or ``E | str | None`` (open: unknown values stay strings)."""
    enum_cls = _enum_in_union(type_)
    assert enum_cls is not None
    args = typing.get_args(type_)
    members: dict[object, enum.Enum] = {member.value: member for member in enum_cls}
    is_open, nullable = str in args, type(None) in args
    allowed = ", ".join(repr(value) for value in members)

    def structure(value: object, _: type) -> object:
        try:
            return members[value]  # a known value: the common case, first
        except (KeyError, TypeError):  # unknown, or unhashable
            pass
        if value is None and nullable:
            return None
        if type(value) is not str:
            raise _wrong_type("a string", value)
        if is_open:
            return value
        raise ValueError(f"expected one of {allowed}, got {_excerpt(value)}")

    return structure


def enum_value(member: enum.Enum | str | None) -> object:
    """Return the wire value of an enum member; a plain string or ``None`` as it is."""
    if isinstance(member, str):
        # A str-based member's string content is its value, read without Enum's slow `.value`.
        return str.__str__(member)
    return member.value if isinstance(member, enum.Enum) else member


def _field_overrides(cls: type, *, unstructuring: bool) -> dict[str, Any]:
    """Rename every field to its wire name; when unstructuring, write enum fields as values.

    cattrs would unstructure a ``str``-based enum member by its ``str`` hook, leaving the
    member itself in the dict, so enum-typed fields get an explicit hook.
    """
    return {
        field.name: override(
            rename=wire_name(field.name),
            unstruct_hook=enum_value if unstructuring and _enum_in_union(field.type) else None,
        )
        for field in attrs.fields(attrs.resolve_types(cls))
    }


def _attrs_structure_hook(cls: type, conv: Converter) -> Any:
    build: Callable[[Any, Any], object] = make_dict_structure_fn(
        cls, conv, **_field_overrides(cls, unstructuring=False)
    )
    if not conv.detailed_validation:
        # The fast path needs no guard: indexing anything but a dict by a field name fails,
        # and the detailed run then says why.
        return build

    def structure(value: object, type_: type) -> object:
        if not isinstance(value, dict):
            raise _wrong_type("a JSON object", value)
        return build(value, type_)

    return structure


def _list_hook(type_: Any, conv: Converter) -> Any:
    build = list_structure_factory(type_, conv)

    def structure(value: object, _: type) -> object:
        # cattrs would happily iterate a dict's keys or a string's characters.
        if type(value) is not list:
            raise _wrong_type("a JSON array", value)
        return build(value, type_)

    return structure


def _is_list_subclass(type_: Any) -> bool:
    """Whether ``type_`` is a class such as ``class PetList(list[Pet])``."""
    return isinstance(type_, type) and issubclass(type_, list) and type_ is not list


def _list_base(type_: Any) -> Any:
    """Return the ``list[X]`` that a subclass such as ``PetList`` derives from."""
    (base,) = (b for b in type_.__orig_bases__ if typing.get_origin(b) is list)
    return base


def _element_type(type_: Any) -> Any:
    """Return the ``X`` of ``list[X]`` or of its subclass (``PetList``); ``None`` for others."""
    if _is_list_subclass(type_):
        type_ = _list_base(type_)
    args = typing.get_args(type_)
    return args[0] if typing.get_origin(type_) is list and len(args) == 1 else None


def _list_subclass_hook(type_: Any, conv: Converter) -> Any:
    """Structure a subclass of ``list[X]`` as ``list[X]``, then as an instance of the subclass."""
    base = _list_base(type_)
    build = _list_hook(base, conv)

    def structure(value: object, _: type) -> object:
        return type_(build(value, base))

    return structure


def _attrs_unstructure_hook(cls: type, conv: Converter) -> Any:
    # Omitting defaults only ever drops `status=None`: every other field is required.
    return make_dict_unstructure_fn(
        cls, conv, _cattrs_omit_if_default=True, **_field_overrides(cls, unstructuring=True)
    )


def _make_converter(*, detailed: bool) -> Converter:
    converter = Converter(detailed_validation=detailed)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook_factory(
        lambda type_: _enum_in_union(type_) is not None, _optional_enum_hook
    )
    converter.register_structure_hook_factory(attrs.has, _attrs_structure_hook)
    converter.register_structure_hook_factory(is_mutable_sequence, _list_hook)
    converter.register_structure_hook_factory(_is_list_subclass, _list_subclass_hook)
    converter.register_unstructure_hook_factory(attrs.has, _attrs_unstructure_hook)
    return converter


def _python_unstructure_hook(cls: type, conv: Converter) -> Any:
    # Every field, under its Python name; enum members as their values.
    overrides: dict[str, Any] = {
        field.name: override(unstruct_hook=enum_value)
        for field in attrs.fields(attrs.resolve_types(cls))
        if _enum_in_union(field.type)
    }
    return make_dict_unstructure_fn(cls, conv, **overrides)


# One wire format, configured once, in two modes: the fast one structures every response;
# the detailed one runs only after a failure, on the failing part alone (see _diagnose), to
# name its bad fields. cattrs builds each mode's functions once, on first use of a type; each
# converter is built at its first use too, not at import (about a millisecond).
@functools.cache
def _fast() -> Converter:
    return _make_converter(detailed=False)


# Most programs never need these two.
@functools.cache
def _detailed() -> Converter:
    return _make_converter(detailed=True)


@functools.cache
def _python() -> Converter:
    # Not the wire format: the Python view of a model (``to_dict(use_api_names=False)``), a
    # row for a table, so a converter of its own.
    converter = Converter()
    converter.register_unstructure_hook_factory(attrs.has, _python_unstructure_hook)
    return converter


# The fast mode's hooks for each type, looked up once instead of dispatched on every call.
@functools.cache
def _fast_hook(type_: Any) -> Callable[[Any, Any], Any]:
    return _fast().get_structure_hook(type_)


@functools.cache
def _fast_unstructure_hook(cls: type) -> Callable[[Any], Any]:
    return _fast().get_unstructure_hook(cls)


def _problems(exc: BaseException, path: str) -> list[str]:
    """Flatten cattrs' validation error groups into ``path: problem`` lines, with wire names."""
    if isinstance(exc, ClassValidationError):
        located, other = exc.group_exceptions()
        return [
            problem
            for sub, note in located
            for problem in _problems(sub, f"{path}.{wire_name(note.name)}")
        ] + [problem for sub in other for problem in _problems(sub, path)]
    if isinstance(exc, IterableValidationError):
        indexed, other = exc.group_exceptions()
        return [
            problem for sub, note in indexed for problem in _problems(sub, f"{path}[{note.index}]")
        ] + [problem for sub in other for problem in _problems(sub, path)]
    if isinstance(exc, KeyError):
        return [f"{path}: required field is missing"]
    return [f"{path}: {exc}"]


def _diagnose(data: object, type_: Any, path: str, problems: list[str]) -> bool:
    """Append the problems of ``data``, which does not fit ``type_``, to ``problems``, in order.

    The detailed mode raises an exception, with a traceback, for every bad field: run on a
    whole list it costs time and memory in proportion to the bad fields, far beyond what
    parsing the list costs (a 2 MB list of empty objects: 80 s and 3.8 GB). So a list is
    checked here element by element in the fast mode, only a failing element goes through
    the detailed mode, and the walk stops once more problems are found than a message shows.

    Args:
        data: the decoded JSON (or the part of it at ``path``).
        type_: the type it failed to structure into.
        path: the JSON path of ``data`` (``$``, ``$[3]``).
        problems: where the problems found go.

    Returns:
        Whether every problem was found; ``False`` when the walk stopped before the end.
    """
    element_type = _element_type(type_)
    if element_type is None or type(data) is not list:
        try:
            _detailed().structure(data, type_)
        except Exception as exc:
            problems.extend(_problems(exc, path))
        return True
    hook = _fast_hook(element_type)
    for index, element in enumerate(data):
        if len(problems) > _MAX_PROBLEMS:
            return False
        try:
            hook(element, element_type)
        except Exception:
            if not _diagnose(element, element_type, f"{path}[{index}]", problems):
                return False
    return True


def structure(data: object, type_: type[T] | Any) -> T:
    """Build an instance of ``type_`` (a model, or ``list`` of one) from decoded JSON.

    Args:
        data: decoded JSON (``dict``, ``list``, ``str``, ``int`` ...).
        type_: the target type, for example ``Pet`` or ``list[Pet]``.

    Returns:
        The structured value.

    Raises:
        WireFormatError: ``data`` does not fit ``type_``; the message names the first bad
            fields, and ``problems`` lists them (every one, or the first few of a long list).
    """
    try:
        # (A type is hashable; mypy's Hashable does not see it of `type[T]`.)
        return _fast_hook(type_)(data, type_)  # type: ignore[arg-type, no-any-return]
    except Exception:
        # Diagnosed outside the handler: the error then chains nothing, and keeps no frame
        # (nor the data its locals hold) alive.
        pass
    problems: list[str] = []
    complete = _diagnose(data, type_, "$", problems)
    if problems:
        raise WireFormatError(problems, complete)
    # No part fails when looked at again (the fast run failed for a passing reason, such as a
    # RecursionError near the stack's limit): the detailed mode decides on the whole.
    try:
        return _detailed().structure(data, type_)  # type: ignore[no-any-return]
    except Exception as exc:
        error = WireFormatError(_problems(exc, "$"))
    raise error


def unstructure(obj: object, *, use_api_names: bool = True) -> Any:
    """Return the JSON-ready form of a model instance or a list of them.

    Args:
        obj: a model instance, or a list of them.
        use_api_names: ``True``: the wire format (camelCase keys, a ``None`` status left
            out). ``False``: every field under its Python name, ``None`` included.
    """
    if not use_api_names:
        return _python().unstructure(obj)
    return _fast_unstructure_hook(type(obj))(obj)  # type: ignore[arg-type]  # as above


def _is_missing(value: object) -> bool:
    """Whether a table cell stands for "no value": ``None``, a float NaN, ``pandas.NA``."""
    if value is None or (isinstance(value, float) and value != value):
        return True
    pandas = sys.modules.get("pandas")  # looked up, not imported: loaded if a value is its
    return pandas is not None and value is pandas.NA


def plain_row(data: object, cls: type) -> object:
    """Turn a row read back from a table into the wire format ``structure`` takes.

    A field may come under its wire or its Python name; an optional field left empty
    (``None``, ``NaN``, ``pandas.NA``) is dropped; an integer of another library (numpy's,
    anything with ``__index__`` but a boolean) becomes an ``int``, and a subclass of ``str``
    (``numpy.str_``) a ``str``. Anything else is left for ``structure`` to judge.
    """
    if not isinstance(data, dict):
        return data
    row = dict(data)
    for field in attrs.fields(attrs.resolve_types(cls)):
        wire = wire_name(field.name)
        if wire not in row and field.name in row:
            row[wire] = row.pop(field.name)
        if wire not in row:
            continue
        value = row[wire]
        if field.default is None and _is_missing(value):
            del row[wire]
        elif isinstance(value, str) and type(value) is not str:  # numpy.str_, as create_pet
            row[wire] = str(value)
        elif (
            field.type is int
            and type(value) is not int
            and not isinstance(value, bool)
            and not is_boolean(value)
        ):
            index = getattr(type(value), "__index__", None)
            # A broken __index__ leaves the value as it is, for structure to say what is wrong.
            with contextlib.suppress(Exception):
                row[wire] = index(value) if index is not None else value
    return row
