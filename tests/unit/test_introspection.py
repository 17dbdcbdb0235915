"""What Python shows at run time is what the code is: ``help()``, ``inspect.signature``,
``typing.get_type_hints`` and ``unittest.mock`` see the real types and coroutine functions.

Type checkers substitute a generic base's type arguments; nothing at run time does, so a method
written once on a generic base would show its type variables (``-> ~Pets``) wherever a
notebook, ``help()`` or a tool that reads annotations looks.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import pydoc
import re
import sys
import typing
import unittest.mock
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import httpx2
import pytest
from typing_extensions import ParamSpec, TypeVarTuple, Unpack

import animalstore_client as sdk
import animalstore_client.testing as sdk_testing
from animalstore_client import (
    APIResponse,
    APIStatusError,
    AsyncClient,
    AsyncRawResponses,
    Client,
    DefaultAioHttpClient,
    DefaultAsyncHttpx2Client,
    DefaultHttpx2Client,
    Error,
    Pet,
    RawResponses,
)
from animalstore_client._raw import RawMethod, RawView, cached_view
from animalstore_client.testing import ClientSettings, FakeAnimalStore, FakeTransport
from animalstore_client.testing._faults import Answering
from tests.contract.operations import METHOD_NAMES

PUBLIC_CLASSES = sorted(
    {
        member
        for package in (sdk, sdk_testing)
        for name in package.__all__
        if inspect.isclass(member := getattr(package, name))
    },
    key=lambda cls: cls.__qualname__,
)
_VARIABLES = (typing.TypeVar, ParamSpec, TypeVarTuple, typing.ParamSpec)


def variables(annotation: object) -> Iterator[object]:
    """Every type variable in ``annotation``, however deeply nested."""
    # typing_extensions' Unpack[...] poses as a TypeVar before Python 3.11 (its __class__).
    if isinstance(annotation, _VARIABLES) and typing.get_origin(annotation) is not Unpack:
        yield annotation
    for argument in typing.get_args(annotation):
        yield from variables(argument)
    yield from getattr(annotation, "__parameters__", ())


def callables(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The constructor and every public method, property getter and attribute function.

    What ``typing.get_type_hints`` takes for each: a property's getter, a cached property's
    function, a raw view's method as its class shows it.
    """
    for name in ["__init__", *dir(cls)]:
        if name.startswith("_") and name != "__init__":
            continue
        member = inspect.getattr_static(cls, name)
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        elif isinstance(member, property):
            member = member.fget
        elif isinstance(member, (functools.cached_property, cached_view)):
            member = member.func
        elif isinstance(member, RawMethod):
            member = getattr(cls, name)
        if inspect.isfunction(member):
            yield name, member


#: The classes whose every annotation resolves at run time (``typing.get_type_hints``).
RESOLVED = [Client, AsyncClient, RawResponses, AsyncRawResponses, FakeAnimalStore]


@pytest.mark.parametrize("cls", PUBLIC_CLASSES, ids=lambda cls: cls.__qualname__)
def test_no_public_signature_shows_a_type_variable_the_class_does_not_declare(cls: type) -> None:
    # A generic class's own parameters (APIResponse[T].parse() -> T) are what it says.
    own = {f"~{variable.__name__}" for variable in getattr(cls, "__parameters__", ())}
    for name, member in callables(cls):
        shown = str(inspect.signature(member))
        found = set(re.findall(r"~\w+", shown)) - own
        assert not found, f"{cls.__qualname__}.{name}{shown}"


@pytest.mark.parametrize("cls", RESOLVED, ids=lambda cls: cls.__qualname__)
def test_get_type_hints_gives_real_types(cls: type) -> None:
    for name, member in callables(cls):
        hints = typing.get_type_hints(member)
        found = [v for annotation in hints.values() for v in variables(annotation)]
        assert not found, f"{cls.__qualname__}.{name}: {found} in {hints}"


def test_the_clients_show_their_own_types() -> None:
    for cls, http in ((Client, httpx.Client), (AsyncClient, httpx.AsyncClient)):
        assert typing.get_type_hints(cls.__init__)["http_client"] == http | None
        assert typing.get_type_hints(cls.list_pets)["return"] == list[Pet]
        assert typing.get_type_hints(cls.create_pet)["return"] is Pet
        signature = str(inspect.signature(cls.list_pets))
        assert signature.endswith("-> list[animalstore_client.Pet]")
    for view in (RawResponses, AsyncRawResponses):
        returns = typing.get_type_hints(view.list_pets)["return"]
        assert returns == sdk.APIResponse[list[Pet]]


