"""The HTTP clients the SDK sends with, built with its defaults, for ``http_client=``.

Pass one to tweak a single setting and keep the rest of the SDK's defaults, or to send
through httpx2 or aiohttp::

    Client(http_client=DefaultHttpxClient(verify="/etc/ssl/corporate.pem"))
    Client(http_client=DefaultHttpx2Client())
    async with DefaultAioHttpClient() as http, AsyncClient(http_client=http) as client: ...

None of them is given an explicit ``transport``, so the httpx-family ones read the proxy
variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) as a plain client
does; ``DefaultAioHttpClient`` turns on aiohttp's ``trust_env`` when one of them is set
(aiohttp ignores ``ALL_PROXY``). httpx2 and aiohttp are imported only when their factory is
called.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import httpx

from animalstore_client._core.config import DEFAULT_CONNECTION_LIMITS, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    import ssl

    import aiohttp
    import httpx2

    from animalstore_client._backends.gate import ConnectionGate

__all__ = [
    "INSTALL_COMMANDS",
    "DefaultAioHttpClient",
    "DefaultAsyncHttpx2Client",
    "DefaultAsyncHttpxClient",
    "DefaultHttpx2Client",
    "DefaultHttpxClient",
    "import_extra",
]

#: What each optional library's extra installs, as a command that works wherever the SDK came
#: from (the package is on no index).
INSTALL_COMMANDS = {
    "aiohttp": "pip install 'aiohttp>=3.12'",
    "httpx2": "pip install 'httpx2>=2.0'",
}


def import_extra(name: str, needed_by: str) -> Any:
    """Import the optional library ``name``; if it is missing, say how to install it.

    Raises:
        ImportError: it is not installed; the message gives the command that installs it.
    """
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"{needed_by} needs {name} ({exc.name or exc} is missing): install the SDK's "
            f"{name} extra, or {name} itself with: {INSTALL_COMMANDS[name]}",
            name=exc.name,
        ) from exc


class _Extra:
    """An optional library as the factories' return annotations name it, imported when read.

    ``typing.get_type_hints`` (sphinx-autodoc-typehints, typeguard, pydantic) evaluates
    ``httpx2.Client`` at run time; the library is imported then, as calling the factory would,
    and a missing one is the same ``ImportError`` with its install command.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        # What tools probe for (doctest's __wrapped__, autospec's dunders) is not the library's
        # to answer: asked of a missing one, it would be an ImportError, not an AttributeError.
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(import_extra(self._name, "the SDK's factory for it"), attribute)


if not TYPE_CHECKING:
    aiohttp = _Extra("aiohttp")
    httpx2 = _Extra("httpx2")


#: The default TLS context per (SSL_CERT_FILE, SSL_CERT_DIR): loading the CA bundle takes about
#: 25 ms, which httpx pays for every client it builds. A context is safe to share.
_ssl_contexts: dict[tuple[str, str | None, str | None], ssl.SSLContext] = {}


def _with_defaults(kwargs: dict[str, Any], lib: Any = httpx) -> dict[str, Any]:
    defaults: dict[str, Any] = {  # as the library's own types (httpx2 has its own)
        "timeout": lib.Timeout(**DEFAULT_TIMEOUT.as_dict()),
        "limits": lib.Limits(**vars(DEFAULT_CONNECTION_LIMITS)),
    }
    if "verify" not in kwargs and "cert" not in kwargs:
        defaults["verify"] = _default_ssl_context(kwargs.get("trust_env", True), lib)
    return {**defaults, **kwargs}


def _default_ssl_context(trust_env: object, lib: Any) -> ssl.SSLContext:
    """Return what the library's ``create_ssl_context()`` would, made once per variables."""
    environ = os.environ
    key = (environ.get("SSL_CERT_FILE"), environ.get("SSL_CERT_DIR")) if trust_env else (None, None)
    cache_key = (lib.__name__, *key)
    context = _ssl_contexts.get(cache_key)
    if context is None:
        context = _ssl_contexts[cache_key] = lib.create_ssl_context(trust_env=bool(trust_env))
    return context


