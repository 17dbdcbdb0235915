"""The API's operations, as the OpenAPI document the contract tests use lists them.

The one list of operations: every place an operation must appear (the clients, their raw
views, the store's routes and fault names, the command line, the reference) is checked
against it by ``tests/contract/test_every_operation.py``, and the tests and CI scripts that
go through every operation (``.ci/check_site.py`` ...) read it here rather than keep a list.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

import yaml

__all__ = ["DOCUMENT", "METHOD_NAMES", "SpecOperation", "operations"]

DOCUMENT = Path(__file__).with_name("openapi.yaml")
_HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class SpecOperation(NamedTuple):
    """One operation of the document.

    Attributes:
        method: the HTTP method, upper case (``"GET"``).
        path: the path as the document writes it (``"/pets/{petId}"``).
        operation_id: its ``operationId`` (``"getPet"``).
        deprecated: whether the document marks it deprecated.
    """

    method: str
    path: str
    operation_id: str
    deprecated: bool

    @property
    def route(self) -> str:
        """``"GET /pets/{petId}"``: how the SDK, the store and its faults name it."""
        return f"{self.method} {self.path}"

    @property
    def method_name(self) -> str:
        """The clients' method: the ``operationId`` in snake case (``get_pet``)."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.operation_id).lower()


@cache
def operations() -> tuple[SpecOperation, ...]:
    """Return every operation of the document, in its order."""
    document = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    return tuple(
        SpecOperation(
            method.upper(),
            path,
            operation["operationId"],
            bool(operation.get("deprecated", False)),
        )
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in _HTTP_METHODS
    )


#: Every client method that is an operation, in the document's order.
METHOD_NAMES: tuple[str, ...] = tuple(operation.method_name for operation in operations())