def test_every_async_method_is_a_coroutine_function() -> None:
    for name in METHOD_NAMES:
        for sync, asynchronous in ((Client, AsyncClient), (RawResponses, AsyncRawResponses)):
            assert not inspect.iscoroutinefunction(getattr(sync, name)), (sync, name)
            assert inspect.iscoroutinefunction(getattr(asynchronous, name)), (asynchronous, name)
    assert inspect.iscoroutinefunction(AsyncClient.aclose)


def test_an_autospec_of_async_client_has_awaitable_methods() -> None:
    mock = unittest.mock.create_autospec(AsyncClient, instance=True)

    async def use() -> None:
        await mock.list_pets(limit=5)
        await mock.get_pet(7)
        await mock.create_pet(name="Rex", category_id=3)
        await mock.aclose()

    asyncio.run(use())
    mock.list_pets.assert_awaited_once_with(limit=5)
    mock.get_pet.assert_awaited_once_with(7)
    with pytest.raises(TypeError):
        mock.list_pets(5)  # the real signature: keyword-only, as autospec enforces
    assert isinstance(mock.list_pets, unittest.mock.AsyncMock)
    sync_mock = unittest.mock.create_autospec(Client, instance=True)
    assert not isinstance(sync_mock.list_pets, unittest.mock.AsyncMock)


def test_an_autospec_of_either_client_has_the_raw_views_methods() -> None:
    # autospec reads each attribute from the class: a functools.cached_property read there is
    # itself, so `with_raw_response.list_pets` was an AttributeError on the mock.
    mock = unittest.mock.create_autospec(Client, instance=True)
    mock.with_raw_response.list_pets.return_value.status_code = 200

    assert mock.with_raw_response.list_pets(limit=5).status_code == 200
    mock.with_raw_response.list_pets.assert_called_once_with(limit=5)
    assert not isinstance(mock.with_raw_response.list_pets, unittest.mock.AsyncMock)
    for name in METHOD_NAMES:
        shown = inspect.signature(getattr(mock.with_raw_response, name))
        assert shown == inspect.signature(getattr(Client(api_key="k" * 8).with_raw_response, name))
    with pytest.raises(TypeError):
        mock.with_raw_response.list_pets(5)  # the real signature: keyword-only
    with pytest.raises(AttributeError):
        mock.with_raw_response.delete_pet  # noqa: B018 - only what the view has
    assert isinstance(mock.with_raw_response, RawResponses)

    async_mock = unittest.mock.create_autospec(AsyncClient, instance=True)

    async def use() -> None:
        await async_mock.with_raw_response.list_pets(status="sold")
        await async_mock.with_raw_response.create_pet(name="Rex", category_id=3)

    asyncio.run(use())
    for name in METHOD_NAMES:
        assert isinstance(getattr(async_mock.with_raw_response, name), unittest.mock.AsyncMock)
    async_mock.with_raw_response.list_pets.assert_awaited_once_with(status="sold")
    async_mock.with_raw_response.create_pet.assert_awaited_once_with(name="Rex", category_id=3)
    assert isinstance(async_mock.with_raw_response, AsyncRawResponses)


@pytest.mark.parametrize(
    ("cls", "view"), [(Client, RawResponses), (AsyncClient, AsyncRawResponses)]
)
def test_with_raw_response_is_made_once_per_client_and_read_from_the_class_is_its_class(
    cls: type[Client | AsyncClient], view: type[RawView]
) -> None:
    client = cls(api_key="k" * 8)
    first = client.with_raw_response
    assert type(first) is view
    assert client.with_raw_response is first
    assert vars(client)["with_raw_response"] is first
    copy = client.with_options(max_retries=0)
    assert copy.with_raw_response is not first
    assert copy.with_raw_response is copy.with_raw_response
    assert cls(api_key="k" * 8).with_raw_response is not first
    assert cls.with_raw_response is view
    assert typing.get_type_hints(inspect.getattr_static(cls, "with_raw_response").func) == {
        "return": view
    }
    text = pydoc.plain(pydoc.render_doc(cls))
    assert f"with_raw_response = <class 'animalstore_client.{view.__name__}'>" in text
    del client.with_raw_response  # as with cached_property: the next read makes another
    assert client.with_raw_response is not first


@pytest.mark.parametrize(
    ("cls", "http"), [(Client, "httpx.Client"), (AsyncClient, "httpx.AsyncClient")]
)
def test_help_shows_the_constructor_on_the_class_itself(cls: type, http: str) -> None:
    text = pydoc.plain(pydoc.render_doc(cls))
    own = text.split("Methods defined here:", 1)[1].split("-" * 20, 1)[0]
    # Without the " |" margin, on one line: Python 3.13 spreads a long signature over lines.
    flat = " ".join(re.sub(r"^ \|  ?", "", own, flags=re.M).split())
    flat = re.sub(r"\(\s+", "(", flat)
    assert (
        "__init__(self, api_key: str | collections.abc.Callable[[], str] | None = None, *," in flat
    )
    assert f"http_client: {http} | None = None" in flat
    assert "Configure a client; nothing is sent until a method is called." in flat
    for name in METHOD_NAMES:
        assert f"{name}(self" in flat, name
    assert "~" not in text


