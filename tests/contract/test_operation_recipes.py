"""Each operation's recipe says what the OpenAPI document says, and takes the per-call options
alike: its method, its name (the route, as messages and the store name it), its path, whether it
is deprecated, and each call's own headers, timeout and deadline, checked and named when wrong.
"""

from __future__ import annotations

import inspect
import re
import warnings
from typing import Any

import httpx
import pytest

from animalstore_client import AsyncClient, Client
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
    make = getattr(recipes, operation.method_name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            made: recipes.Operation[Any] = make(*args, **{**defaults, **kwargs, **options})
        except (TypeError, ValueError):
            assert not caught  # refused arguments: no warning first
            raise
    # A deprecated one warns, for the client's method and its raw view alike, in the declared
    # words, at the caller's line; no other recipe warns.
    expected = [] if made.endpoint.deprecation is None else [made.endpoint.deprecation]
    assert [str(warning.message) for warning in caught] == expected
    assert all(warning.category is DeprecationWarning for warning in caught)
    assert all(warning.filename == __file__ for warning in caught)
    assert bool(expected) is operation.deprecated
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


def test_an_operation_declared_without_a_result_gives_none_whatever_the_body() -> None:
    # The first operation answered with a 204 (DELETE) needs no code of its own here: its
    # declaration says None, and the answer's body, if any, is not read as JSON.
    from animalstore_client._core.response import parse_body
    from animalstore_client._core.wire import Answer

    def not_needed() -> Any:
        raise AssertionError("not needed")

    for body in (b"", b"not json", b'{"id": 1}'):
        answer = Answer(204, httpx.Headers(), body, details=not_needed, view=not_needed)
        assert parse_body(answer, None) is None


@pytest.mark.parametrize("operation", SPEC, ids=lambda operation: operation.method_name)
def test_a_recipe_takes_its_client_methods_parameters(operation: SpecOperation) -> None:
    # The raw views call the recipe with the arguments their method was given.
    def shape(function: Any, skip: int) -> list[tuple[str, Any, Any]]:
        parameters = list(inspect.signature(function).parameters.values())[skip:]
        return [(p.name, p.kind, p.default) for p in parameters]

    made = shape(getattr(recipes, operation.method_name), 0)
    for client_class in (Client, AsyncClient):
        assert shape(getattr(client_class, operation.method_name), 1) == made
