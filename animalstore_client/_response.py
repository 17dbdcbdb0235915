"""Turning what came back into a result or an SDK exception; no I/O."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import httpx

from animalstore_client._converter import WireFormatError, structure
from animalstore_client._deprecation import deprecation_date, sunset_date
from animalstore_client._exceptions import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    status_error_class,
)
from animalstore_client._models import Error

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["APIResponse", "connection_error", "parse_body", "status_error"]

T = TypeVar("T")

_EXCERPT_CHARS = 300
_UNPARSED = object()


def _decoded_json(response: httpx.Response) -> object:
    """Decode the body as JSON, whatever ``Content-Type`` says.

    Raises:
        ValueError: the body is not JSON (``RecursionError`` for absurd nesting included).
    """
    try:
        return json.loads(response.content)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _excerpt(response: httpx.Response) -> str:
    """Return the start of the body on one line, or the reason phrase if it is empty."""
    # Read as UTF-8, not in the charset the server names: `response.text` fails outright on
    # charsets such as rot13, hex or idna, and the API's bodies are JSON, which is UTF-8.
    content = response.content
    head = content[: _EXCERPT_CHARS * 4].decode("utf-8", "replace")
    text = " ".join(head[:_EXCERPT_CHARS].split())
    if len(head) > _EXCERPT_CHARS or len(content) > _EXCERPT_CHARS * 4:
        text += " ..."
    return text or response.reason_phrase or "(empty body)"


class APIResponse(Generic[T]):
    """A successful (2xx) response, parsed into its result on demand.

    Returned by ``client.with_raw_response.<method>(...)``; not meant to be built by users.
    Besides the status and headers, it exposes the service's deprecation signals:
    ``deprecation`` and ``sunset``.

    Args:
        http_response: the 2xx response, body read.
        result_type: the type ``parse()`` structures the body into (``Pet``, ``list[Pet]``).
        retries_taken: how many retries it took to get this response.

    Attributes:
        http_response: the underlying ``httpx.Response``.
        retries_taken: how many retries it took to get this response.
    """

    __slots__ = ("_parsed", "_result_type", "http_response", "retries_taken")

    def __init__(self, http_response: httpx.Response, result_type: Any, retries_taken: int) -> None:
        self.http_response: httpx.Response = http_response
        self.retries_taken: int = retries_taken
        self._result_type = result_type
        self._parsed: object = _UNPARSED

    @property
    def status_code(self) -> int:
        """The HTTP status code."""
        return self.http_response.status_code

    @property
    def headers(self) -> httpx.Headers:
        """The response headers."""
        return self.http_response.headers

    @property
    def request_id(self) -> str | None:
        """The ``x-request-id`` response header, when present."""
        request_id: str | None = self.http_response.headers.get("x-request-id")
        return request_id

    @property
    def deprecation(self) -> datetime | None:
        """When the service deprecated the operation (``Deprecation`` header, RFC 9745).

        Timezone-aware, in UTC; it may lie in the future, when the deprecation takes effect.
        ``None`` when the header is absent or malformed (a malformed one is logged at DEBUG).
        """
        return deprecation_date(self.http_response.headers)

    @property
    def sunset(self) -> datetime | None:
        """When the service will stop serving the operation (``Sunset`` header, RFC 8594).

        Timezone-aware, in UTC. ``None`` when the header is absent or malformed (a malformed
        one is logged at DEBUG).
        """
        return sunset_date(self.http_response.headers)

    def parse(self) -> T:
        """Return the body structured into the operation's result type; parsed once, then cached.

        Returns:
            The result the plain method would have returned (``Pet``, ``list[Pet]``).

        Raises:
            APIResponseValidationError: the body is not JSON or does not fit the schema; the
                message names the bad field.
        """
        if self._parsed is _UNPARSED:
            self._parsed = parse_body(self.http_response, self._result_type)
        return self._parsed  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"<APIResponse [{self.status_code}] {self.http_response.request.url}>"


def parse_body(response: httpx.Response, result_type: Any) -> Any:
    """Structure a successful response's JSON body into ``result_type``.

    Args:
        response: the 2xx response, body read.
        result_type: the operation's result type (``Pet``, ``list[Pet]``).

    Returns:
        The structured result.

    Raises:
        APIResponseValidationError: the body is not JSON or does not fit the schema; the
            message names the bad field.
    """
    try:
        return structure(_decoded_json(response), result_type)
    except WireFormatError as exc:
        message = f"response body does not fit the schema: {exc}"
        raise APIResponseValidationError(message, response=response) from None
    except ValueError as exc:
        message = f"response body is not valid JSON: {exc}"
        raise APIResponseValidationError(message, response=response) from None


def status_error(response: httpx.Response) -> APIStatusError:
    """Build the exception for a non-2xx response, whatever its body.

    An Error body gives ``code``, ``message`` and ``error``; any other body (an HTML page from a
    proxy, nothing, broken JSON) gives a message made from its first few hundred characters.

    Args:
        response: the non-2xx response.

    Returns:
        An instance of the subclass the status maps to.
    """
    try:
        error: Error | None = structure(_decoded_json(response), Error)
    except ValueError:
        error = None
    message = error.message if error is not None else _excerpt(response)
    return status_error_class(response.status_code)(message, response=response, error=error)


def connection_error(exc: httpx.RequestError, request: httpx.Request) -> APIConnectionError:
    """Build the exception for an attempt that got no usable response.

    Args:
        exc: what httpx raised.
        request: the request that was being sent.

    Returns:
        An ``APITimeoutError`` for a timeout, else an ``APIConnectionError``.
    """
    kind = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    detail = str(exc) or type(exc).__name__
    return kind(f"{request.method} {request.url} failed: {detail}", request=request)
