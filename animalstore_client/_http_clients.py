"""The ``httpx`` clients the SDK sends with, built with its defaults, for ``http_client=``.

Pass one to tweak a single setting and keep the rest of the SDK's defaults, or to send
asynchronous calls through aiohttp::

    AsyncClient(http_client=DefaultAioHttpClient())
    Client(http_client=DefaultHttpxClient(verify="/etc/ssl/corporate.pem"))

None of them is given an explicit ``transport``, so each reads the proxy variables
(``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) exactly as a plain ``httpx``
client does.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import httpx

from animalstore_client._config import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    import ssl

__all__ = [
    "AIOHTTP_INSTALL_COMMAND",
    "DEFAULT_CONNECTION_LIMITS",
    "DefaultAioHttpClient",
    "DefaultAsyncHttpxClient",
    "DefaultHttpxClient",
]

#: Up to 100 connections, all of them kept open between calls for up to 5 s. httpx's own
#: default keeps only 20 of its 100 open: after every burst it would close 80 connections and
#: open them again for the next one.
DEFAULT_CONNECTION_LIMITS = httpx.Limits(
    max_connections=100, max_keepalive_connections=100, keepalive_expiry=5.0
)
AIOHTTP_INSTALL_COMMAND = "pip install 'animalstore-client[aiohttp]'"


#: The default TLS context per (SSL_CERT_FILE, SSL_CERT_DIR): loading the CA bundle takes about
#: 25 ms, which httpx pays for every client it builds. A context is safe to share.
_ssl_contexts: dict[tuple[str | None, str | None], ssl.SSLContext] = {}


def _with_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    defaults: dict[str, Any] = {"timeout": DEFAULT_TIMEOUT, "limits": DEFAULT_CONNECTION_LIMITS}
    if "verify" not in kwargs and "cert" not in kwargs:
        defaults["verify"] = _default_ssl_context(kwargs.get("trust_env", True))
    return {**defaults, **kwargs}


def _default_ssl_context(trust_env: object) -> ssl.SSLContext:
    """Return what ``httpx.create_ssl_context()`` would, made once per set of variables."""
    environ = os.environ
    key = (
        (environ.get("SSL_CERT_FILE"), environ.get("SSL_CERT_DIR")) if trust_env else (None, None)
    )
    context = _ssl_contexts.get(key)
    if context is None:
        context = _ssl_contexts[key] = httpx.create_ssl_context(trust_env=bool(trust_env))
    return context


def DefaultHttpxClient(**kwargs: Any) -> httpx.Client:
    """Return an ``httpx.Client`` with the SDK's defaults, for ``Client(http_client=...)``.

    The defaults: ``DEFAULT_TIMEOUT`` (5 s to connect, 30 s for the rest),
    ``DEFAULT_CONNECTION_LIMITS``, and httpx's default TLS settings in one context shared by
    every client built without ``verify`` or ``cert`` (its CA bundle loaded once, not for each
    client); proxies from the environment, as httpx reads them.

    Args:
        **kwargs: any ``httpx.Client`` argument; each one given replaces the SDK's default.

    Returns:
        The client; the caller closes it (``Client.close()`` leaves a passed-in client open).

    Raises:
        TypeError: an argument ``httpx.Client`` does not take.
    """
    return httpx.Client(**_with_defaults(kwargs))


def DefaultAsyncHttpxClient(**kwargs: Any) -> httpx.AsyncClient:
    """Return an ``httpx.AsyncClient`` with the SDK's defaults, for ``AsyncClient(http_client=)``.

    The defaults are those of ``DefaultHttpxClient``. On top of plain httpx, requests beyond
    twice the pool's ``max_connections`` wait in the client, first come first served (for at
    most the ``pool`` timeout, then ``httpx.PoolTimeout``), instead of in httpx's pool, which
    slows down sharply with the length of its queue: with 1,000 calls in flight over loopback
    it completes about 3.5 times as many calls a second as plain httpx. For that many calls,
    ``DefaultAioHttpClient`` is faster still.

    Args:
        **kwargs: any ``httpx.AsyncClient`` argument; each one given replaces the SDK's
            default. With ``transport=``, or ``limits`` without ``max_connections``, no
            request waits in the client.

    Returns:
        The client; the caller closes it (``AsyncClient.aclose()`` leaves a passed-in client
        open).

    Raises:
        TypeError: an argument ``httpx.AsyncClient`` does not take.
    """
    from animalstore_client._gate import GatedAsyncClient

    return GatedAsyncClient(**_with_defaults(kwargs))


def DefaultAioHttpClient(**kwargs: Any) -> httpx.AsyncClient:
    """Return an ``httpx.AsyncClient`` that sends through aiohttp, with the SDK's defaults.

    Use it as ``AsyncClient(http_client=DefaultAioHttpClient())`` for many concurrent calls:
    aiohttp's connection pool keeps its speed however many calls wait for a connection.
    It needs the ``aiohttp`` extra (``pip install 'animalstore-client[aiohttp]'``), which
    brings ``aiohttp`` and ``httpx-aiohttp``.

    The defaults are those of ``DefaultHttpxClient``. Differences from httpx's own transport:
    aiohttp has no write timeout (``connect``, ``read`` and ``pool`` apply), speaks HTTP/1.1
    only, and supports ``http://`` and ``https://`` proxies but not SOCKS. Every aiohttp
    error is raised as the ``httpx`` error of the same meaning (a refused connection as
    ``httpx.ConnectError``, a hang-up before the answer as ``httpx.RemoteProtocolError``), so
    that the SDK retries a ``create_pet`` only when nothing was sent; and aiohttp does not
    resend a request on its own, so ``max_retries`` counts every attempt. A plain request (no
    auth, event hooks, redirects to follow, proxy or streaming) goes straight to the aiohttp
    session, around httpx's client machinery, with the same result.

    Args:
        **kwargs: any ``httpx.AsyncClient`` argument; each one given replaces the SDK's
            default. ``limits.max_connections`` sizes aiohttp's pool; ``keepalive_expiry``
            is how long it keeps an idle connection.

    Returns:
        The client; the caller closes it (``AsyncClient.aclose()`` leaves a passed-in client
        open). It opens its aiohttp session in the event loop of its first request.

    Raises:
        ImportError: the ``aiohttp`` extra is not installed; the message gives the command
            that installs it.
        TypeError: an argument ``httpx.AsyncClient`` does not take.
    """
    try:
        from animalstore_client._aiohttp import AioHttpClient
    except ImportError as exc:
        raise ImportError(
            f"DefaultAioHttpClient needs aiohttp and httpx-aiohttp ({exc.name or exc} is "
            f"missing); install them with: {AIOHTTP_INSTALL_COMMAND}",
            name=exc.name,
        ) from exc
    return AioHttpClient(**_with_defaults(kwargs))
