"""Client configuration: environments, and one validated, immutable set of options.

The options come from the constructor's arguments and, where those are silent, from the
environment variables.
"""

from __future__ import annotations

import enum
import math
import os
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal, Protocol

import attrs
import httpx
from attrs import field, frozen

from animalstore_client._core.retry_policy import (
    DEFAULT_RETRY,
    RetryPolicy,
    check_retry,
)
from animalstore_client._core.safe_repr import tolerant_repr
from animalstore_client._core.types import NOT_GIVEN, NotGiven
from animalstore_client._core.validation import check_enum, check_int, check_str, is_real
from animalstore_client._version import __version__


class TimeoutLike(Protocol):
    """A timeout with the four phases of httpx's: an ``httpx.Timeout`` or an ``httpx2.Timeout``.

    Each phase is in seconds, ``None`` for no limit: to connect, to wait for each piece of the
    answer, to send each piece of the request, and to wait for a connection from the pool.
    """

    connect: float | None
    read: float | None
    write: float | None
    pool: float | None


class TracerProviderLike(Protocol):
    """What ``tracing=`` takes besides a bool: an OpenTelemetry ``TracerProvider``.

    Any object with OpenTelemetry's ``get_tracer`` will do (the SDK's ``TracerProvider``, the
    API's ``NoOpTracerProvider``, a vendor's).
    """

    def get_tracer(
        self, instrumenting_module_name: str, instrumenting_library_version: str | None = None
    ) -> Any:
        """Return the tracer that makes the SDK's spans, named after the SDK and its version."""


class Environment(str, enum.Enum):
    """A deployment of the API; its address is in ``BASE_URLS``."""

    PRODUCTION = "production"
    STAGING = "staging"

    def __str__(self) -> str:
        return self.value


#: The address of each environment. The spec does not give them: deployments override them
#: with ``base_url=`` or ``ANIMALSTORE_BASE_URL``.
BASE_URLS: Mapping[Environment, str] = MappingProxyType(
    {
        Environment.PRODUCTION: "https://api.animalstore.example/v1",
        Environment.STAGING: "https://staging.api.animalstore.example/v1",
    }
)

#: Per attempt: 5 s to connect, 30 s for each of write, read and pool.
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
#: Up to 100 connections, all of them kept open between calls for up to 5 s. httpx's own
#: default keeps only 20 of its 100 open: after every burst it would close 80 connections and
#: open them again for the next one.
DEFAULT_CONNECTION_LIMITS = httpx.Limits(
    max_connections=100, max_keepalive_connections=100, keepalive_expiry=5.0
)
_MAX_TIMEOUT = 1e9
#: The most an answer's body may hold once decoded: the API's largest legitimate answer (100
#: animals) is tens of kilobytes, and a decompression bomb must not cost gigabytes.
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024

# The patterns are compiled at their first use (by re, which keeps them), not at import.
#: RFC 9110 "token": what a header name may be made of.
_HEADER_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
#: What would end a header line early and let the rest be read as another header.
_FORBIDDEN_IN_HEADER_VALUE = r"[\r\n\x00]"
#: Headers the SDK sets itself (lower-case name -> the argument that sets them): a user's own
#: value would silently lose to the SDK's, so it is refused instead.
RESERVED_HEADERS: Mapping[str, str] = MappingProxyType(
    {"authorization": "api_key=", "idempotency-key": "idempotency_key= to create_pet"}
)
#: Headers that frame the body, which httpx computes from it: a stale value would make the HTTP
#: library itself fail (h11 refuses to send more or less than the Content-Length it was given).
_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding"})

API_KEY_VARIABLE = "ANIMALSTORE_API_KEY"
BASE_URL_VARIABLE = "ANIMALSTORE_BASE_URL"
TRACING_VARIABLE = "ANIMALSTORE_TRACING"
#: What ``ANIMALSTORE_TRACING`` holds to turn tracing on, in any case; anything else leaves it off.
_TRACING_ON = frozenset({"1", "true", "yes"})

#: What ``tracing=`` resolves to: ``None`` (off), ``True`` (the global tracer provider, read at
#: each call) or the user's provider. Kept as given so that a pickled client can send ``True``
#: and refuse a provider, which does not pickle.
Tracing = Literal[True] | TracerProviderLike | None


#: What ``api_key=`` may also be: a function called for a key whenever a call needs one.
KeyProvider = Callable[[], str]


