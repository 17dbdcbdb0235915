"""The contract tests' shared machinery: the OpenAPI document, openapi-core adapters, checks.

openapi-core 0.23 has no httpx integration, so ``OpenAPIRequest`` and ``OpenAPIResponse``
implement its ``Request`` and ``Response`` protocols (``openapi_core.protocols``) for an
``httpx`` request/response and for the plain data the reference store's ``handle`` takes and
returns. ``Contract`` wraps ``openapi_core.OpenAPI`` and adds the one rule the document
cannot hold: where the document lists no response for an operation and status (the store
answers more than the spec lists), the body must still be a valid Error whose ``status``
equals the HTTP status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import httpx
import pytest
import yaml
from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_schema_validator import OAS30Validator, oas30_format_checker
from werkzeug.datastructures import Headers, ImmutableMultiDict

from animalstore_client.testing import FakeAnimalStore

SPEC_PATH = Path(__file__).with_name("openapi.yaml")
API_KEY = "contract-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}

RawResponse = tuple[int, list[tuple[str, str]], bytes]


class OpenAPIRequest:
    """An HTTP request as openapi-core's ``Request`` protocol wants it.

    Args:
        method: the HTTP method, as sent.
        url: the absolute URL, query included.
        headers: the header pairs (repeats kept).
        body: the raw body (``b""`` when there is none).
    """

    def __init__(
        self, method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes
    ) -> None:
        parts = urlsplit(url)
        self.http_method = method
        self.url = url
        self.host_url = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path
        self.body = body
        header = Headers(list(headers))
        self.content_type = header.get("Content-Type", "").lower()
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(parse_qsl(parts.query, keep_blank_values=True)),
            header=header,
            cookie=ImmutableMultiDict(),
        )

    @property
    def method(self) -> str:
        return self.http_method.lower()

    @classmethod
    def from_httpx(cls, request: httpx.Request) -> OpenAPIRequest:
        return cls(request.method, str(request.url), request.headers.multi_items(), request.read())

    @classmethod
    def from_store(
        cls,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: bytes,
        host_url: str,
    ) -> OpenAPIRequest:
        """Build one from what the store's ``handle`` takes (a percent-decoded path)."""
        url = host_url + quote(path, safe="/") + (f"?{query}" if query else "")
        return cls(method, url, headers.items(), body)

    def __repr__(self) -> str:
        return f"OpenAPIRequest({self.http_method} {self.url})"


class OpenAPIResponse:
    """An HTTP response as openapi-core's ``Response`` protocol wants it."""

    def __init__(self, status_code: int, headers: Iterable[tuple[str, str]], data: bytes) -> None:
        self.status_code = status_code
        self.headers = Headers(list(headers))
        self.data = data
        self.content_type = self.headers.get("Content-Type", "").lower()

    @classmethod
    def from_httpx(cls, response: httpx.Response) -> OpenAPIResponse:
        return cls(response.status_code, response.headers.multi_items(), response.read())

    @classmethod
    def from_store(cls, response: RawResponse) -> OpenAPIResponse:
        status, headers, body = response
        return cls(status, headers, body)


def describe(errors: Iterable[Exception]) -> str:
    """Say what openapi-core found wrong (some of its errors cannot be turned into text)."""
    shown = []
    for error in errors:
        try:
            shown.append(f"{type(error).__name__}: {error}")
        except Exception:
            shown.append(f"{type(error).__name__}: {error.__cause__!r}")
    return "; ".join(shown)


def _template_pattern(template: str) -> re.Pattern[str]:
    """A regex for a path template: each ``{name}`` matches one non-empty path segment."""
    parts = re.split(r"(\{[^}/]+\})", template)
    return re.compile(
        "".join("[^/]+" if part.startswith("{") else re.escape(part) for part in parts)
    )


