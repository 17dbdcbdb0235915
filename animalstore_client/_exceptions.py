"""The SDK's one exception hierarchy.

Every exception raised for an API call, or for data that does not fit the wire format, is an
``AnimalStoreError``::

    AnimalStoreError
    ├── WireFormatError                  Model.from_dict(bad data); also a ValueError
    └── APIError                         .request
        ├── APIConnectionError           no response (DNS, refused, reset)
        │   └── APITimeoutError
        ├── APIResponseValidationError   2xx whose body does not fit the schema
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

from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from animalstore_client._models import Error

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
    "status_error_class",
]


class AnimalStoreError(Exception):
    """Base class of every exception the SDK raises for an API call or for malformed data."""


class APIError(AnimalStoreError):
    """An API call failed.

    Attributes:
        message: what went wrong, in one line.
        request: the ``httpx.Request`` that was (or was to be) sent.
    """

    def __init__(self, message: str, *, request: httpx.Request) -> None:
        super().__init__(message)
        self.message: str = message
        self.request: httpx.Request = request

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
    """No response was received within the configured timeout."""


class APIResponseValidationError(APIError):
    """A 2xx response whose body does not fit the schema; the message names the bad field.

    Attributes:
        response: the ``httpx.Response`` whose body did not fit.
    """

    def __init__(self, message: str, *, response: httpx.Response) -> None:
        super().__init__(message, request=response.request)
        self.response: httpx.Response = response

    def _rebuild_keywords(self) -> dict[str, Any]:
        return {"response": _safe_response(self.response)}


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
        self.response: httpx.Response = response
        self.status_code: int = response.status_code
        self.error: Error | None = error
        self.code: str | None = error.code if error is not None else None
        self.request_id: str | None = response.headers.get("x-request-id")

    def _rebuild_keywords(self) -> dict[str, Any]:
        return {"response": _safe_response(self.response), "error": self.error}

    def __str__(self) -> str:
        code = f" {_one_line(self.code)}" if self.code is not None else ""
        request_id = f" (request id {_one_line(self.request_id)})" if self.request_id else ""
        return f"{self.status_code}{code}: {_one_line(self.message)}{request_id}"


#: What __init__ sets from its arguments, so not carried over as extra state when rebuilding.
_REBUILT = frozenset(
    {"message", "request", "response", "status_code", "error", "code", "request_id"}
)


def _rebuild(
    cls: type[APIError], message: str, keywords: dict[str, Any], extra: dict[str, Any]
) -> APIError:
    error = cls(message, **keywords)
    vars(error).update(extra)  # such as __notes__, or attributes an application added
    return error


def _without_headers(request: httpx.Request) -> httpx.Request:
    return httpx.Request(request.method, request.url)


def _safe_response(response: httpx.Response) -> httpx.Response:
    return httpx.Response(
        response.status_code,
        headers=response.headers,
        content=response.content,
        request=_without_headers(response.request),
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
