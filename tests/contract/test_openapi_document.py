"""The OpenAPI document: valid, faithful to the spec, and in step with the SDK and the store.

Every value the SDK and the document both hold (field names, required fields, JSON types, the
status enum, the limit bounds, the server addresses) is compared here, so neither can change
without the other.
"""

from __future__ import annotations

import asyncio
import json
import types
import typing
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from openapi_spec_validator.versions.consts import OPENAPIV30
from openapi_spec_validator.versions.shortcuts import get_spec_version

from animalstore_client import BASE_URLS, Environment, Error, NewPet, Pet, PetStatus
from animalstore_client.testing import FakeAnimalStore

from .conftest import API_KEY, Contract, StoreDriver

MODELS = [
    pytest.param(Pet, id="Pet"),
    pytest.param(NewPet, id="NewPet"),
    pytest.param(Error, id="Error"),
]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


# -- helpers ------------------------------------------------------------------------------


def flattened(contract: Contract, schema: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """An object schema's properties and required names, with ``$ref`` and ``allOf`` resolved."""
    if "$ref" in schema:
        return flattened(contract, contract.schema(schema["$ref"].rsplit("/", 1)[1]))
    properties = dict(schema.get("properties", {}))
    required = set(schema.get("required", []))
    for part in schema.get("allOf", []):
        more_properties, more_required = flattened(contract, part)
        assert not properties.keys() & more_properties.keys(), "allOf parts overlap"
        properties |= more_properties
        required |= more_required
    return properties, required


def non_none(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(arg for arg in typing.get_args(annotation) if arg is not type(None))
    return (annotation,)


def expected_schema(annotation: Any) -> dict[str, str]:
    """The wire schema an attrs field's annotation stands for.

    ``PetStatus | str`` (``Pet.status``) is still a PetStatus on the wire: the ``str`` is the
    SDK's leniency for values a later version of the API may add (see the README).
    """
    args = non_none(annotation)
    if PetStatus in args:
        assert set(args) <= {PetStatus, str}, annotation
        return {"$ref": "#/components/schemas/PetStatus"}
    if args == (int,):
        return {"type": "integer"}
    if args == (str,):
        return {"type": "string"}
    raise AssertionError(f"no wire type known for {annotation!r}: extend expected_schema")


def sample_value(annotation: Any, index: int) -> Any:
    """A value for a field, different for every field, so wire keys can be told apart."""
    args = non_none(annotation)
    if PetStatus in args:
        return PetStatus.PENDING
    if args == (int,):
        return 1000 + index
    if args == (str,):
        return f"value {index}"
    raise AssertionError(f"no sample for {annotation!r}: extend sample_value")


def wire_names(model: type) -> dict[str, str]:
    """Map each attrs field to its wire name, read off ``to_dict`` of a fully populated instance."""
    fields = attrs.fields(attrs.resolve_types(model))
    values = {field.name: sample_value(field.type, index) for index, field in enumerate(fields)}
    wire = model(**values).to_dict()
    assert len(wire) == len(fields), f"to_dict of a fully populated {model.__name__}: {wire}"
    mapping = {}
    for name, value in values.items():
        on_wire = value.value if isinstance(value, PetStatus) else value
        keys = [key for key, sent in wire.items() if sent == on_wire]
        assert len(keys) == 1, (name, wire)
        mapping[name] = keys[0]
    return mapping


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def limit_parameter(contract: Contract) -> dict[str, Any]:
    (parameter,) = [
        p for p in contract.document["paths"]["/pets"]["get"]["parameters"] if p["name"] == "limit"
    ]
    return parameter  # type: ignore[no-any-return]


# -- the document itself ------------------------------------------------------------------


def test_document_is_a_valid_openapi_3_0_document(contract: Contract) -> None:
    assert get_spec_version(contract.document) == OPENAPIV30
    validate(contract.document)  # raises on any violation


def test_info_servers_tags_and_security(contract: Contract) -> None:
    document = contract.document
    assert document["info"]["version"] == "1.0.0"
    # The spec leaves the addresses as placeholders; the document carries the SDK's.
    assert contract.servers == [BASE_URLS[Environment.PRODUCTION], BASE_URLS[Environment.STAGING]]
    assert all(url.endswith("/v1") for url in contract.servers)
    assert [tag["name"] for tag in document["tags"]] == ["animals"]
    assert document["security"] == [{"bearerAuth": []}]
    assert document["components"]["securitySchemes"] == {
        "bearerAuth": {
            "type": "http",
            "scheme": "bearer",
            "description": document["components"]["securitySchemes"]["bearerAuth"]["description"],
        }
    }


def test_operations_are_exactly_the_specified_ones(contract: Contract) -> None:
    found = {
        (template, method): operation["operationId"]
        for template, method, operation in contract.operations()
    }
    assert found == {
        ("/pets", "GET"): "listPets",
        ("/pets", "POST"): "createPet",
        ("/pets/{petId}", "GET"): "getPet",
    }
    # GET /store/orders is only named by the spec ("not shown"), so it is left out.
    assert not any(template.startswith("/store") for template in contract.document["paths"])
    for _, _, operation in contract.operations():
        assert operation["tags"] == ["animals"]
        assert "security" not in operation  # the global bearerAuth applies to every one
        assert operation.get("deprecated", False) == (operation["operationId"] == "getPet")


@pytest.mark.parametrize(
    ("template", "method", "statuses"),
    [
        ("/pets", "get", {"200": "Pets", "401": "Error"}),
        ("/pets", "post", {"201": "Pet", "400": "Error", "401": "Error"}),
        ("/pets/{petId}", "get", {"200": "Pet", "401": "Error", "404": "Error"}),
    ],
)
def test_responses_are_the_ones_the_spec_lists(
    contract: Contract, template: str, method: str, statuses: dict[str, str]
) -> None:
    responses = contract.document["paths"][template][method]["responses"]
    assert set(responses) == set(statuses)
    for status, schema_name in statuses.items():
        response = responses[status]
        if "$ref" in response:
            response = contract.document["components"]["responses"][
                response["$ref"].rsplit("/")[-1]
            ]
        assert set(response["content"]) == {"application/json"}
        assert response["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{schema_name}"
        }


def test_parameters_and_request_body(contract: Contract) -> None:
    paths = contract.document["paths"]
    list_parameters = {p["name"]: p for p in paths["/pets"]["get"]["parameters"]}
    assert set(list_parameters) == {"limit", "status"}
    assert all(p["in"] == "query" and not p["required"] for p in list_parameters.values())
    assert list_parameters["status"]["schema"] == {"$ref": "#/components/schemas/PetStatus"}
    assert list_parameters["limit"]["schema"]["type"] == "integer"
    assert list_parameters["limit"]["schema"]["format"] in ("int32", "int64")
    (pet_id,) = paths["/pets/{petId}"]["get"]["parameters"]
    assert pet_id == {
        "name": "petId",
        "in": "path",
        "required": True,
        "description": pet_id["description"],
        "schema": {"type": "integer", "format": "int64"},
    }
    body = paths["/pets"]["post"]["requestBody"]
    assert body["required"] is True
    assert body["content"] == {
        "application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}
    }
    assert "requestBody" not in paths["/pets"]["get"]
    assert "requestBody" not in paths["/pets/{petId}"]["get"]


def test_schema_details_the_spec_gives(contract: Contract) -> None:
    for name in ("Pet", "NewPet"):
        properties, _ = flattened(contract, {"$ref": f"#/components/schemas/{name}"})
        assert properties["categoryId"]["format"] == "int64"
    pet_properties, _ = flattened(contract, contract.schema("Pet"))
    assert pet_properties["id"]["format"] == "int64"
    assert contract.schema("Pets") == {
        "type": "array",
        "description": contract.schema("Pets")["description"],
        "items": {"$ref": "#/components/schemas/Pet"},
    }


def test_objects_stay_open_to_extra_fields(contract: Contract) -> None:
    # The spec forbids no extra field: no schema closes itself, and an extra field validates.
    def walk(node: object) -> None:
        if isinstance(node, dict):
            assert node.get("additionalProperties", True) is not False
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(contract.document)
    pet = {"id": 1, "name": "Rex", "categoryId": 3, "colour": "brown"}
    contract.schema_validator("Pet").validate(pet)
    assert Pet.from_dict(pet) == Pet(id=1, name="Rex", category_id=3)


# -- the document against the SDK's models ------------------------------------------------


@pytest.mark.parametrize("model", MODELS)
def test_wire_names_match_the_sdk_model(contract: Contract, model: type) -> None:
    properties, _ = flattened(contract, contract.schema(model.__name__))
    mapping = wire_names(model)
    assert set(mapping.values()) == set(properties)
    # The rename is the camelCase of every attribute, nothing else.
    assert all(wire == camel(name) for name, wire in mapping.items())


@pytest.mark.parametrize("model", MODELS)
def test_required_fields_match_the_sdk_model(contract: Contract, model: type) -> None:
    _, required = flattened(contract, contract.schema(model.__name__))
    mapping = wire_names(model)
    fields = attrs.fields(attrs.resolve_types(model))
    without_default = {mapping[f.name] for f in fields if f.default is attrs.NOTHING}
    assert without_default == required
    # An instance with only the required fields serialises to exactly the required keys.
    minimal = model(
        **{
            f.name: sample_value(f.type, i)
            for i, f in enumerate(fields)
            if f.default is attrs.NOTHING
        }
    )
    assert set(minimal.to_dict()) == required


@pytest.mark.parametrize("model", MODELS)
def test_json_types_match_the_sdk_annotations(contract: Contract, model: type) -> None:
    properties, _ = flattened(contract, contract.schema(model.__name__))
    mapping = wire_names(model)
    for field in attrs.fields(attrs.resolve_types(model)):
        expected = expected_schema(field.type)
        prop = properties[mapping[field.name]]
        if "$ref" in expected:
            assert prop == expected, field.name
        else:
            assert prop["type"] == expected["type"], field.name


def test_pet_status_enum_matches_the_sdk(contract: Contract) -> None:
    schema = contract.schema("PetStatus")
    assert schema["type"] == "string"
    assert schema["enum"] == [member.value for member in PetStatus]


@settings(max_examples=60, deadline=None, database=None)
@given(data=st.data())
def test_sdk_models_serialise_into_the_document_and_back(contract: Contract, data: Any) -> None:
    int64 = st.integers(INT64_MIN, INT64_MAX)
    status = st.none() | st.sampled_from(PetStatus)
    new_pet = data.draw(st.builds(NewPet, name=st.text(), category_id=int64, status=status))
    pet = data.draw(st.builds(Pet, id=int64, name=st.text(), category_id=int64, status=status))
    error = data.draw(
        st.builds(Error, code=st.text(), message=st.text(), status=st.integers(100, 599))
    )
    for instance in (new_pet, pet, error):
        wire = instance.to_dict()
        contract.schema_validator(type(instance).__name__).validate(wire)
        assert type(instance).from_dict(wire) == instance


# -- the limit bounds: document, SDK and store --------------------------------------------


def test_limit_bounds_are_the_spec_s(contract: Contract) -> None:
    schema = limit_parameter(contract)["schema"]
    assert (schema["minimum"], schema["maximum"], schema["default"]) == (1, 100, 20)
    assert not schema.get("exclusiveMinimum")
    assert not schema.get("exclusiveMaximum")


async def _async_list(store: FakeAnimalStore, limit: int) -> None:
    async with store.async_client(max_retries=0) as client:
        await client.list_pets(limit=limit)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_sdk_enforces_the_document_s_limit_bounds(contract: Contract, kind: str) -> None:
    schema = limit_parameter(contract)["schema"]
    store = FakeAnimalStore(api_keys=(API_KEY,))

    def list_pets(limit: int) -> None:
        if kind == "sync":
            with store.client(max_retries=0) as client:
                client.list_pets(limit=limit)
        else:
            asyncio.run(_async_list(store, limit))

    for outside in (schema["minimum"] - 1, schema["maximum"] + 1):
        with pytest.raises(ValueError, match="limit"):
            list_pets(outside)
    assert store.requests == []  # rejected before anything was sent
    for inside in (schema["minimum"], schema["maximum"]):
        list_pets(inside)
    assert [r.query for r in store.requests] == [
        f"limit={schema['minimum']}",
        f"limit={schema['maximum']}",
    ]


def test_store_enforces_the_document_s_limit_bounds(
    contract: Contract, store: FakeAnimalStore, driver: StoreDriver
) -> None:
    schema = limit_parameter(contract)["schema"]
    for number in range(schema["maximum"] + 5):
        store.add_pet(f"pet {number}", 1)
    for outside in (schema["minimum"] - 1, schema["maximum"] + 1):
        response, _ = driver.send("GET", "/v1/pets", f"limit={outside}")
        assert response.status_code == 400
    for inside in (schema["minimum"], schema["maximum"]):
        response, documented = driver.send("GET", "/v1/pets", f"limit={inside}")
        assert (response.status_code, documented) == (200, True)
        assert len(json.loads(response.data)) == inside
    response, _ = driver.send("GET", "/v1/pets")
    assert len(json.loads(response.data)) == schema["default"]
