"""How models show in Jupyter and IPython: one HTML table for a model or a list of them.

Columns are the Python attribute names, as ``to_dict(use_api_names=False)`` writes them; every
value is escaped, since names and messages come from the service.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import attrs

from animalstore_client._core.converter import enum_value

__all__ = ["html_table"]


def _cell(value: object) -> str:
    return f"<td>{html.escape(str(enum_value(value)))}</td>"  # type: ignore[arg-type]


def html_table(rows: Sequence[Any]) -> str:
    """Return an HTML table with one row per model instance (all of one class).

    Args:
        rows: attrs model instances, at least one.

    Returns:
        The ``<table>`` element, with a header row of the field names.
    """
    names = [field.name for field in attrs.fields(type(rows[0]))]
    head = "".join(f"<th>{name}</th>" for name in names)
    body = "".join(
        "<tr>" + "".join(_cell(getattr(row, name)) for name in names) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