@tolerant_repr
# Nothing compares options: no __eq__ to build at import; tolerant_repr writes the repr.
@frozen(eq=False, repr=False)
class ClientOptions:
    """Everything a client needs to build requests, validated once at construction."""

    #: The key; ``None`` when ``key_provider`` gives one for each call.
    api_key: str | None = field(repr=False)
    base_url: str
    timeout: httpx.Timeout
    retry: RetryPolicy
    default_headers: Mapping[str, str] = field(repr=False)
    max_response_bytes: int | None
    deadline: float | None
    #: The headers sent on every request, Authorization included unless a key provider gives
    #: the key. A plain dict, never mutated: httpx copies a dict faster than any other mapping.
    headers: dict[str, str] = field(repr=False)
    #: Called for the key of each call; ``None`` when ``api_key`` is the key.
    key_provider: KeyProvider | None = field(default=None, repr=False)
    #: ``timeout`` as the request extension httpx reads, computed once.
    timeout_extension: dict[str, float | None] = field(init=False, repr=False)
    #: ``None`` (off), ``True`` (the global tracer provider) or a tracer provider.
    tracing: Tracing = field(default=None, repr=False)
    #: The middleware handlers, the first the outermost (checked by the client, which knows
    #: whether they must be coroutine functions).
    middleware: tuple[Callable[..., Any], ...] = ()

    @timeout_extension.default
    def _timeout_extension(self) -> dict[str, float | None]:
        return self.timeout.as_dict()

    def call_key(self) -> tuple[str, dict[str, str]]:
        """Return the key for a call and the headers that carry it.

        The key provider is called when there is one; its answer is checked as ``api_key``
        is, before anything is sent.

        Raises:
            TypeError: the provider returned something other than a ``str``.
            ValueError: the provider returned an unusable key, or (a client unpickled where
                no key was given) no key is in the environment.
            Exception: whatever the provider raised, as it raised it.
        """
        if self.api_key is not None:
            return self.api_key, self.headers
        assert self.key_provider is not None, "a client has a key or a key provider"
        key = _checked_key(self.key_provider(), "the api_key provider's key")
        return key, {**self.headers, "authorization": f"Bearer {key}"}


class EnvironmentKey:
    """The key provider of a client unpickled without one: ``ANIMALSTORE_API_KEY``, per call.

    A pickled client carries its settings, never its key: in the process that unpickles it,
    the key comes from this variable (read for each call, so that a new value is used from
    the next call on) unless the client was built with a key provider of its own.
    """

    __slots__ = ()

    def __call__(self) -> str:
        """Return the variable's value.

        Raises:
            ValueError: the variable is not set (or empty) in this process.
        """
        key = os.environ.get(API_KEY_VARIABLE)
        if not key:
            raise ValueError(
                f"no API key in this process: a pickled client carries no key; set "
                f"{API_KEY_VARIABLE} here, or build the client with api_key= a function that "
                "returns the key"
            )
        return key


def _api_key(api_key: object, environ: Mapping[str, str]) -> str | None:
    """Return the key ``api_key`` or the environment gives; ``None`` for a key provider."""
    if callable(api_key):
        return None
    if api_key is None:
        api_key = environ.get(API_KEY_VARIABLE) or None
        if api_key is None:
            raise ValueError(f"no API key: pass api_key= or set the {API_KEY_VARIABLE} variable")
        return _checked_key(api_key, API_KEY_VARIABLE)
    if not isinstance(api_key, str):
        raise TypeError(
            f"api_key must be a str or a function that returns one, got {type(api_key).__name__}"
        )
    return _checked_key(api_key, "api_key")


def _checked_key(api_key: object, source: str) -> str:
    # No message here echoes the key: it would end up in logs and tracebacks.
    if not isinstance(api_key, str):
        raise TypeError(f"{source} must be a str, got {type(api_key).__name__}")
    if not api_key or not api_key.isascii() or not api_key.isprintable() or " " in api_key:
        raise ValueError(f"{source} must be non-empty printable ASCII without whitespace")
    return api_key


def _base_url(environment: object, base_url: object, environ: Mapping[str, str]) -> tuple[str, str]:
    """Return the address and the name of where it came from, first match wins."""
    if base_url is not None and environment is not None:
        raise ValueError("pass either environment= or base_url=, not both")
    if base_url is not None:
        if not isinstance(base_url, (str, httpx.URL)):
            raise TypeError(f"base_url must be a str or httpx.URL, got {type(base_url).__name__}")
        return str(base_url), "base_url"
    if environment is not None:
        return BASE_URLS[check_enum("environment", environment, Environment)], "environment"
    if environ.get(BASE_URL_VARIABLE):
        return environ[BASE_URL_VARIABLE], BASE_URL_VARIABLE
    return BASE_URLS[Environment.PRODUCTION], "environment"


