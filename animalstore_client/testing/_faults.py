"""Scripted faults for the fake store: what goes wrong, for which operation, how many times.

A :class:`Fault` is a plain value; :class:`FaultScript` is the store's thread-safe queue of
them; :class:`Plan` is what the store tells its adapters (the in-process transport and the
socket server) to do with one request: wait, answer, cut the body short or hang up. The
adapters only carry a plan out; every decision is made here and in the store.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Literal, Protocol, get_args

import attrs

from animalstore_client._core.operations import ENDPOINTS
from animalstore_client._core.safe_repr import tolerant_repr

__all__ = [
    "FAULT_HELP",
    "OPERATION_OF_ROUTE",
    "Fault",
    "FaultKind",
    "FaultScript",
    "OperationName",
    "Plan",
    "RawResponse",
]

RawResponse = tuple[int, list[tuple[str, str]], bytes]
"""A response as plain data: status code, header pairs, body bytes."""

FaultKind = Literal[
    "error", "delay", "drop_before", "drop_after", "not_json", "wrong_schema", "truncated"
]
"""What a fault does; see :class:`Fault`."""

OperationName = Literal["any", "list", "create", "get"]
"""Which requests a fault applies to: ``"list"`` (``GET /pets``), ``"create"``
(``POST /pets``), ``"get"`` (``GET /pets/{petId}``) or ``"any"`` (every request)."""

_KINDS: tuple[str, ...] = get_args(FaultKind)
#: The operation each route's "METHOD /template" is, as faults name it.
OPERATION_OF_ROUTE = {endpoint.name: endpoint.fault_name for endpoint in ENDPOINTS}
_OPERATIONS: tuple[str, ...] = ("any", *OPERATION_OF_ROUTE.values())

#: The help of ``--fault``, in both command lines (``animalstore mock-server`` and
#: ``python -m animalstore_client.testing``), from the kinds and operations above.
FAULT_HELP = (
    "misbehave on the next matching request, in order (repeatable): KIND[:ARG][,NAME=VALUE...] "
    "with KIND one of error:STATUS, delay:SECONDS, "
    f"{', '.join(kind.replace('_', '-') for kind in _KINDS if kind not in ('error', 'delay'))}; "
    f"NAME one of operation ({', '.join(name for name in _OPERATIONS if name != 'any')}, any), "
    "times (N or always; default 1), "
    "code, message, retry-after, header (NAME:VALUE), reset (yes/no). "
    "Example: --fault error:503,retry-after=1,times=2 --fault drop-after,operation=create"
)

#: The default ``code`` of an injected error, by status; other statuses get ``"error"``.
_DEFAULT_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    422: "unprocessable_entity",
    429: "rate_limited",
    500: "internal_error",
    502: "bad_gateway",
    503: "unavailable",
    504: "gateway_timeout",
}
#: Headers a fault may not set: they frame the message, which the store does.
_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
#: The body of a ``not_json`` answer: what a proxy's error page looks like.
NOT_JSON_BODY = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
#: The body of a ``wrong_schema`` answer: JSON, but neither a Pet, a list of them nor an Error.
WRONG_SCHEMA_BODY = b'{"id":"1","name":7,"categoryId":null}'
_ERROR_ONLY = ("status", "code", "message", "headers")
_MALFORMED = ("not_json", "wrong_schema", "truncated")


def _check_kind(instance: Fault, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}, got {value!r}")


def _check_operation(instance: Fault, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in _OPERATIONS:
        raise ValueError(f"operation must be one of {', '.join(_OPERATIONS)}, got {value!r}")


def _check_times(instance: Fault, attribute: attrs.Attribute[int | None], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"times must be an int or None, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"times must be at least 1 (None: until reset), got {value}")


def _check_seconds(instance: Fault, attribute: attrs.Attribute[float], value: object) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"seconds must be a number, got {type(value).__name__}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"seconds must be a finite number of seconds, 0 or more, got {value}")


def _headers(value: object) -> tuple[tuple[str, str], ...]:
    """Convert ``headers=`` (a mapping or pairs) into checked, lower-cased pairs."""
    items = value.items() if isinstance(value, Mapping) else value
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise TypeError(f"headers must be a mapping of str to str, got {type(value).__name__}")
    pairs: list[tuple[str, str]] = []
    for pair in items:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"headers must be a mapping of str to str, got item {pair!r}")
        name, text = pair
        if not isinstance(name, str) or not isinstance(text, str):
            raise TypeError(f"headers must map str to str, got {name!r}: {text!r}")
        if not _HEADER_NAME.fullmatch(name) or not _HEADER_VALUE.fullmatch(text):
            raise ValueError(f"headers: not a valid header line: {name!r}: {text!r}")
        if name.lower() in _FRAMING_HEADERS:
            raise ValueError(f"headers: {name} is set by the store, not by a fault")
        pairs.append((name.lower(), text))
    return tuple(pairs)


@tolerant_repr
@attrs.frozen
class Fault:
    """One scripted fault: what goes wrong, for which operation, and how many times.

    Make one with :meth:`error`, :meth:`delay`, :meth:`drop` (``drop_before``,
    ``drop_after``) or :meth:`malformed` (``not_json``, ``wrong_schema``, ``truncated``), or
    from the command line's text with :meth:`parse`, and hand it to
    ``FakeAnimalStore.inject``. Each constructor takes ``operation`` (``"list"``,
    ``"create"``, ``"get"`` or ``"any"``, the default) and ``times`` (how many matching
    requests it applies to, 1 by default; ``None``: every one until the store is reset).

    What each kind does to a request that reaches the store (it is recorded in
    ``store.requests`` whatever happens):

    * ``error``: answered with an Error body and ``status``, without being processed
      (nothing stored; not even the API key is checked, as when a gateway answers).
    * ``delay``: processed at once; its answer leaves ``seconds`` later. A client that gives up
      first (a timeout, a ``deadline=``) leaves the animal stored all the same.
    * ``drop_before``: the connection is dropped without an answer, the request unprocessed.
    * ``drop_after``: processed (an animal is stored), then the connection is dropped
      without an answer: the answer is lost.
    * ``not_json``, ``wrong_schema``: processed; the answer keeps its status and headers but its
      body is replaced by an HTML page, or by JSON that fits no schema of the API.
    * ``truncated``: processed; the answer announces its full ``Content-Length``, sends half the
      body and the connection is dropped.

    A dropped connection is a hang-up (the server closes it: "server disconnected") or, with
    ``reset=True``, a TCP reset ("connection reset by peer"). To a client the two drops look
    the same: nothing says whether the request was processed.

    Attributes:
        kind: one of ``error``, ``delay``, ``drop_before``, ``drop_after``, ``not_json``,
            ``wrong_schema``, ``truncated``.
        operation: the requests it applies to: ``list``, ``create``, ``get`` or ``any``.
        times: how many matching requests it applies to; ``None``: all, until reset.
        status: an ``error``'s HTTP status, 400 to 599.
        code: an ``error``'s ``code``.
        message: an ``error``'s ``message``.
        headers: extra headers on an ``error``'s answer (``retry-after``, ``deprecation``,
            ``sunset`` ...), lower-cased.
        seconds: a ``delay``'s length.
        reset: whether a drop is a TCP reset rather than a hang-up.

    Raises:
        TypeError: an argument of the wrong type, named.
        ValueError: an argument out of range (an unknown kind or operation, a status outside
            400 to 599, ``times`` below 1, a negative delay, a malformed header), named.
    """

    kind: FaultKind = attrs.field(validator=_check_kind)
    operation: OperationName = attrs.field(default="any", validator=_check_operation)
    times: int | None = attrs.field(default=1, validator=_check_times)  # type: ignore[arg-type]
    status: int | None = attrs.field(default=None)
    code: str | None = attrs.field(default=None)
    message: str | None = attrs.field(default=None)
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = attrs.field(default=0.0, validator=_check_seconds)
    reset: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def __attrs_post_init__(self) -> None:
        # Checked and lower-cased here, not by an attrs converter, which type checkers see as
        # a descriptor of its own.
        object.__setattr__(self, "headers", _headers(self.headers))
        if self.kind != "error":
            given = [name for name in _ERROR_ONLY if getattr(self, name) not in (None, ())]
            if given:
                raise ValueError(f"{given[0]} is only for an error fault, not {self.kind}")
            if self.kind != "delay" and self.seconds:
                raise ValueError(f"seconds is only for a delay fault, not {self.kind}")
            if self.reset and self.kind not in ("drop_before", "drop_after"):
                raise ValueError(f"reset is only for a drop fault, not {self.kind}")
            return
        status = self.status
        if not isinstance(status, int) or isinstance(status, bool):
            raise TypeError(f"status must be an int, got {type(status).__name__}")
        if not 400 <= status <= 599:
            raise ValueError(f"status must be an error status, 400 to 599, got {status}")
        for name in ("code", "message"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")
        # Filled in here so that the value says exactly what will be sent.
        if self.code is None:
            object.__setattr__(self, "code", _DEFAULT_CODES.get(status, "error"))
        if self.message is None:
            try:
                phrase = HTTPStatus(status).phrase
            except ValueError:  # a status Python does not name (599, say)
                phrase = ""
            object.__setattr__(self, "message", f"injected fault: {status} {phrase}".rstrip())

    # -- constructors, one per kind -------------------------------------------------------

    @classmethod
    def error(
        cls,
        status: int,
        code: str | None = None,
        message: str | None = None,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        operation: OperationName = "any",
        times: int | None = 1,
    ) -> Fault:
        """Answer with an Error body and ``status``, without processing the request.

        Args:
            status: the HTTP status, 400 to 599 (400, 401, 403, 404, 409, 422, 429, 500, 502,
                503, 504 ...).
            code: the Error's ``code``; by default one named after the status
                (``"unavailable"`` for 503, ``"rate_limited"`` for 429 ...).
            message: the Error's ``message``; by default ``"injected fault: 503 Service
                Unavailable"`` and the like.
            retry_after: seconds for a ``Retry-After`` header (``2``; ``0.05`` for a quick
                test, which a client waits as written only under ``retry_floor``: otherwise at
                least 0.3 s).
            headers: more headers for the answer (``{"Sunset": "..."}``); not the ones that
                frame the message (``Content-Length``, ``Transfer-Encoding``, ``Connection``).
            operation: the requests it applies to.
            times: how many of them; ``None``: every one until reset.

        Returns:
            The fault.

        Raises:
            TypeError: an argument of the wrong type.
            ValueError: a status outside 400 to 599, a negative ``retry_after``, a malformed
                header, a bad ``operation`` or ``times``.
        """
        extra = _headers(headers or {})
        if retry_after is not None:
            _check_retry_after(retry_after)
            extra = (("retry-after", f"{retry_after:g}"), *extra)
        return cls(
            "error",
            operation,
            times,
            status=status,
            code=code,
            message=message,
            headers=extra,
        )

    @classmethod
    def delay(
        cls, seconds: float, *, operation: OperationName = "any", times: int | None = 1
    ) -> Fault:
        """Process the request at once and send its answer ``seconds`` later.

        A client whose read timeout or ``deadline=`` runs out first raises
        ``APITimeoutError``; the request was processed all the same.

        Args:
            seconds: how long the answer waits, 0 or more.
            operation: the requests it delays (``"any"``: all).
            times: how many matching requests it delays; ``None``: all, until reset.

        Returns:
            The fault, for ``FakeAnimalStore.inject``.

        Raises:
            TypeError: ``seconds`` is not a number (or ``times`` not an int).
            ValueError: ``seconds`` is negative or not finite; a bad ``operation`` or ``times``.
        """
        return cls("delay", operation, times, seconds=seconds)

    @classmethod
    def drop(
        cls,
        *,
        processed: bool,
        reset: bool = False,
        operation: OperationName = "any",
        times: int | None = 1,
    ) -> Fault:
        """Drop the connection without answering, before or after processing the request.

        ``processed=False`` is a ``drop_before`` fault: nothing is stored. ``processed=True``
        is a ``drop_after`` one: the request is processed (a create stores its animal) and
        the answer is lost.

        Args:
            processed: whether the store processes the request before the drop.
            reset: a TCP reset rather than a hang-up.
            operation: the requests it applies to.
            times: how many of them; ``None``: every one until reset.

        Returns:
            The fault.

        Raises:
            TypeError: ``processed`` or ``reset`` is not a bool, or ``times`` not an int.
            ValueError: a bad ``operation`` or ``times``.
        """
        if not isinstance(processed, bool):
            raise TypeError(f"processed must be a bool, got {type(processed).__name__}")
        return cls("drop_after" if processed else "drop_before", operation, times, reset=reset)

    @classmethod
    def malformed(
        cls,
        kind: Literal["not_json", "wrong_schema", "truncated"],
        *,
        operation: OperationName = "any",
        times: int | None = 1,
    ) -> Fault:
        """Process the request, then answer with a broken body.

        ``"not_json"``: the answer's status and headers, an HTML page as its body.
        ``"wrong_schema"``: JSON that fits no schema of the API. ``"truncated"``: the full
        ``Content-Length``, half the body, then a hang-up.

        Args:
            kind: ``"not_json"``, ``"wrong_schema"`` or ``"truncated"``.
            operation: the requests it applies to.
            times: how many of them; ``None``: every one until reset.

        Returns:
            The fault.

        Raises:
            TypeError: ``times`` is not an int.
            ValueError: another ``kind``; a bad ``operation`` or ``times``.
        """
        if kind not in _MALFORMED:
            raise ValueError(f"kind must be one of {', '.join(_MALFORMED)}, got {kind!r}")
        return cls(kind, operation, times)

    @classmethod
    def parse(cls, text: str) -> Fault:
        """Read a fault written as on the command line (``animalstore mock-server --fault``).

        The form is ``KIND[:ARGUMENT][,NAME=VALUE ...]``: the kind (``-`` or ``_`` alike), the
        status of an ``error`` or the seconds of a ``delay``, then the keyword arguments of
        the kind's constructor. ``times=always`` is ``times=None``; ``header=NAME:VALUE`` adds
        a header (repeatable); ``reset=yes`` or ``reset=no``. Examples::

            error:503
            error:429,retry-after=1,times=3
            error:400,code=invalid_field,message=name is required,operation=create
            error:410,header=Sunset:Thu, 05 Dec 2030 00:00:00 GMT
            delay:2.5,operation=list,times=always
            drop-after,operation=create,reset=yes
            not-json
            wrong-schema,operation=get
            truncated

        Args:
            text: the fault.

        Returns:
            The fault.

        Raises:
            TypeError: ``text`` is not a str.
            ValueError: ``text`` is not a fault, saying what is wrong.
        """
        if not isinstance(text, str):
            raise TypeError(f"a fault must be given as a str, got {type(text).__name__}")
        head, *options = _OPTION_SEPARATOR.split(text.strip())
        kind, _, argument = head.partition(":")
        kind = kind.strip().replace("-", "_")
        if kind not in _KINDS:
            raise ValueError(f"unknown fault {kind!r} in {text!r}; known: {', '.join(_KINDS)}")
        fields: dict[str, object] = {}
        headers: list[tuple[str, str]] = []
        if argument:
            if kind not in ("error", "delay"):
                raise ValueError(f"{kind} takes no ':' argument, in {text!r}")
            fields["status" if kind == "error" else "seconds"] = argument
        elif kind in ("error", "delay"):
            example = "error:503" if kind == "error" else "delay:2"
            raise ValueError(f"{kind} needs its argument ({example}), in {text!r}")
        for option in options:
            name, _, value = option.partition("=")
            name = name.strip().replace("-", "_")
            if name == "header":
                header, _, header_value = value.partition(":")
                headers.append((header.strip(), header_value.strip()))
            else:
                fields[name] = value.strip()
        return cls._from_text(kind, fields, headers, text)

    @classmethod
    def _from_text(
        cls, kind: str, fields: dict[str, object], headers: list[tuple[str, str]], text: str
    ) -> Fault:
        try:
            for name, convert in _CONVERTERS.items():
                if name in fields:
                    fields[name] = convert(str(fields[name]))
        except ValueError as error:
            raise ValueError(f"{error}, in {text!r}") from None
        retry_after = fields.pop("retry_after", None)
        if retry_after is not None:
            if kind != "error":
                raise ValueError(f"retry_after is only for an error fault, in {text!r}")
            headers.insert(0, ("retry-after", f"{retry_after:g}"))
        if headers:
            fields["headers"] = headers
        try:
            return cls(kind, **fields)  # type: ignore[arg-type]
        except TypeError as error:
            # An unknown option name: attrs says "unexpected keyword argument 'x'".
            raise ValueError(f"{error}, in {text!r}") from None

    # -- what it does, in words -----------------------------------------------------------

    def describe(self) -> str:
        """Say in one line what this fault does, as ``animalstore mock-server`` prints it.

        Returns:
            For example ``"the next 2 create requests: answer 503 unavailable, Retry-After:
            1"``.
        """
        requests = "request" if self.operation == "any" else f"{self.operation} request"
        if self.times is None:
            scope = f"every {requests}, until reset"
        elif self.times == 1:
            scope = f"the next {requests}"
        else:
            scope = f"the next {self.times} {requests}s"
        return f"{scope}: {_ACTIONS[self.kind](self)}"


def _describe_error(fault: Fault) -> str:
    extra = "".join(f", {name}: {value}" for name, value in fault.headers)
    return f"answer {fault.status} {fault.code} ({fault.message!r}){extra}, unprocessed"


def _drop(fault: Fault) -> str:
    return "reset the connection" if fault.reset else "hang up"


_ACTIONS: dict[str, Callable[[Fault], str]] = {
    "error": _describe_error,
    "delay": lambda fault: f"process it, answer {fault.seconds:g} s late",
    "drop_before": lambda fault: f"{_drop(fault)} without processing it",
    "drop_after": lambda fault: f"process it, then {_drop(fault)} without answering",
    "not_json": lambda fault: "process it, answer with an HTML body instead of JSON",
    "wrong_schema": lambda fault: "process it, answer with JSON that fits no schema",
    "truncated": lambda fault: "process it, send half the body, then hang up",
}

#: Splits a fault's text at each ",NAME=" of a known option, so a header's value may hold
#: commas (an HTTP date does).
_OPTION_SEPARATOR = re.compile(
    r",(?=\s*(?:code|message|retry[-_]after|header|operation|times|reset|seconds|status)\s*=)"
)


def _check_retry_after(value: object) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"retry_after must be a number of seconds, got {type(value).__name__}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"retry_after must be 0 or more seconds, got {value}")


def _number(name: str, convert: type[int] | type[float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            return convert(text)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {text!r}") from None

    return parse


def _times(text: str) -> int | None:
    if text == "always":
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"times must be a number or 'always', got {text!r}") from None


def _yes_no(text: str) -> bool:
    if text.lower() not in ("yes", "no", "true", "false"):
        raise ValueError(f"reset must be yes or no, got {text!r}")
    return text.lower() in ("yes", "true")


def _retry_after(text: str) -> float:
    seconds = _number("retry_after", float)(text)
    _check_retry_after(seconds)
    return seconds


_CONVERTERS: dict[str, Callable[[str], object]] = {
    "status": _number("status", int),
    "seconds": _number("seconds", float),
    "times": _times,
    "reset": _yes_no,
    "retry_after": _retry_after,
}


@tolerant_repr
@attrs.frozen
class Plan:
    """What an adapter does with one request, as the store decided.

    Attributes:
        response: the answer to send; ``None``: drop the connection without answering.
        delay: seconds to wait before sending it.
        reset: drop the connection with a TCP reset, not a hang-up.
        truncate: send the headers and half the body, then hang up.
    """

    response: RawResponse | None
    delay: float = 0.0
    reset: bool = False
    truncate: bool = False


class Answering(Protocol):
    """What the adapters (``FakeTransport``, the socket server) need of a ``FakeAnimalStore``.

    Declared here, beside ``Plan``, so that neither adapter imports the store, which imports
    them.
    """

    def _exchange(
        self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes
    ) -> Plan: ...

    def _protocol_error(self, status: int, message: str) -> RawResponse: ...


class FaultScript:
    """The store's scripted faults, in order, consumed by matching requests; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[Fault] = []

    def add(self, faults: tuple[Fault, ...]) -> None:
        """Append ``faults`` to the script, in order."""
        for fault in faults:
            if not isinstance(fault, Fault):
                raise TypeError(f"faults must be Fault values, got {type(fault).__name__}")
        with self._lock:
            self._pending.extend(faults)

    def clear(self) -> None:
        """Drop every pending fault."""
        with self._lock:
            self._pending.clear()

    def pending(self) -> list[Fault]:
        """Return the faults still to apply, in order, each ``times`` what is left of it."""
        with self._lock:
            return list(self._pending)

    def take(self, operation: str | None) -> Fault | None:
        """Consume one use of the first fault that applies to ``operation``, if any.

        Args:
            operation: ``list``, ``create``, ``get``, or ``None`` for a request that is none
                of them (an unknown path), which only ``any`` faults apply to.
        """
        with self._lock:
            for index, fault in enumerate(self._pending):
                if fault.operation in ("any", operation):
                    if fault.times is None:
                        return fault
                    if fault.times == 1:
                        del self._pending[index]
                    else:
                        self._pending[index] = attrs.evolve(fault, times=fault.times - 1)
                    return fault
        return None


def malformed_body(fault: Fault, response: RawResponse) -> RawResponse:
    """Replace the body of ``response`` as a ``not_json`` or ``wrong_schema`` fault says."""
    status, headers, _ = response
    body = NOT_JSON_BODY if fault.kind == "not_json" else WRONG_SCHEMA_BODY
    kept = [(name, value) for name, value in headers if name != "content-length"]
    return status, [*kept, ("content-length", str(len(body)))], body


def error_body(fault: Fault) -> bytes:
    """Return the Error body of an ``error`` fault."""
    payload = {"code": fault.code, "message": fault.message, "status": fault.status}
    return json.dumps(payload, separators=(",", ":")).encode()
