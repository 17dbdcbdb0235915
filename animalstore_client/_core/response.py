"""Turning what came back (an ``Answer`` or a ``SendFailure``) into a result or an SDK error."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

import attrs
import httpx

from animalstore_client._core.converter import WireFormatError, structure
from animalstore_client._core.deprecation import deprecation_date, sunset_date
from animalstore_client._core.exceptions import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    ResponseTooLargeError,
    from_source,
    status_error_class,
)
from animalstore_client._core.models import Error
from animalstore_client._core.safe_repr import tolerant_repr

if TYPE_CHECKING:
    from animalstore_client._core.wire import Answer, Request, SendFailure

__all__ = ["APIResponse", "connection_error", "parse_body", "status_error"]

T = TypeVar("T")
#: Redacts the client's key from a message. A function, not the key: the key passed as an
#: argument would sit in the frame of a function that raises, which a traceback formatted with
#: its locals shows.
Scrub = Callable[[str], str]

_EXCERPT_CHARS = 300
_UNPARSED = object()


def _decoded_json(answer: Answer) -> object:
    """Decode the body as JSON, whatever ``Content-Type`` says.

    Raises:
        ValueError: the body is not JSON (``RecursionError`` for absurd nesting included).
    """
    try:
        return json.loads(answer.content)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _excerpt(answer: Answer) -> str:
    """Return the start of the body on one line, or the reason phrase if it is empty."""
    # Read as UTF-8, not in the charset the server names: `response.text` fails outright on
    # charsets such as rot13, hex or idna, and the API's bodies are JSON, which is UTF-8.
    content = answer.content
    head = content[: _EXCERPT_CHARS * 4].decode("utf-8", "replace")
    text = " ".join(head[:_EXCERPT_CHARS].split())
    if len(head) > _EXCERPT_CHARS or len(content) > _EXCERPT_CHARS * 4:
        text += " ..."
    return text or answer.reason_phrase() or "(empty body)"


class _Answer(Protocol):
    """What an ``APIResponse`` reads of the core's ``Answer``.

    Named here so that the public constructor's annotations resolve at run time without
    importing the wire module, which loads with the first client.
    """

    status_code: int
    content: bytes
    headers: Mapping[str, str]

    def http_response(self) -> httpx.Response:
        """Return the answer as an ``httpx.Response``."""
        ...

    def http_headers(self) -> httpx.Headers:
        """Return the answer's headers as ``httpx.Headers``."""
        ...


@tolerant_repr
class APIResponse(Generic[T]):
    """A successful (2xx) response, parsed into its result on demand.

    Returned by ``client.with_raw_response.<method>(...)``; not meant to be built by users.
    Besides the status and headers, it exposes the service's deprecation signals:
    ``deprecation`` and ``sunset``. ``http_response`` is httpx's own response when httpx read
    it in full; on every other backend (httpx2 and aiohttp included) and for a body read in
    capped pieces, it is an ``httpx.Response`` built when first read, as is ``headers``;
    ``status_code``, ``content`` and ``parse()`` never need them.

    It pickles and copies without the API key: the copy's request keeps its method and URL,
    not its headers, as a pickled exception's does (httpx's own response, whose request holds
    the key, stays behind; the copy's ``http_response`` is a view).

    Args:
        answer: the backend's answer.
        result_type: the type ``parse()`` structures the body into (``Pet``, ``list[Pet]``).
        retries_taken: how many retries it took to get this response.
        scrub: redacts the client's key from the message of a body that does not parse.

    Attributes:
        status_code: the HTTP status code.
        content: the body, decoded from its ``Content-Encoding``.
        retries_taken: how many retries it took to get this response.
    """

    __slots__ = (
        "_answer",
        "_parsed",
        "_result_type",
        "_scrub",
        "content",
        "retries_taken",
        "status_code",
    )

    def __init__(
        self, answer: _Answer, result_type: Any, retries_taken: int, scrub: Scrub | None = None
    ) -> None:
        self._answer = answer
        self._scrub = scrub
        self.status_code: int = answer.status_code
        self.content: bytes = answer.content
        self.retries_taken: int = retries_taken
        self._result_type = result_type
        self._parsed: object = _UNPARSED

    @property
    def http_response(self) -> httpx.Response:
        """The ``httpx.Response`` (on other backends, a view built when first read)."""
        return self._answer.http_response()

    @property
    def headers(self) -> httpx.Headers:
        """The response headers."""
        return self._answer.http_headers()

    @property
    def request_id(self) -> str | None:
        """The ``x-request-id`` response header, when present."""
        return self._answer.headers.get("x-request-id")

    @property
    def deprecation(self) -> datetime | None:
        """When the service deprecated the operation (``Deprecation`` header, RFC 9745).

        Timezone-aware, in UTC; it may lie in the future, when the deprecation takes effect.
        ``None`` when the header is absent or malformed (a malformed one is logged at DEBUG),
        and for the earlier drafts' ``Deprecation: true``, which gives no date: the call warns
        all the same, and ``headers["deprecation"]`` shows what was sent.
        """
        return deprecation_date(self._answer.headers)

    @property
    def sunset(self) -> datetime | None:
        """When the service will stop serving the operation (``Sunset`` header, RFC 8594).

        Timezone-aware, in UTC. ``None`` when the header is absent or malformed (a malformed
        one is logged at DEBUG).
        """
        return sunset_date(self._answer.headers)

    def parse(self) -> T:
        """Return the body structured into the operation's result type; parsed once, then cached.

        Returns:
            The result the plain method would have returned (``Pet``, ``list[Pet]``).

        Raises:
            APIResponseValidationError: the body is not JSON or does not fit the schema; the
                message names the bad field.
        """
        if self._parsed is _UNPARSED:
            # Only the SDK builds one, from an Answer.
            answer = cast("Answer", self._answer)
            self._parsed = parse_body(answer, self._result_type, self._scrub)
        return self._parsed  # type: ignore[return-value]

    def __reduce__(self) -> tuple[object, ...]:
        # For pickle and copy: the answer pickles without the key (``Answer.__reduce__``), and
        # the copy parses again when asked.
        return type(self), (self._answer, self._result_type, self.retries_taken)

    def __repr__(self) -> str:
        return f"<APIResponse [{self.status_code}]>"