def _shown_url(url: str) -> str:
    """Return ``url`` for an error message, with anything that may be credentials masked.

    All that stands before its last "@": a URL malformed enough to be refused may hold
    credentials where no parser would look for them ("user:password@host/v1", a third slash
    after the scheme, a "/" in an unencoded password).
    """
    _, at, rest = url.rpartition("@")
    return f"***@{rest}" if at else url


def _normalized_url(url: str, source: str) -> str:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValueError(f"{source} is not a valid URL: {exc}") from None
    if parsed.userinfo:
        # Not shown: it holds a password. httpx would send it as Basic auth, in place of the key.
        raise ValueError(
            f"{source} must not contain credentials (user:password@); pass the key as api_key="
        )
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"{source} must be an absolute http(s) URL, got {_shown_url(url)!r}")
    if parsed.query or parsed.fragment:
        raise ValueError(f"{source} must not have a query or fragment, got {_shown_url(url)!r}")
    # A trailing slash, so that relative operation paths ("pets") append to the `/v1` path
    # instead of replacing it.
    return str(parsed.copy_with(path=parsed.path.rstrip("/") + "/"))


def check_timeout(timeout: object) -> httpx.Timeout:
    """Return ``timeout`` as an ``httpx.Timeout``: seconds for every phase, ``None`` for no limit.

    Raises:
        TypeError: ``timeout`` is not a real number (numpy's included), ``None`` or a
            ``TimeoutLike`` (``httpx.Timeout``, ``httpx2.Timeout``).
        ValueError: a phase is not positive, or is too large for a socket.
    """
    if timeout is None:
        return httpx.Timeout(None)
    phases = ("connect", "read", "write", "pool")
    given = all(hasattr(timeout, phase) for phase in phases)
    if isinstance(timeout, httpx.Timeout):
        resolved = timeout
    elif given:  # httpx2's: another class with the same phases
        resolved = httpx.Timeout(**{phase: getattr(timeout, phase) for phase in phases})
    elif isinstance(timeout, bool) or not is_real(timeout):
        raise TypeError(
            "timeout must be a number of seconds, None or an httpx.Timeout, "
            f"got {type(timeout).__name__}"
        )
    else:
        try:
            resolved = httpx.Timeout(float(timeout))  # type: ignore[arg-type]
        except OverflowError:  # an int too large for a float
            raise ValueError(
                f"timeout must be at most {_MAX_TIMEOUT:g} seconds, got a larger number"
            ) from None
    # Every phase, however given: sockets overflow a little above 9.2e9 seconds, and infinity,
    # NaN or a negative value would fail only when sent. None (no limit) is httpx's own choice.
    for phase, seconds in resolved.as_dict().items():
        if seconds is not None and not 0 < seconds <= _MAX_TIMEOUT:
            where = f"timeout ({phase})" if given else "timeout"
            raise ValueError(
                f"{where} must be positive and at most {_MAX_TIMEOUT:g} seconds, got {seconds}"
            )
    return resolved


def check_deadline(argument: str, deadline: object) -> float | None:
    """Return a deadline in seconds as a ``float``; ``None`` (no deadline) stays ``None``.

    Args:
        argument: the argument's name, for the error messages.
        deadline: seconds for a whole call, retries and waits included, or ``None``.

    Raises:
        TypeError: ``deadline`` is not a real number or ``None``.
        ValueError: ``deadline`` is not positive, or is not finite or above 1e9 seconds.
    """
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not is_real(deadline):
        raise TypeError(
            f"{argument} must be a number of seconds or None, got {type(deadline).__name__}"
        )
    try:
        seconds = float(deadline)  # type: ignore[arg-type]
    except OverflowError:  # an int too large for a float
        seconds = math.inf
    if not 0 < seconds <= _MAX_TIMEOUT:
        raise ValueError(
            f"{argument} must be positive and at most {_MAX_TIMEOUT:g} seconds, got {seconds}"
        )
    return seconds


