"""Each operation's recipe says what the OpenAPI document says, and takes the per-call options
alike: its method, its name (the route, as messages and the store name it), its path, whether it
is deprecated, and each call's own headers, timeout and deadline, checked and named when wrong.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from animalstore_client import Client
from animalstore_client._core import operations as recipes
from animalstore_client._core.types import NOT_GIVEN
from tests.contract.operations import SpecOperation, operations
from tests.reliability.conftest import VALID_ARGUMENTS

SPEC = operations()


def recipe(operation: SpecOperation, **options: Any) -> recipes.Operation[Any]:
    """The operation's recipe as ``Client`` makes it: the method's defaults, valid arguments."""
    args, kwargs = VALID_ARGUMENTS[operation.method_name]
    parameters = inspect.signature(getattr(Client, operation.method_name)).parameters.values()
    defaults = {
        parameter.name: parameter.default
        for parameter in parameters
        if parameter.kind is parameter.KEYWORD_ONLY
    }
    made: recipes.Operation[Any] = getattr(recipes, operation.method_name)(
        *args, **{**defaults, **kwargs, **options}
    )
    return made


@pytest.mark.parametrize("operation", SPEC, ids=lambda operation: operation.method_name)
def test_a_recipe_is_the_documents_operation(operation: SpecOperation) -> None:
    made = recipe(operation)

    assert made.method == operation.method
    assert made.name == operation.route
    template = re.sub(r"\{[^}]+\}", "[^/]+", operation.path.lstrip("/"))
    assert re.fullmatch(template, made.path), made.path
    assert made.deprecated is operation.deprecated
    assert made.idempotent is (operation.method != "POST")
    assert made.timeout is None
    assert made.deadline is NOT_GIVEN
    # No header of the call's own but a create's key: the client's headers alone, no merge.
    if made.idempotent:
        assert made.headers is None
    else:
        assert made.headers is not None
        assert list(made.headers) == ["idempotency-key"]


@pytest.mark.parametrize("operation", SPEC, ids=lambda operation: operation.method_name)
def test_a_recipe_takes_the_calls_own_options(operation: SpecOperation) -> None:
    made = recipe(operation, extra_headers={"X-Trace-Id": "t-1"}, timeout=2.5, deadline=9.0)

    assert made.headers is not None
    assert made.headers["x-trace-id"] == "t-1"
    assert "X-Trace-Id" not in made.headers
    assert made.timeout == {"connect": 2.5, "read": 2.5, "write": 2.5, "pool": 2.5}
    assert made.deadline == 9.0
    assert recipe(operation, deadline=None).deadline is None


@pytest.mark.parametrize("operation", SPEC, ids=lambda operation: operation.method_name)
def test_a_recipe_names_a_bad_option(operation: SpecOperation) -> None:
    with pytest.raises(TypeError, match=r"^deadline must be "):
        recipe(operation, deadline="soon")
    with pytest.raises(ValueError, match=r"^deadline must be "):
        recipe(operation, deadline=-1.0)
    with pytest.raises(TypeError, match=r"^extra_headers"):
        recipe(operation, extra_headers=[("X-Trace-Id", "t-1")])
