"""Every operation of the OpenAPI document is wherever an operation must be, and nothing else is.

The document (``openapi.yaml``, read by ``tests/contract/operations.py``) is the list of
operations. This test derives from it each place an operation must appear and fails naming
every place that misses one, or that has one the document lacks: docs/development.md,
"Adding an operation", is the checklist it enforces.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import re
from pathlib import Path
from typing import get_args

import pytest

from animalstore_client import APIResponse, AsyncClient, AsyncRawResponses, Client, RawResponses
from animalstore_client._cli import main as cli
from animalstore_client._core import operations as recipes
from animalstore_client._core.operations import ENDPOINTS, Endpoint
from animalstore_client._raw import RawMethod
from animalstore_client.testing import FakeAnimalStore, OperationName, RecordedRequest
from animalstore_client.testing._faults import OPERATION_OF_ROUTE
from animalstore_client.testing._store import OPERATIONS
from tests.contract.operations import SpecOperation, operations
from tests.reliability.conftest import VALID_ARGUMENTS

ROOT = Path(__file__).resolve().parents[2]
#: Operations the command line leaves out, each with the reason (none today).
CLI_EXEMPT: dict[str, str] = {}
#: What each client defines besides the operations.
NOT_OPERATIONS = {"close", "aclose"}


def own_methods(cls: type) -> set[str]:
    """The public functions (and raw views' methods) ``cls`` itself defines, not inherited."""
    return {
        name
        for name, member in vars(cls).items()
        if not name.startswith("_")
        and (inspect.isfunction(member) or isinstance(member, RawMethod))
    } - NOT_OPERATIONS


def cli_help(*argv: str) -> str:
    """What ``animalstore ARGV --help`` prints, on one line per entry."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        cli([*argv, "--help"])
    return out.getvalue()


def missing_places(spec: tuple[SpecOperation, ...]) -> list[str]:
    """Return each place that lacks an operation of ``spec`` or has one it lacks."""
    problems: list[str] = []
    names = {operation.method_name for operation in spec}
    routes = {operation.route for operation in spec}

    def compare(place: str, found: set[str], expected: set[str]) -> None:
        problems.extend(f"{place}: no {name}" for name in sorted(expected - found))
        problems.extend(
            f"{place}: {name} is not in the document" for name in sorted(found - expected)
        )

    compare(
        "the recipes (animalstore_client/_core/operations.py, __all__)",
        {name for name in recipes.__all__ if name.islower()},  # not the declarations
        names,
    )
    for cls in (Client, AsyncClient):
        compare(f"{cls.__name__} (animalstore_client/_client.py)", own_methods(cls), names)
        for name in names & own_methods(cls):
            method = vars(cls)[name]
            if inspect.iscoroutinefunction(method) is not (cls is AsyncClient):
                problems.append(f"{cls.__name__}.{name}: async def on AsyncClient only")
    for view in (RawResponses, AsyncRawResponses):
        compare(f"{view.__name__} (animalstore_client/_client.py)", own_methods(view), names)
    for operation in spec:
        for owner in (Client, AsyncClient, RawResponses, AsyncRawResponses):
            method = vars(owner).get(operation.method_name)
            deprecated = getattr(method, "__deprecated__", None) is not None
            if method is not None and deprecated != operation.deprecated:
                problems.append(
                    f"{owner.__name__}.{operation.method_name}: @deprecated only if the "
                    f"document marks {operation.route} deprecated"
                )
    compare(
        "the store's routes (_ROUTES in animalstore_client/testing/_store.py)",
        set(OPERATIONS),
        routes,
    )
    compare(
        "the fault names (OPERATION_OF_ROUTE in animalstore_client/testing/_faults.py)",
        set(OPERATION_OF_ROUTE),
        routes,
    )
    compare(
        "the fault names (OperationName in animalstore_client/testing/_faults.py, as in "
        "OPERATION_OF_ROUTE)",
        set(get_args(OperationName)) - {"any"},
        set(OPERATION_OF_ROUTE.values()),
    )
    commands = " ".join(cli_help("pets").split())
    compare(
        "the command line ('animalstore pets', animalstore_client/_cli/__init__.py) or "
        "CLI_EXEMPT in this test",
        {route for route in routes if f"({route})" in commands} | set(CLI_EXEMPT),
        routes,
    )
    reference = (ROOT / "docs" / "api" / "clients.md").read_text(encoding="utf-8")
    for documented in (Client, AsyncClient, RawResponses, AsyncRawResponses):
        entry = re.search(
            rf"^::: animalstore_client\.{documented.__name__}\n((?:    .*\n)*)", reference, re.M
        )
        if entry is None:
            problems.append(
                f"docs/api/clients.md: no '::: animalstore_client.{documented.__name__}'"
            )
        elif re.search(r"^ +members:", entry[1], re.M):
            problems.append(f"docs/api/clients.md: {documented.__name__} lists its members by hand")
    compare("VALID_ARGUMENTS (tests/reliability/conftest.py)", set(VALID_ARGUMENTS), names)
    return problems


def test_every_operation_is_in_every_place() -> None:
    problems = missing_places(operations())
    assert not problems, "\n".join(["places that miss an operation:", *problems])


def test_an_operation_missing_from_a_place_is_named() -> None:
    spec = operations()
    # An operation no place has (and none ever will: no such method).
    added = SpecOperation("PURGE", "/kennels", "purgeKennels", deprecated=False)
    problems = missing_places((*spec, added))
    named = {
        "the recipes (animalstore_client/_core/operations.py, __all__): no purge_kennels",
        "Client (animalstore_client/_client.py): no purge_kennels",
        "AsyncClient (animalstore_client/_client.py): no purge_kennels",
        "RawResponses (animalstore_client/_client.py): no purge_kennels",
        "AsyncRawResponses (animalstore_client/_client.py): no purge_kennels",
        "the store's routes (_ROUTES in animalstore_client/testing/_store.py): no PURGE /kennels",
        "the fault names (OPERATION_OF_ROUTE in animalstore_client/testing/_faults.py): "
        "no PURGE /kennels",
        "the command line ('animalstore pets', animalstore_client/_cli/__init__.py) or "
        "CLI_EXEMPT in this test: no PURGE /kennels",
        "VALID_ARGUMENTS (tests/reliability/conftest.py): no purge_kennels",
    }
    assert set(problems) == named
    # And the other way: a place with an operation the document lacks.
    problems = missing_places(spec[1:])
    assert (
        f"Client (animalstore_client/_client.py): {spec[0].method_name} is not in the document"
        in problems
    )


def test_the_declarations_are_the_documents_operations() -> None:
    declared = [
        (endpoint.method, endpoint.route, endpoint.method_name, endpoint.removal is not None)
        for endpoint in ENDPOINTS
    ]
    documented = [
        (operation.method, operation.path, operation.method_name, operation.deprecated)
        for operation in operations()
    ]
    assert declared == documented
    assert len({endpoint.fault_name for endpoint in ENDPOINTS}) == len(ENDPOINTS)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda endpoint: endpoint.method_name)
def test_a_deprecated_operation_says_the_declared_words_everywhere(endpoint: Endpoint) -> None:
    # PEP 702: type checkers read a decorator's literal only, so the clients (and the raw
    # views' descriptor) spell the message out; it must be the declaration's, word for word.
    for owner in (Client, AsyncClient, RawResponses, AsyncRawResponses):
        shown = getattr(vars(owner)[endpoint.method_name], "__deprecated__", None)
        assert shown == endpoint.deprecation, owner
    # The raw views' descriptor's literal: tests/unit/test_public_names.py.


def call_every_way(endpoint: Endpoint) -> list[tuple[str, object, list[RecordedRequest]]]:
    """Call the operation through each client and raw view, each against a store of its own
    holding one pet (1, which the valid arguments name; a delete may remove it); return what
    each gave and the requests its store received."""
    args, kwargs = VALID_ARGUMENTS[endpoint.method_name]

    def warned() -> contextlib.AbstractContextManager[object]:
        if endpoint.deprecation is None:
            return contextlib.nullcontext()  # and the suite's warnings are errors
        return pytest.warns(DeprecationWarning, match=f"^{re.escape(endpoint.deprecation)}$")

    def store() -> FakeAnimalStore:
        made = FakeAnimalStore()
        made.add_pet(name="Rex", category_id=3)
        return made

    given: list[tuple[str, object, list[RecordedRequest]]] = []
    for name, raw in (("Client", False), ("RawResponses", True)):
        with (served := store()).client() as client, warned():
            target = client.with_raw_response if raw else client
            given.append((name, getattr(target, endpoint.method_name)(*args, **kwargs), []))
        given[-1][2].extend(served.requests)

    async def call_async(raw: bool) -> tuple[object, list[RecordedRequest]]:
        async with (served := store()).async_client() as client:
            target = client.with_raw_response if raw else client
            with warned():
                result = await getattr(target, endpoint.method_name)(*args, **kwargs)
        return result, served.requests

    for name, raw in (("AsyncClient", False), ("AsyncRawResponses", True)):
        result, requests = asyncio.run(call_async(raw))
        given.append((name, result, requests))
    return given


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda endpoint: endpoint.method_name)
def test_every_operation_answers_through_every_client_and_raw_view(endpoint: Endpoint) -> None:
    given = call_every_way(endpoint)

    # A method that forgot its `return` gives None; a raw view gives the client's result
    # wrapped, parsed to the declared type (None for an answer without a body).
    assert [name for name, _, _ in given] == [
        "Client",
        "RawResponses",
        "AsyncClient",
        "AsyncRawResponses",
    ]
    assert [isinstance(result, APIResponse) for _, result, _ in given] == [False, True] * 2
    results = [r.parse() if isinstance(r, APIResponse) else r for _, r, _ in given]
    expected = type(None) if endpoint.result is None else endpoint.result
    assert all(isinstance(result, expected) for result in results), results
    route = re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(endpoint.route))
    for name, _, requests in given:
        assert [request.method for request in requests] == [endpoint.method], name
        assert re.fullmatch("/v1" + route, requests[0].path), (name, requests)