class Contract:
    """The OpenAPI document, loaded once, and the checks built on it."""

    def __init__(self, path: Path = SPEC_PATH) -> None:
        self.document: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        self.openapi = OpenAPI.from_file_path(str(path))
        self.servers: list[str] = [server["url"] for server in self.document["servers"]]
        self.production_url = self.servers[0]
        self.base_path = urlsplit(self.production_url).path  # "/v1", the same for every server
        parts = urlsplit(self.production_url)
        self.production_host = f"{parts.scheme}://{parts.netloc}"
        self._error_validator = self.schema_validator("Error")
        self._templates = [
            (_template_pattern(template), template) for template in self.document["paths"]
        ]

    # -- the document ---------------------------------------------------------------------

    def schema(self, name: str) -> dict[str, Any]:
        return self.document["components"]["schemas"][name]  # type: ignore[no-any-return]

    def schema_validator(self, name: str) -> OAS30Validator:
        """A JSON Schema validator (OpenAPI 3.0 dialect, formats checked) for one component."""
        root = {"$ref": f"#/components/schemas/{name}", "components": self.document["components"]}
        return OAS30Validator(root, format_checker=oas30_format_checker)

    def operations(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Yield ``(path template, method in upper case, operation)`` for every operation."""
        for template, item in self.document["paths"].items():
            for method, operation in item.items():
                yield template, method.upper(), operation

    def operation(self, method: str, path: str) -> dict[str, Any] | None:
        """The documented operation a request to ``path`` (with ``/v1``) reaches, if any.

        HTTP methods are case-sensitive, so only the exact upper-case name matches.
        """
        if not path.startswith(self.base_path + "/"):
            return None
        relative = path[len(self.base_path) :]
        for pattern, template in self._templates:
            if pattern.fullmatch(relative):
                item = self.document["paths"][template]
                if method.isupper() and method.lower() in item:
                    return item[method.lower()]  # type: ignore[no-any-return]
                return None
        return None

    def documents(self, method: str, path: str, status: int) -> bool:
        """Whether the document lists ``status`` for the operation ``method path`` reaches."""
        operation = self.operation(method, path)
        return operation is not None and str(status) in operation["responses"]

    # -- checks ---------------------------------------------------------------------------

    def request_errors(self, request: OpenAPIRequest) -> list[Exception]:
        return list(self.openapi.iter_request_errors(request))

    def validate_request(self, request: OpenAPIRequest) -> None:
        errors = self.request_errors(request)
        assert not errors, f"{request!r} does not fit the document: {describe(errors)}"

    def validate_response(self, request: OpenAPIRequest, response: OpenAPIResponse) -> None:
        """Validate against the operation's response for this status in the document."""
        errors = list(self.openapi.iter_response_errors(request, response))
        assert not errors, (
            f"{response.status_code} to {request!r} does not fit the document: {describe(errors)}; "
            f"body {response.data[:300]!r}"
        )

    def validate_error_body(self, response: OpenAPIResponse) -> dict[str, Any]:
        """Check a JSON Error body whose ``status`` is the HTTP status; return it."""
        assert response.content_type == "application/json", response.content_type
        body = json.loads(response.data)
        self._error_validator.validate(body)
        assert body["status"] == response.status_code, body
        return body  # type: ignore[no-any-return]

    def check_store_response(
        self, request: OpenAPIRequest, response: OpenAPIResponse, path: str
    ) -> bool:
        """Check one response of the store; return whether the document lists it.

        Never a 5xx. Documented (operation, status): validated by openapi-core against the
        document. Anything else: an error status with a valid Error body. Every error body,
        documented or not, has ``status`` equal to the HTTP status.

        Args:
            request: the request, as the store received it.
            response: the store's answer.
            path: the request's percent-decoded path (``/v1/pets/7``), as the store saw it.
        """
        assert response.status_code < 500, (request, response.status_code, response.data)
        documented = self.documents(request.http_method, path, response.status_code)
        if documented:
            self.validate_response(request, response)
        else:
            assert response.status_code >= 400, (request, response.status_code)
        if response.status_code >= 400:
            self.validate_error_body(response)
        return documented


class StoreDriver:
    """Sends plain-data requests to a store's ``handle`` and checks each answer."""

    def __init__(self, store: FakeAnimalStore, contract: Contract) -> None:
        self.store = store
        self.contract = contract

    def send(
        self,
        method: str,
        path: str,
        query: str = "",
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> tuple[OpenAPIResponse, bool]:
        """Send one request; check the response; return it and whether it is documented."""
        headers = dict(AUTH if headers is None else headers)
        request = OpenAPIRequest.from_store(
            method, path, query, headers, body, self.contract.production_host
        )
        response = OpenAPIResponse.from_store(self.store.handle(method, path, query, headers, body))
        documented = self.contract.check_store_response(request, response, path)
        return response, documented


@pytest.fixture(scope="session")
def contract() -> Contract:
    return Contract()


@pytest.fixture
def store() -> FakeAnimalStore:
    return FakeAnimalStore(api_keys=(API_KEY,))


@pytest.fixture
def driver(store: FakeAnimalStore, contract: Contract) -> StoreDriver:
    return StoreDriver(store, contract)
