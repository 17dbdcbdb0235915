"""Public names read as public: module names, pickles, tracebacks, exports, type hints."""

from __future__ import annotations

import ast
import inspect
import pickle
import subprocess
import sys
import traceback
import typing
import warnings
from pathlib import Path

import pytest

import animalstore_client as sdk
import animalstore_client.testing as sdk_testing
from animalstore_client import (
    NOT_GIVEN,
    AnimalStoreError,
    APIResponse,
    AsyncClient,
    AsyncRawResponses,
    Client,
    Environment,
    Error,
    NewPet,
    NotFoundError,
    Pet,
    PetStatus,
    PetStatusLiteral,
    RawResponses,
    WireFormatError,
)
from animalstore_client._raw import RawView
from animalstore_client.testing import FakeAnimalStore, FakeTransport, RecordedRequest
from tests.contract.operations import METHOD_NAMES

PACKAGES = [sdk, sdk_testing]


def exported_classes(package: typing.Any) -> list[type]:
    return [value for name in package.__all__ if isinstance(value := getattr(package, name), type)]


CLASSES = [
    pytest.param(cls, id=f"{package.__name__}.{cls.__name__}")
    for package in PACKAGES
    for cls in exported_classes(package)
]


def test_every_exported_class_is_counted() -> None:
    # A guard on the parametrization below: a class dropped from __all__ would go unchecked.
    # 23, DefaultHttpxClient and DefaultAsyncHttpxClient, which are classes now, PetList,
    # ResponseTooLargeError, TimeoutLike, RetryPolicy, TracerProviderLike, and middleware's
    # Request and Response.
    assert len(exported_classes(sdk)) == 32
    assert {cls.__name__ for cls in exported_classes(sdk_testing)} == {
        "ClientSettings",
        "FakeAnimalStore",
        "FakeTransport",
        "Fault",
        "RecordedRequest",
    }


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_exported_classes_name_the_package_they_are_imported_from(package: typing.Any) -> None:
    for cls in exported_classes(package):
        assert cls.__module__ == package.__name__, cls
        # What pickle does to find a class again.
        assert getattr(sys.modules[cls.__module__], cls.__qualname__) is cls


def test_reprs_and_tracebacks_show_the_public_name() -> None:
    assert repr(NotFoundError) == "<class 'animalstore_client.NotFoundError'>"
    assert repr(FakeAnimalStore) == "<class 'animalstore_client.testing.FakeAnimalStore'>"
    store = FakeAnimalStore()
    with store.client(max_retries=0) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(NotFoundError) as caught:
            client.get_pet(404)  # type: ignore[deprecated]
    shown = "".join(traceback.format_exception(caught.value))
    assert "\nanimalstore_client.NotFoundError: 404 not_found: " in shown
    assert "_exceptions" not in shown.splitlines()[-1]


def test_from_dict_raises_the_exported_wire_format_error() -> None:
    with pytest.raises(WireFormatError) as caught:
        Pet.from_dict({"id": "7", "name": "Rex"})
    error = caught.value
    # Public, in the one hierarchy, and still the ValueError it always was.
    assert type(error) is sdk.WireFormatError
    assert isinstance(error, AnimalStoreError)
    assert isinstance(error, ValueError)
    assert error.problems == [
        "$.id: expected an integer, got str '7'",
        "$.categoryId: required field is missing",
    ]
    assert str(error) == "; ".join(error.problems)
    line = traceback.format_exception_only(error)[-1]
    assert line.startswith("animalstore_client.WireFormatError: $.id: expected an integer")


def test_wire_format_error_shows_three_problems_and_counts_the_rest() -> None:
    error = WireFormatError([f"$[{i}]: expected a JSON object, got null" for i in range(5)])
    assert str(error).endswith("$[2]: expected a JSON object, got null; and 2 more")
    assert len(error.problems) == 5


@pytest.mark.parametrize("cls", CLASSES)
def test_classes_pickle_by_their_public_name(cls: type) -> None:
    data = pickle.dumps(cls)
    assert pickle.loads(data) is cls
    assert b"animalstore_client._" not in data
    assert b"animalstore_client.testing._" not in data


@pytest.mark.parametrize(
    ("module", "cls"),
    [
        ("animalstore_client._core.models", Pet),
        ("animalstore_client._core.models", PetStatus),
        ("animalstore_client._core.exceptions", NotFoundError),
        ("animalstore_client._core.converter", WireFormatError),
        ("animalstore_client._client", Client),
        ("animalstore_client.testing._store", RecordedRequest),
    ],
)
def test_pickles_naming_the_defining_modules_still_load(module: str, cls: type) -> None:
    # What 1.0.0 wrote: each class under the private module that defines it (protocol 0).
    assert pickle.loads(f"c{module}\n{cls.__qualname__}\n.".encode()) is cls


def test_instances_pickle_by_public_names_into_a_fresh_process() -> None:
    wire_error = WireFormatError(["$.id: required field is missing", "$.name: expected a string"])
    values: list[object] = [
        Pet(id=1, name="Rex", category_id=3, status=PetStatus.SOLD),
        Pet(id=2, name="Tom", category_id=4, status="reserved"),
        NewPet(name="Kit", category_id=5),
        Error(code="not_found", message="no such pet", status=404),
        PetStatus.PENDING,
        Environment.STAGING,
        NOT_GIVEN,
        wire_error,
        RecordedRequest("GET", "/v1/pets", "", {"accept": "*/*"}, b""),
    ]
    data = pickle.dumps(values)
    for private in (b"_models", b"_types", b"_config", b"_converter", b"_store"):
        assert private not in data
    # A new interpreter that has imported nothing: pickle imports what the data names.
    code = (
        "import pickle, sys; values = pickle.loads(sys.stdin.buffer.read()); "
        "print(repr(values)); print(values[-2].problems); print(values[6] is type(values[6])())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, check=True
    )
    lines = result.stdout.decode().splitlines()
    assert lines[0] == repr(values)
    assert lines[1] == repr(wire_error.problems)
    assert lines[2] == "True"  # NOT_GIVEN is still the one instance