def check_tracing(tracing: object, environ: Mapping[str, str]) -> Tracing:
    """Return what ``tracing=`` asks for: ``None`` (off), ``True`` or a tracer provider.

    Args:
        tracing: ``True``, ``False``, a tracer provider, or ``None`` to read
            ``ANIMALSTORE_TRACING`` (on when ``1``, ``true`` or ``yes``, in any case).
        environ: the variables to read.

    Raises:
        TypeError: ``tracing`` is not a bool, ``None`` or an object with ``get_tracer``.
        ImportError: tracing is on and OpenTelemetry's API is not installed.
    """
    if tracing is None:
        if environ.get(TRACING_VARIABLE, "").strip().lower() not in _TRACING_ON:
            return None
        tracing = True
    if tracing is False:
        return None
    if tracing is not True and (
        isinstance(tracing, (bool, type)) or not hasattr(tracing, "get_tracer")
    ):
        got = (
            f"the class {tracing.__name__} (pass an instance)"
            if isinstance(tracing, type)
            else type(tracing).__name__
        )
        raise TypeError(
            f"tracing must be a bool, None or an OpenTelemetry TracerProvider, got {got}"
        )
    try:
        import opentelemetry.trace  # noqa: F401  (imported only once tracing is on)
    except ImportError:
        raise ImportError(
            "tracing needs OpenTelemetry's API, which is not installed: "
            "pip install 'animalstore-client[tracing]'"
        ) from None
    return tracing


def check_max_response_bytes(value: object) -> int | None:
    """Return a body size cap in bytes; ``None`` (no cap) stays ``None``.

    Raises:
        TypeError: ``value`` is not an int or ``None``.
        ValueError: ``value`` is less than 1.
    """
    if value is None:
        return None
    return check_int("max_response_bytes", value, 1, 2**63 - 1)


def check_headers(argument: str, headers: object) -> dict[str, str]:
    """Check a mapping of extra headers and return a copy of it.

    The one check for every argument that adds headers (``default_headers``,
    ``extra_headers``), so that each refuses the same names and values.

    Args:
        argument: the argument's name, for the error messages.
        headers: the mapping to check; ``None`` stands for no headers.

    Returns:
        The headers as a new plain dict, names as given.

    Raises:
        TypeError: ``headers`` is not a mapping, or a name or value is not a ``str``.
        ValueError: a name is not an HTTP token, is one the SDK sets itself
            (``RESERVED_HEADERS``: the message names the argument to use instead) or one that
            frames the body (``Content-Length``, ``Transfer-Encoding``), or a value holds CR,
            LF, NUL or non-ASCII characters.
    """
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError(f"{argument} must be a mapping, got {type(headers).__name__}")
    for name, value in headers.items():
        check_str(f"{argument} key", name)
        check_str(f"{argument}[{name!r}]", value)
        if not re.fullmatch(_HEADER_NAME, name):
            raise ValueError(f"{argument} key {name!r} is not a valid HTTP header name")
        if name.lower() in RESERVED_HEADERS:
            raise ValueError(
                f"{argument} must not set {name!r}: pass {RESERVED_HEADERS[name.lower()]}"
            )
        if name.lower() in _FRAMING_HEADERS:
            raise ValueError(
                f"{argument} must not set {name!r}: it is computed from the request body"
            )
        # The value is not shown: a header may carry a secret.
        if re.search(_FORBIDDEN_IN_HEADER_VALUE, value) or not value.isascii():
            raise ValueError(f"{argument}[{name!r}] must be ASCII without CR, LF or NUL")
    return dict(headers)


def merge_headers(headers: Mapping[str, str], added: object) -> dict[str, str]:
    """Return ``headers`` with ``added`` over them, names compared case-insensitively.

    Args:
        headers: checked default headers.
        added: more default headers, checked here (``None`` adds none).

    Returns:
        The merged headers; a name in both keeps the spelling and value of ``added``.

    Raises:
        TypeError: ``added`` is not a mapping of ``str`` to ``str``.
        ValueError: ``added`` sets a header the SDK sets itself, or an invalid one.
    """
    checked = check_headers("default_headers", added)
    replaced = {name.lower() for name in checked}
    kept = {name: value for name, value in headers.items() if name.lower() not in replaced}
    return {**kept, **checked}


