"""Fixtures of the unit tests' own."""

from __future__ import annotations

from typing import Any

import pytest

from animalstore_client._core import converter
from animalstore_client._core.wire import Request

#: A create as the core hands it to a backend, with a key to find in what the backend reports.
CLASSIFY_REQUEST = Request(
    "POST",
    "http://127.0.0.1:9/v1/pets",
    None,
    {"authorization": "Bearer sk-classify-key", "content-type": "application/json"},
    b"{}",
    {"connect": 5.0, "read": 30.0, "write": 30.0, "pool": 30.0},
)


class BoolScalar:
    """Another library's boolean: an index (1) of array kind ``"b"``, as older numpy's
    ``numpy.True_`` (before 2.3; before 2.0 with a working ``__index__``)."""

    dtype = type("dtype", (), {"kind": "b"})()

    def __index__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return "True"


@pytest.fixture
def detailed_structured(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What the converter's detailed mode is asked to structure, in order (it still does)."""
    detailed = converter._detailed()
    structured: list[object] = []

    class Recording:
        def structure(self, data: object, type_: Any) -> object:
            structured.append(data)
            return detailed.structure(data, type_)

    monkeypatch.setattr(converter, "_detailed", Recording)
    return structured
