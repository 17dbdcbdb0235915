"""The SDK's one exception hierarchy.

Every exception raised for an API call, or for data that does not fit the wire format, is an
``AnimalStoreError``::

    AnimalStoreError
    ├── WireFormatError                  Model.from_dict(bad data); also a ValueError
    └── APIError                         .request
        ├── APIConnectionError           no response (DNS, refused, reset)
        │   └── APITimeoutError          a timeout, or the call's deadline passed
        ├── APIResponseValidationError   2xx whose body does not fit the schema
        ├── ResponseTooLargeError        a body larger than max_response_bytes
        └── APIStatusError               non-2xx answer
            ├── BadRequestError          400
            ├── AuthenticationError      401
            ├── NotFoundError            404
            ├── RateLimitError           429
            └── InternalServerError      5xx

Arguments that fail the client-side checks raise ``TypeError`` or ``ValueError`` instead, before
anything is sent.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, cast

import httpx

from animalstore_client._core.models import Error
from animalstore_client._core.root_error import AnimalStoreError
from animalstore_client._core.safe_repr import tolerant_repr

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AnimalStoreError",
    "AuthenticationError",
    "BadRequestError",
    "InternalServerError",
    "NotFoundError",
    "RateLimitError",
    "ResponseTooLargeError",
    "from_source",
    "status_error_class",
]

E = TypeVar("E", bound="APIError")


class _Source(Protocol):
    """Where an error's ``httpx`` request comes from: built on first read (see ``_wire``)."""

    def request_view(self) -> httpx.Request: ...


class _ResponseSource(_Source, Protocol):
    """Where an error's ``httpx`` response comes from as well."""

    def http_response(self) -> httpx.Response: ...


class _Given:
    """The ``httpx`` objects an error was constructed with, returned as they are."""

    __slots__ = ("request", "response")

    def __init__(self, request: httpx.Request, response: httpx.Response | None) -> None:
        self.request = request
        self.response = response

    def request_view(self) -> httpx.Request:
        return self.request

    def http_response(self) -> httpx.Response:
        assert self.response is not None  # only errors constructed with a response read it
        return self.response


@tolerant_repr
class APIError(AnimalStoreError):
    """An API call failed.

    Its ``repr`` names its fields (``NotFoundError(status_code=404, code='not_found', ...)``),
    and Jupyter shows it as a table of them.

    Attributes:
        message: what went wrong, in one line.
        request: the ``httpx.Request`` that was (or was to be) sent.
    """

    def __init__(self, message: str, *, request: httpx.Request) -> None:
        super().__init__(message)
        self.message: str = message
        self._source: _Source = _Given(request, None)

    @property
    def request(self) -> httpx.Request:
        """The ``httpx.Request`` that was (or was to be) sent; its ``Authorization`` redacted."""
        return self._source.request_view()

    def _fields(self) -> list[tuple[str, object]]:
        return [("message", self.message)]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self._fields())
        return f"{type(self).__name__}({fields})"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the error's class and fields as an HTML table, escaped."""
        from animalstore_client._core.display import html_fields

        return html_fields(type(self).__name__, self._fields())

    def __reduce__(self) -> tuple[Any, ...]:
        # For pickle (a ProcessPoolExecutor worker's error) and copy. BaseException's own
        # replays `self.args` positionally, which the keyword-only __init__ refuses; and the
        # request's headers hold the API key, which must not travel: the copy's request and
        # response keep their method, URL, status, headers and body, but no request headers.
        extra = {name: value for name, value in vars(self).items() if name not in _REBUILT}
        return _rebuild, (type(self), self.message, self._rebuild_keywords(), extra)

    def _rebuild_keywords(self) -> dict[str, Any]:
        return {"request": _without_headers(self.request)}


class APIConnectionError(APIError):
    """No usable response: unreachable host, broken connection, or an undecodable body.

    An undecodable body is one whose ``Content-Encoding`` (gzip ...) is corrupt.
    """


class APITimeoutError(APIConnectionError):
    """No response was received within the configured timeout, or the call's deadline passed."""


class ResponseTooLargeError(APIError):
    """An answer's body, decoded, was larger than ``max_response_bytes``; reading stopped there.

    Also raised when the body as it travelled, before decoding, is larger than twice
    ``max_response_bytes`` plus 64 KiB, the bound on its coded bytes (see the guide).
    Raised whatever the status, and never retried: the same answer would come again. The
    request reached the service, so a ``create_pet`` that raises it may have created the
    animal. Raise the client's ``max_response_bytes`` (``with_options``) if the answer is
    legitimate.
    """