def resolve_options(
    api_key: object,
    *,
    environment: object,
    base_url: object,
    timeout: object,
    max_retries: object = NOT_GIVEN,
    default_headers: object,
    max_response_bytes: object = DEFAULT_MAX_RESPONSE_BYTES,
    deadline: object = None,
    retry: object = NOT_GIVEN,
    retry_base: RetryPolicy = DEFAULT_RETRY,
    tracing: object = None,
    middleware: tuple[Callable[..., Any], ...] = (),
    environ: Mapping[str, str] | None = None,
) -> ClientOptions:
    """Validate a client's constructor arguments and fill the gaps from the environment.

    The address is, first match wins: ``base_url``, ``environment``, ``ANIMALSTORE_BASE_URL``,
    production. The key is ``api_key``, else ``ANIMALSTORE_API_KEY``.

    Args:
        api_key: the API key, a function that returns one (called for each call), or
            ``None`` to read ``ANIMALSTORE_API_KEY``.
        environment: an ``Environment`` or its name, or ``None``.
        base_url: an explicit address, or ``None``.
        timeout: seconds (applied to every phase), ``None`` (no limit) or an ``httpx.Timeout``,
            per attempt.
        max_retries: how many times a failed attempt may be retried: ``retry_base`` with this
            ``max_retries``; ``NOT_GIVEN``: ``retry``'s.
        default_headers: extra headers for every request, or ``None``.
        max_response_bytes: the most bytes an answer's decoded body may hold, or ``None``.
        deadline: seconds for a whole call, retries and waits included, or ``None``.
        retry: the ``RetryPolicy``; ``NOT_GIVEN``: ``retry_base``.
        retry_base: the policy that ``max_retries`` adjusts, or that applies when neither it
            nor ``retry`` is given.
        tracing: ``True``, ``False``, a tracer provider, or ``None`` to read
            ``ANIMALSTORE_TRACING``.
        middleware: the middleware handlers, already checked (``_core.middleware``).
        environ: the variables to read; ``os.environ`` when ``None``.

    Returns:
        The validated options.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: no key, a malformed key or URL, credentials in the URL, both
            ``environment`` and ``base_url``, an unknown environment, a negative
            ``max_retries``, both ``max_retries`` and ``retry``, or a default header the SDK
            sets itself (``Authorization``, ``Idempotency-Key``), a ``max_response_bytes``
            below 1, or a ``deadline`` that is not positive.
        ImportError: tracing is on and OpenTelemetry's API is not installed.
    """
    environ = os.environ if environ is None else environ
    key = _api_key(api_key, environ)
    headers = MappingProxyType(check_headers("default_headers", default_headers))
    return ClientOptions(
        api_key=key,
        base_url=_normalized_url(*_base_url(environment, base_url, environ)),
        timeout=check_timeout(timeout),
        retry=_retry_policy(max_retries, retry, retry_base),
        default_headers=headers,
        max_response_bytes=check_max_response_bytes(max_response_bytes),
        deadline=check_deadline("deadline", deadline),
        headers=_request_headers(key, headers),
        key_provider=api_key if key is None else None,  # type: ignore[arg-type]
        tracing=check_tracing(tracing, environ),
        middleware=middleware,
    )


def _retry_policy(max_retries: object, retry: object, base: RetryPolicy) -> RetryPolicy:
    """Return the retry policy that ``max_retries=`` (its shorthand) or ``retry=`` gives."""
    if isinstance(retry, NotGiven):
        if isinstance(max_retries, NotGiven):
            return base
        # The policy checks it, naming max_retries.
        return attrs.evolve(base, max_retries=max_retries)  # type: ignore[arg-type]
    if not isinstance(max_retries, NotGiven):
        raise ValueError(
            "pass either max_retries= or retry=, not both: max_retries= is the shorthand for "
            "retry=RetryPolicy(max_retries=...)"
        )
    return check_retry("retry", retry)


def _request_headers(api_key: str | None, default_headers: Mapping[str, str]) -> dict[str, str]:
    # The decoders load with the first client, not with the package.
    from animalstore_client._core.decoding import accept_encoding

    # httpx.Headers merges names case-insensitively: a user's "user-agent" or "accept" replaces
    # ours instead of being sent beside it. Authorization cannot come from the user's headers.
    merged = httpx.Headers(
        {
            "Accept": "application/json",
            # What the SDK decodes itself, not the libraries' own list: see _core.decoding.
            "Accept-Encoding": accept_encoding(),
            "User-Agent": f"animalstore-client-python/{__version__}",
        }
    )
    merged.update(default_headers)
    if api_key is not None:  # else each call adds its key provider's
        merged["Authorization"] = f"Bearer {api_key}"
    return dict(merged.multi_items())