def test_the_stores_client_factories_return_the_clients() -> None:
    assert typing.get_type_hints(FakeAnimalStore.client)["return"] is Client
    assert typing.get_type_hints(FakeAnimalStore.async_client)["return"] is AsyncClient
    for annotation in typing.get_type_hints(ClientSettings).values():
        assert not list(variables(annotation))


def annotated() -> Iterator[tuple[str, object]]:
    """Every public function, class, method and property of both packages, by ``__all__``.

    A class itself (its fields' annotations) and its ``callables``; type aliases
    (``PetStatusLiteral``) are not callables and have none.
    """
    for package in (sdk, sdk_testing):
        for name in package.__all__:
            value = getattr(package, name)
            if inspect.isfunction(value):
                yield name, value
            if not inspect.isclass(value):
                continue
            yield name, value
            for member_name, member in callables(value):
                yield f"{name}.{member_name}", member


@pytest.mark.parametrize(
    "member", [pytest.param(member, id=label) for label, member in dict(annotated()).items()]
)
def test_get_type_hints_resolves_every_public_annotation(member: Any) -> None:
    # What sphinx-autodoc-typehints, typeguard and pydantic call: a name imported only for
    # type checkers raised NameError here.
    typing.get_type_hints(member)


def test_the_names_once_imported_for_type_checkers_only_resolve_to_the_real_types() -> None:
    for name in ("deprecation", "sunset"):
        getter = inspect.getattr_static(APIResponse, name).fget
        assert typing.get_type_hints(getter) == {"return": datetime | None}, name
    hints = typing.get_type_hints(APIStatusError.__init__)
    assert hints["error"] == Error | None
    assert hints["response"] is httpx.Response
    # The optional libraries the factories return, imported when their annotations are read.
    assert typing.get_type_hints(DefaultHttpx2Client)["return"] is httpx2.Client
    assert typing.get_type_hints(DefaultAsyncHttpx2Client)["return"] is httpx2.AsyncClient
    assert typing.get_type_hints(DefaultAioHttpClient)["return"] is aiohttp.ClientSession
    # The transport names what it needs of a store (a protocol beside Plan), not the store's
    # class, whose module imports the transport's: no import cycle, even for type checkers.
    hints = typing.get_type_hints(FakeTransport.__init__)
    assert hints == {"store": Answering, "return": type(None)}
    assert {"_exchange", "_protocol_error"} <= set(dir(FakeAnimalStore))


def test_the_readme_says_what_list_pets_returns_at_run_time_and_to_type_checkers() -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    text = " ".join(readme.read_text(encoding="utf-8").split())
    with FakeAnimalStore().client() as client:
        returned = type(client.list_pets())
    # mypy names a class by the module that defines it, not by `__module__` (the package's, at
    # run time: see `_exports.publish`).
    models = importlib.import_module("animalstore_client._core.models")

    assert typing.get_type_hints(Client.list_pets)["return"] == list[Pet]
    assert typing.get_type_hints(AsyncClient.list_pets)["return"] == list[Pet]
    assert f"(a `{returned.__name__}` at run time," in text
    assert "typed `list[Pet]`, whose `Pet` mypy's `reveal_type` names by its module," in text
    assert f"by its module, `{models.__name__.removeprefix('animalstore_client.')}`;" in text
    assert models.Pet is Pet


# Named without "import": mutation runs leave out the tests whose names hold it (pyproject.toml).
def test_the_factories_optional_libraries_are_loaded_only_for_their_own_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import doctest

    from animalstore_client._backends import defaults

    monkeypatch.setitem(sys.modules, "aiohttp", None)  # as if not installed
    library: Any = vars(defaults)["aiohttp"]  # the stand-in: type checkers see the library
    # What tools probe for is no attribute of the library's: no import, no ImportError.
    assert not hasattr(library, "__wrapped__")
    with pytest.raises(AttributeError) as missing:
        _ = library.__signature__
    assert missing.value.args == ("__signature__",)
    assert doctest.DocTestFinder().find(defaults)
    with pytest.raises(ImportError) as caught:
        _ = library.ClientSession
    assert str(caught.value) == (
        "the SDK's factory for it needs aiohttp (aiohttp is missing): install the SDK's aiohttp "
        "extra, or aiohttp itself with: pip install 'aiohttp>=3.12'"
    )
