"""How models and errors show in Jupyter and IPython, as HTML tables.

A model or a list of them is one table whose columns are the Python attribute names, as
``to_dict(use_api_names=False)`` writes them; an error is a table of its fields. Every value is
escaped, since names and messages come from the service. A value that is absent (``None``: a
pet without a status, an error without a request id) is ``-``, as in the command line's table.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import attrs

__all__ = ["ABSENT", "html_fields", "html_table"]


#: What an absent value shows as: a mark for "none", as the command line's table writes it,
#: rather than Python's word for it.
ABSENT = "-"


def _cell(value: object) -> str:
    text = ABSENT if value is None else str(value)  # a PetStatus's str() is its value
    return f"<td>{html.escape(text)}</td>"


def html_table(rows: Sequence[Any], model: type) -> str:
    """Return an HTML table with one row per model instance.

    Args:
        rows: instances of ``model``, possibly none: then the table has its header alone.
        model: their attrs class, whose fields are the columns.

    Returns:
        The ``<table>`` element, with a header row of the field names.
    """
    names = [field.name for field in attrs.fields(model)]
    head = "".join(f"<th>{name}</th>" for name in names)
    body = "".join(
        "<tr>" + "".join(_cell(getattr(row, name)) for name in names) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_fields(title: str, fields: Sequence[tuple[str, object]]) -> str:
    """Return an HTML table of one object's fields, a row each, captioned with ``title``.

    Args:
        title: what the object is (an error's class name).
        fields: (name, value) pairs, in order.

    Returns:
        The ``<table>`` element.
    """
    rows = "".join(f"<tr><th>{name}</th>{_cell(value)}</tr>" for name, value in fields)
    return f"<table><caption>{html.escape(title)}</caption><tbody>{rows}</tbody></table>"