class DefaultHttpxClient(httpx.Client):
    """An ``httpx.Client`` with the SDK's defaults, for ``Client(http_client=...)``.

    The defaults: ``DEFAULT_TIMEOUT`` (5 s to connect, 30 s for the rest),
    ``DEFAULT_CONNECTION_LIMITS``, and httpx's default TLS settings in one context shared by
    every client built without ``verify`` or ``cert`` (its CA bundle loaded once, not for each
    client); proxies from the environment, as httpx reads them. The caller closes it
    (``Client.close()`` leaves a passed-in client open).

    Args:
        **kwargs: any ``httpx.Client`` argument; each one given replaces the SDK's default.

    Raises:
        TypeError: an argument ``httpx.Client`` does not take.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**_with_defaults(kwargs))


class DefaultAsyncHttpxClient(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` with the SDK's defaults, for ``AsyncClient(http_client=...)``.

    The defaults are those of ``DefaultHttpxClient``. On top of plain httpx, requests beyond
    the pool's ``max_connections`` wait in the client, first come first served (for at
    most the ``pool`` timeout, then ``httpx.PoolTimeout``), instead of in httpx's pool, which
    slows down sharply with the length of its queue: with 1,000 calls in flight over loopback
    it completes about 3 times as many calls a second as plain httpx. For that many calls,
    ``DefaultAioHttpClient`` is faster still. It runs under asyncio and trio. The caller
    closes it (``AsyncClient.aclose()`` leaves a passed-in client open).

    Args:
        **kwargs: any ``httpx.AsyncClient`` argument; each one given replaces the SDK's
            default. With ``transport=``, or ``limits`` without ``max_connections``, no
            request waits in the client.

    Raises:
        TypeError: an argument ``httpx.AsyncClient`` does not take.
    """

    def __init__(self, **kwargs: Any) -> None:
        options = _with_defaults(kwargs)
        super().__init__(**options)
        size = options["limits"].max_connections
        self._gate: ConnectionGate | None = None
        # A given transport has its own pool, whose size the limits do not describe.
        if size is not None and "transport" not in options:
            from animalstore_client._backends.gate import ConnectionGate

            self._gate = ConnectionGate(size)

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        """Send ``request`` once the gate lets it in; see ``httpx.AsyncClient.send``.

        Returns:
            The response.

        A streamed response (``stream=True``) keeps its place in the gate until it is closed,
        as it keeps its connection.

        Raises:
            httpx.PoolTimeout: the gate, then httpx's pool, did not let it in within the
                ``pool`` timeout (each).
            httpx.HTTPError: as ``httpx.AsyncClient.send``.
        """
        if self._gate is None:
            return await super().send(request, **kwargs)
        semaphore = await self._gate.enter(request)
        try:
            response = await super().send(request, **kwargs)
        except BaseException:
            semaphore.release()
            raise
        if response.is_closed:  # read in full (stream=False)
            semaphore.release()
        else:  # streamed: the connection is busy until the response is closed
            from animalstore_client._backends.gate import HeldUntilClosed

            assert isinstance(response.stream, httpx.AsyncByteStream)
            response.stream = HeldUntilClosed(response.stream, semaphore)
        return response


def DefaultAioHttpClient(**kwargs: Any) -> aiohttp.ClientSession:
    """Return an ``aiohttp.ClientSession`` with the SDK's defaults, for ``AsyncClient``.

    Use it for many concurrent calls, where aiohttp's connection pool keeps its speed however
    many calls wait for a connection; call it inside a coroutine (aiohttp binds a session to
    the running loop), and close it yourself::

        async with DefaultAioHttpClient() as http, AsyncClient(http_client=http) as client:
            pets = await client.list_pets()

    It needs the ``aiohttp`` extra (or ``pip install 'aiohttp>=3.12'``) and asyncio:
    aiohttp does not run under trio. The defaults: the timeouts of ``DEFAULT_TIMEOUT`` (aiohttp
    has no write timeout), a ``TCPConnector`` sized by ``DEFAULT_CONNECTION_LIMITS``, proxies
    from the environment, and a middleware that turns off aiohttp's own resend of a GET after a
    dropped connection on the SDK's calls, so that ``max_retries`` counts every attempt (the
    session's other requests are left as aiohttp makes them). A session you build yourself
    works too, without that last default. The SDK's calls use the ``AsyncClient``'s own
    ``timeout`` whatever the session's; the session's ``timeout`` applies to your other calls.

    Proxies: when any proxy variable (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``) is set as
    it is called, the session gets ``trust_env=True``, and aiohttp then looks up the proxy (with
    ``NO_PROXY``) and ``.netrc`` in a thread before every request, which halves the calls a
    second with 1,000 in flight; when none is set, ``trust_env=False``. Pass ``trust_env=`` to
    choose.

    Args:
        **kwargs: any ``aiohttp.ClientSession`` argument; each one given replaces the SDK's
            default (``middlewares`` given run before the SDK's).

    Returns:
        The session.

    Raises:
        ImportError: the ``aiohttp`` extra is not installed; the message gives the command
            that installs it.
        RuntimeError: called outside a coroutine (no asyncio event loop is running), or under
            trio.
        TypeError: an argument ``aiohttp.ClientSession`` does not take.
    """
    import_extra("aiohttp", "DefaultAioHttpClient")
    from animalstore_client._backends.aiohttp import new_session

    return new_session(**kwargs)


def DefaultHttpx2Client(**kwargs: Any) -> httpx2.Client:
    """Return an ``httpx2.Client`` with the SDK's defaults, for ``Client(http_client=...)``.

    The defaults are those of ``DefaultHttpxClient``, as httpx2's own ``Timeout`` and
    ``Limits``. It needs the ``httpx2`` extra (any httpx2 release, 2.0 and later, on every
    supported Python). The caller closes it.

    Args:
        **kwargs: any ``httpx2.Client`` argument; each one given replaces the SDK's default.

    Returns:
        The client.

    Raises:
        ImportError: httpx2 is not installed; the message gives the command that installs it.
        TypeError: an argument ``httpx2.Client`` does not take.
    """
    lib = import_extra("httpx2", "DefaultHttpx2Client")
    client: httpx2.Client = lib.Client(**_with_defaults(kwargs, lib))
    return client


def DefaultAsyncHttpx2Client(**kwargs: Any) -> httpx2.AsyncClient:
    """``DefaultHttpx2Client``'s async twin: an ``httpx2.AsyncClient``, for ``AsyncClient``.

    Unlike ``DefaultAsyncHttpxClient`` it puts no gate before the pool: httpx2's pool does
    not slow down with the length of its queue. It runs under asyncio and trio.

    Args:
        **kwargs: any ``httpx2.AsyncClient`` argument, replacing the SDK's default.

    Returns:
        The async client, which the caller closes (``aclose()``).

    Raises:
        ImportError: as for ``DefaultHttpx2Client``.
        TypeError: an argument ``httpx2.AsyncClient`` does not take.
    """
    lib = import_extra("httpx2", "DefaultAsyncHttpx2Client")
    client: httpx2.AsyncClient = lib.AsyncClient(**_with_defaults(kwargs, lib))
    return client