class APIResponseValidationError(APIError):
    """A 2xx response whose body does not fit the schema; the message names the bad field.

    Attributes:
        response: the ``httpx.Response`` whose body did not fit.
    """

    def __init__(self, message: str, *, response: httpx.Response) -> None:
        super().__init__(message, request=response.request)
        self._source = _Given(response.request, response)

    @property
    def response(self) -> httpx.Response:
        """The ``httpx.Response`` whose body did not fit."""
        return cast("_ResponseSource", self._source).http_response()

    def _rebuild_keywords(self) -> dict[str, Any]:
        return {"response": _safe_response(self.response)}


@tolerant_repr
class APIStatusError(APIError):
    """The API answered with a non-2xx status.

    Attributes:
        status_code: the HTTP status code.
        code: the Error body's machine-readable ``code``; ``None`` when the body was not an Error.
        message: the Error body's ``message``, or the start of the body when it was not an Error.
        error: the parsed ``Error`` body, or ``None`` when the body was not an Error.
        response: the ``httpx.Response``.
        request_id: the ``x-request-id`` response header, when present.
    """

    def __init__(self, message: str, *, response: httpx.Response, error: Error | None) -> None:
        super().__init__(message, request=response.request)
        self._source = _Given(response.request, response)
        self._set_fields(response.status_code, response.headers.get("x-request-id"), error)

    def _set_fields(self, status_code: int, request_id: str | None, error: Error | None) -> None:
        self.status_code: int = status_code
        self.error: Error | None = error
        self.code: str | None = error.code if error is not None else None
        self.request_id: str | None = request_id

    @property
    def response(self) -> httpx.Response:
        """The ``httpx.Response`` (its request's ``Authorization`` redacted)."""
        return cast("_ResponseSource", self._source).http_response()

    def _rebuild_keywords(self) -> dict[str, Any]:
        return {"response": _safe_response(self.response), "error": self.error}

    def _fields(self) -> list[tuple[str, object]]:
        return [
            ("status_code", self.status_code),
            ("code", self.code),
            ("message", self.message),
            ("request_id", self.request_id),
        ]

    def __str__(self) -> str:
        code = f" {_one_line(self.code)}" if self.code is not None else ""
        request_id = f" (request id {_one_line(self.request_id)})" if self.request_id else ""
        return f"{self.status_code}{code}: {_one_line(self.message)}{request_id}"


#: What __init__ sets from its arguments, so not carried over as extra state when rebuilding.
_REBUILT = frozenset({"message", "_source", "status_code", "error", "code", "request_id"})


def from_source(cls: type[E], message: str, source: _Source) -> E:
    """Make an SDK error whose ``request``/``response`` are built from ``source`` when read.

    The backends' answers and failures are such sources: an aiohttp answer has no
    ``httpx.Response`` until one is asked for. ``APIStatusError`` subclasses get their other
    fields with ``_set_fields``.

    Args:
        cls: the error class.
        message: the message.
        source: the answer or failure.

    Returns:
        The error, not raised.
    """
    error = cls.__new__(cls, message)
    AnimalStoreError.__init__(error, message)
    error.message = message
    error._source = source
    return error


def _rebuild(
    cls: type[APIError], message: str, keywords: dict[str, Any], extra: dict[str, Any]
) -> APIError:
    error = cls(message, **keywords)
    vars(error).update(extra)  # such as __notes__, or attributes an application added
    return error


def _without_headers(request: httpx.Request) -> httpx.Request:
    return httpx.Request(request.method, request.url)


def _safe_response(response: httpx.Response) -> httpx.Response:
    # Imported here: wire loads with the first client, not with the package.
    from animalstore_client._core.wire import response_view

    return response_view(
        response.status_code,
        response.headers.raw,
        response.content,
        _without_headers(response.request),
        {},
    )


def _one_line(text: str) -> str:
    """Fold what the server sent into one printable line, so it cannot forge log lines."""
    folded = " ".join(text.split())
    if folded.isprintable():
        return folded
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in folded)


class BadRequestError(APIStatusError):
    """400: the request body or a parameter was missing or invalid."""


class AuthenticationError(APIStatusError):
    """401: the API key is missing or invalid."""


class NotFoundError(APIStatusError):
    """404: the requested resource does not exist."""


class RateLimitError(APIStatusError):
    """429: too many requests; retried automatically, raised once retries are used up."""


class InternalServerError(APIStatusError):
    """Any 5xx (500 to 599): the service failed."""


_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    429: RateLimitError,
}


def status_error_class(status_code: int) -> type[APIStatusError]:
    """Return the ``APIStatusError`` subclass for a non-2xx status code.

    Args:
        status_code: any HTTP status code, standard or not.

    Returns:
        The subclass from the table; ``InternalServerError`` for any other 5xx;
        ``APIStatusError`` itself for anything else.
    """
    default = InternalServerError if 500 <= status_code <= 599 else APIStatusError
    return _STATUS_ERRORS.get(status_code, default)
