"""Checks on the arguments users pass, run before anything is sent.

Each check names the offending argument: wrong type is a ``TypeError``, a value out of range or
not allowed is a ``ValueError``.
"""

from __future__ import annotations

import enum
import math
import operator
from typing import TypeVar

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "check_enum",
    "check_int",
    "check_str",
    "check_token",
    "is_real",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

E = TypeVar("E", bound=enum.Enum)


def _shown(value: object) -> str:
    if isinstance(value, int):
        return _shown_int(int.__index__(value))
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _shown_int(value: int) -> str:
    # Python refuses to write an int of more than 4300 digits in decimal, and writing one is
    # slow anyway: a long one is shown by its leading digits, read off its logarithm.
    if value.bit_length() <= 192:
        return str(value)
    exponent, fraction = divmod(math.log10(abs(value)), 1)
    mantissa = f"{10**fraction:.6f}"
    if mantissa.startswith("10"):  # 9.9999999... rounded up: carry into the exponent
        mantissa, exponent = "1.000000", exponent + 1
    sign = "-" if value < 0 else ""
    return f"{sign}{mantissa}e+{int(exponent)} (approximately; too long to show)"


def check_int(argument: str, value: object, low: int = INT64_MIN, high: int = INT64_MAX) -> int:
    """Return ``value`` as a plain ``int`` if it is an integer (not a ``bool``) in ``low..high``.

    Any integer type that Python can use as an index is accepted, such as ``numpy.int64``
    read from a pandas column; it is converted with ``operator.index``.

    Raises:
        TypeError: ``value`` is not an integer (a ``float`` or ``str`` is not one), or is a
            ``bool`` or another library's boolean (``numpy.bool_``).
        ValueError: ``value`` is outside ``low..high``.
    """
    if isinstance(value, bool):
        raise TypeError(f"{argument} must be an int, got bool {value!r}")
    if not isinstance(value, int):
        if is_boolean(value):
            # Refused before operator.index: numpy < 2.3 still converts numpy.True_ to 1 (with
            # only a DeprecationWarning), which would send `limit=1` for a mask value.
            raise TypeError(
                f"{argument} must be an int, got {type(value).__name__} {_shown(value)}"
            )
        try:
            value = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"{argument} must be an int, got {type(value).__name__} {_shown(value)}"
            ) from None
    # A plain int: a subclass's own __format__, __str__ or __repr__ could put anything in a
    # URL path or query (`f"pets/{value}"`), so none of them is ever called.
    value = int.__index__(value)
    if not low <= value <= high:
        raise ValueError(f"{argument} must be between {low} and {high}, got {_shown_int(value)}")
    return value


def is_boolean(value: object) -> bool:
    """Whether ``value`` is another library's boolean: ``numpy.bool_``, a 0-d bool array.

    Recognised by the array protocol's type code, ``dtype.kind == "b"``, which numpy, pandas,
    CuPy and JAX scalars share; none of them subclasses ``bool``.
    """
    try:
        return getattr(getattr(value, "dtype", None), "kind", None) == "b"
    except Exception:  # a hostile property is no reason to accept the value
        return False


def is_real(value: object) -> bool:
    """Whether ``value`` is a real number: ``int``, ``float``, or numpy's and the like."""
    if isinstance(value, (int, float)):
        return True
    import numbers  # only for the rarer number types; kept out of the package's import

    return isinstance(value, numbers.Real)


def check_str(argument: str, value: object) -> str:
    """Return ``value`` as a plain ``str`` if it is one that can be encoded (no lone surrogates).

    Raises:
        TypeError: ``value`` is not a ``str``.
        ValueError: ``value`` holds a lone surrogate, which no request could carry.
    """
    if not isinstance(value, str):
        raise TypeError(f"{argument} must be a str, got {type(value).__name__} {_shown(value)}")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate: no request body or header could carry it.
            raise ValueError(
                f"{argument} must be valid Unicode text, got a lone surrogate"
            ) from None
    return str.__str__(value)  # a plain str, whatever a subclass overrides


def check_enum(argument: str, value: object, enum_cls: type[E]) -> E:
    """Return the member of ``enum_cls`` that ``value`` is, or whose value ``value`` is.

    Raises:
        TypeError: ``value`` is neither a member nor a ``str``.
        ValueError: ``value`` is a string that is not one of the allowed values.
    """
    if isinstance(value, enum_cls):
        return value
    if not isinstance(value, str):
        raise TypeError(f"{argument} must be a str, got {type(value).__name__} {_shown(value)}")
    try:
        return enum_cls(value)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in enum_cls)
        raise ValueError(f"{argument} must be one of {allowed}, got {_shown(value)}") from None


def check_token(argument: str, value: object, max_length: int) -> str:
    """Return ``value`` if it can be sent verbatim as a header value: a short ASCII token.

    That is a ``str`` of 1 to ``max_length`` printable ASCII characters without whitespace.

    Raises:
        TypeError: ``value`` is not a ``str``.
        ValueError: ``value`` is empty, too long, or holds whitespace, control or non-ASCII
            characters.
    """
    value = check_str(argument, value)
    # isprintable() is False for every whitespace character but the space.
    printable = value.isascii() and value.isprintable() and " " not in value
    if not 0 < len(value) <= max_length or not printable:
        raise ValueError(
            f"{argument} must be 1 to {max_length} printable ASCII characters without "
            f"whitespace, got {_shown(value)}"
        )
    return value