def test_not_given_is_one_falsy_instance_shown_by_its_name() -> None:
    assert sdk.NotGiven() is NOT_GIVEN
    assert bool(NOT_GIVEN) is False
    assert repr(NOT_GIVEN) == "NOT_GIVEN"
    assert pickle.loads(pickle.dumps(NOT_GIVEN)) is NOT_GIVEN


@pytest.mark.parametrize("cls", CLASSES)
def test_type_hints_of_public_classes_resolve(cls: type) -> None:
    # Tools that read annotations (cattrs, pydantic, Sphinx) resolve them in the module that
    # __module__ names: it must define every name they use.
    typing.get_type_hints(cls)


def test_model_type_hints_resolve_to_the_real_types() -> None:
    assert typing.get_type_hints(Pet) == {
        "id": int,
        "name": str,
        "category_id": int,
        "status": PetStatus | str | None,
    }


def test_status_literal_lists_exactly_the_pet_status_values() -> None:
    assert typing.get_args(PetStatusLiteral) == tuple(status.value for status in PetStatus)


@pytest.mark.parametrize("client_class", [Client, AsyncClient])
@pytest.mark.parametrize("method", ["list_pets", "create_pet"])
def test_status_parameters_take_the_enum_or_its_literal_values(
    client_class: type, method: str
) -> None:
    hints = typing.get_type_hints(getattr(client_class, method))
    assert hints["status"] == PetStatus | PetStatusLiteral | None


@pytest.mark.parametrize(
    ("client_class", "view_class"), [(Client, RawResponses), (AsyncClient, AsyncRawResponses)]
)
def test_raw_views_have_the_clients_parameters_and_docs(
    client_class: type[Client] | type[AsyncClient], view_class: type
) -> None:
    client = client_class(api_key="key", base_url="https://api.test/v1")
    view = client.with_raw_response
    assert type(view) is view_class
    for name in METHOD_NAMES:
        shown, original = getattr(view, name), getattr(client, name)
        signature, expected = inspect.signature(shown), inspect.signature(original)
        assert signature.parameters == expected.parameters
        # What the view's call gives, at run time as for type checkers.
        assert (
            signature.return_annotation
            == typing.cast(typing.Any, APIResponse)[expected.return_annotation]
        )
        hints = typing.get_type_hints(shown)
        assert hints == {**typing.get_type_hints(original), "return": signature.return_annotation}
        assert inspect.iscoroutinefunction(shown) is (client_class is AsyncClient)
        assert (inspect.getdoc(original) or "x") in (inspect.getdoc(shown) or "")
        # Bound to the view, which sends with its client.
        assert shown.__self__ is view
        # On the class, a function with the same parameters (none for the view), for help(),
        # introspection and create_autospec.
        on_class = getattr(view_class, name)
        assert getattr(view_class, name) is on_class  # made once
        assert inspect.isfunction(on_class)
        assert inspect.signature(on_class) == signature
        assert inspect.iscoroutinefunction(on_class) is (client_class is AsyncClient)
        assert on_class.__module__ == shown.__module__ == original.__module__
        deprecation = getattr(original, "__deprecated__", None)
        assert getattr(on_class, "__deprecated__", None) == deprecation
        assert getattr(shown, "__deprecated__", None) == deprecation
    # "ǁ": what mutation runs add to a class (mutmut's trampolines), no attribute of ours.
    shown_names = {name for name in dir(view) if not name.startswith("_") and "ǁ" not in name}
    assert shown_names == set(METHOD_NAMES)


def test_fake_transport_is_exported_and_is_what_the_store_hands_out() -> None:
    assert isinstance(FakeAnimalStore().transport(), FakeTransport)


def declared_overloads(source: Path, class_name: str, name: str) -> list[str | None]:
    """The ``@deprecated`` message of each ``@overload`` of a method, read from its source.

    What type checkers read (PEP 702: a literal in each place).
    """
    module = ast.parse(source.read_text())
    [cls] = [n for n in ast.walk(module) if isinstance(n, ast.ClassDef) and n.name == class_name]
    messages: list[str | None] = []
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef) or node.name != name:
            continue
        decorators = {
            ast.unparse(d.func if isinstance(d, ast.Call) else d): d for d in node.decorator_list
        }
        if "overload" not in decorators:
            continue
        deprecation = decorators.get("deprecated")
        assert deprecation is None or isinstance(deprecation, ast.Call)
        messages.append(None if deprecation is None else ast.literal_eval(deprecation.args[0]))
    return messages


def test_raw_views_flag_get_pet_with_the_clients_deprecation_message() -> None:
    # PEP 702 wants a literal in each place, so the message is written out four times.
    expected = inspect.getattr_static(Client, "get_pet").__deprecated__
    assert inspect.getattr_static(AsyncClient, "get_pet").__deprecated__ == expected
    for view_class in (RawResponses, AsyncRawResponses):
        assert inspect.getattr_static(view_class, "get_pet").__deprecated__ == expected
        assert not hasattr(view_class.list_pets, "__deprecated__")
    source = Path(inspect.getsourcefile(RawView) or "")
    assert declared_overloads(source, "DeprecatedRawMethod", "__get__") == [None, expected]
    assert declared_overloads(source, "RawMethod", "__get__") == [None, None]