def parse_body(answer: Answer, result_type: Any, scrub: Scrub | None = None) -> Any:
    """Structure a successful answer's JSON body into ``result_type``.

    Args:
        answer: the 2xx answer.
        result_type: the operation's result type (``Pet``, ``list[Pet]``); ``None`` for an
            operation whose answer has no body (a 204), whatever came.
        scrub: redacts the client's key from the message, which quotes the body; ``None``
            when the key is not known.

    Returns:
        The structured result; ``None`` when ``result_type`` is.

    Raises:
        APIResponseValidationError: the body is not JSON or does not fit the schema; the
            message names the bad field.
    """
    if result_type is None:
        return None
    try:
        return structure(_decoded_json(answer), result_type)
    except WireFormatError as exc:
        problem = f"response body does not fit the schema: {exc}"
    except ValueError as exc:
        problem = f"response body is not valid JSON: {exc}"
    if scrub is not None:
        problem = scrub(problem)
    # Raised outside the handler: the error chains nothing.
    raise from_source(APIResponseValidationError, problem, answer.recorded())


def status_error(answer: Answer, base_url: str = "", scrub: Scrub | None = None) -> APIStatusError:
    """Build the exception for a non-2xx answer, whatever its body.

    An Error body gives ``code``, ``message`` and ``error``; any other body (an HTML page from a
    proxy, nothing, broken JSON) gives a message made from its first few hundred characters.
    A 404 to a client whose ``base_url`` does not end in ``/v1`` says so: the likely cause.

    Args:
        answer: the non-2xx answer.
        base_url: the client's ``base_url``.
        scrub: redacts the client's key from what the server said (the message, the Error
            body's ``code`` and ``message``, the request id); ``None`` when the key is not
            known.

    Returns:
        An instance of the subclass the status maps to.
    """
    try:
        error: Error | None = structure(_decoded_json(answer), Error)
    except ValueError:
        error = None
    request_id = answer.headers.get("x-request-id")
    if scrub is not None:
        if error is not None:
            error = attrs.evolve(error, code=scrub(error.code), message=scrub(error.message))
        request_id = None if request_id is None else scrub(request_id)
    message = error.message if error is not None else _excerpt(answer)
    if scrub is not None:
        message = scrub(message)
    if answer.status_code == 404 and base_url and not base_url.rstrip("/").endswith("/v1"):
        message += f" (base_url {base_url!r} does not end in /v1, as the API's address does)"
    exception = from_source(status_error_class(answer.status_code), message, answer.recorded())
    exception._set_fields(answer.status_code, request_id, error)
    return exception


#: How a create that may have been processed ends its message: advice for Python callers, which
#: the command line replaces with its own.
IDEMPOTENCY_ADVICE = "; pass idempotency_key= to make retries safe"
#: What the caller needs to know of a call that got no answer, by how far its last attempt got
#: (the ``Failure``'s name: ``wire`` loads with the first client, not with the package) and
#: whether the call is idempotent: whether it may have done anything, and what to do. The one
#: call that is not idempotent is ``create_pet``.
_CONSEQUENCES: dict[tuple[str, bool], str] = {
    ("MAYBE_SENT", False): (
        "; the animal may have been created; not retried, as a create is retried only when it "
        "provably was not processed" + IDEMPOTENCY_ADVICE
    ),
    ("NOT_SENT", False): (
        "; not sent, so the animal was not created: the request provably never reached the "
        "service, and calling again is safe"
    ),
    ("NOT_SENT", True): (
        "; not sent: the request provably never reached the service, and calling again is safe"
    ),
}


def connection_error(failure: SendFailure, request: Request, *, idempotent: bool) -> APIError:
    """Build the exception for an attempt that got no usable answer.

    The message says what happened and, when known, whether the call may have done anything:
    a create whose request may have reached the service may have created the animal, and a
    call that provably was not sent did nothing.

    Args:
        failure: what the backend made of its library's error.
        request: the request that was being sent.
        idempotent: whether sending the request twice is harmless (every method but ``POST``).

    Returns:
        A ``ResponseTooLargeError`` for an answer past the size cap, an ``APITimeoutError``
        for a timeout (the deadline's included), else an ``APIConnectionError``.
    """
    kind: type[APIError]
    if failure.failure.name == "TOO_LARGE":
        kind = ResponseTooLargeError
    else:
        kind = APITimeoutError if failure.timeout else APIConnectionError
    consequence = _CONSEQUENCES.get((failure.failure.name, idempotent), "")
    return from_source(
        kind,
        f"{request.method} {request.full_url} failed: {failure.detail}{consequence}",
        failure,
    )
