"""The service's own deprecation signals, read from its responses; no I/O.

A service announces that an operation is going away with the ``Deprecation`` header (RFC 9745:
``@`` and a Unix time), the ``Sunset`` header (RFC 8594: an HTTP-date, when it stops working)
and a ``Link`` with ``rel="deprecation"`` or ``rel="sunset"`` to a page that says more. The
forms of the header's earlier drafts, which servers and mocks (Prism) still send, are read too:
``Deprecation: true`` (deprecated, no date given) and an HTTP-date. The SDK turns them into one
``DeprecationWarning`` per client (and its ``with_options`` copies) and operation. A malformed
value is ignored and logged at DEBUG: news about the future never breaks a call today.

``email.utils`` is imported only when a response carries one of the headers (``_core/dates.py``).
"""

from __future__ import annotations

import re
import sys
import threading
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from animalstore_client._core.dates import http_date
from animalstore_client._core.logging import logger

if TYPE_CHECKING:
    from datetime import datetime
    from types import FrameType

    import httpx

    from animalstore_client._core.wire import Answer

__all__ = [
    "DeprecationNotices",
    "deprecation_date",
    "deprecation_link",
    "notice",
    "sunset_date",
    "warn_deprecated",
]

# The patterns are compiled at their first use (by re, which keeps them), not at import.
#: RFC 9651 Date: "@" and an Integer (at most 15 digits).
_SF_DATE = r"@(-?[0-9]{1,15})"
#: The earlier drafts' "deprecated, no date given" (draft-ietf-httpapi-deprecation-header-02:
#: ``"true"``, which ABNF compares case-insensitively).
_UNDATED = "true"
#: The modules whose frames a warning passes over to reach its caller: the SDK's. A tuple, so
#: that a tool which wraps the SDK's functions in its own (a mutation tester's trampoline) can
#: add its module and keep the warnings where they point without it.
_OWN_MODULES: tuple[str, ...] = (__name__.partition(".")[0] + ".",)


def deprecation_date(headers: Mapping[str, str]) -> datetime | None:
    """Return the date of the ``Deprecation`` header (RFC 9745), timezone-aware, in UTC.

    Besides RFC 9745's ``@`` and a Unix time, the HTTP-date of the header's earlier drafts is
    read too.

    Args:
        headers: the response headers (names looked up case-insensitively).

    Returns:
        The date, which may lie in the future (the operation becomes deprecated then), or
        ``None`` when the header is absent, says ``true`` (the earlier drafts' form: deprecated,
        no date given; the warning says so all the same), or is malformed (logged at DEBUG).
    """
    deprecated = _deprecation(headers)
    return None if deprecated is True else deprecated


def _deprecation(headers: Mapping[str, str]) -> datetime | Literal[True] | None:
    """Return the ``Deprecation`` header's date, ``True`` for ``true``, ``None`` for nothing."""
    value = headers.get("deprecation")
    if value is None:
        return None
    value = value.strip()
    if value.lower() == _UNDATED:
        return True
    match = re.fullmatch(_SF_DATE, value)
    if match is not None:
        from datetime import datetime, timezone

        try:
            return datetime.fromtimestamp(int(match[1]), timezone.utc)
        except (OverflowError, OSError, ValueError):  # beyond the years datetime can hold
            pass
    else:
        try:
            return http_date(value)
        except (TypeError, ValueError, OverflowError, IndexError):
            pass
    _ignore("Deprecation", value)
    return None


def sunset_date(headers: Mapping[str, str]) -> datetime | None:
    """Return the date of the ``Sunset`` header (RFC 8594), timezone-aware, in UTC.

    Args:
        headers: the response headers (names looked up case-insensitively).

    Returns:
        When the operation stops working, or ``None`` when the header is absent or malformed
        (logged at DEBUG).
    """
    value = headers.get("sunset")
    if value is None:
        return None
    try:
        return http_date(value)
    except (TypeError, ValueError, OverflowError, IndexError):
        _ignore("Sunset", value)
        return None


def deprecation_link(response: httpx.Response) -> str | None:
    """Return the URL of the response's ``Link`` with ``rel="deprecation"``, else ``"sunset"``.

    Args:
        response: the response.

    Returns:
        The URL, or ``None`` when there is no such link or it is not one printable token
        (logged at DEBUG).
    """
    if "link" not in response.headers:
        return None
    found: dict[str, str] = {}
    for link in response.links.values():
        for relation in link.get("rel", "").lower().split():
            found.setdefault(relation, link.get("url", ""))
    url = found.get("deprecation", found.get("sunset"))
    if url is None:
        return None
    if not url or not url.isprintable() or " " in url:
        _ignore("Link", url)
        return None
    return url


def notice(operation: str, answer: Answer) -> str | None:
    """Word the warning for an operation whose answer carries deprecation signals.

    Args:
        operation: the operation as the spec names it (``"GET /pets"``).
        answer: the answer.

    Returns:
        The message, or ``None`` when neither ``Deprecation`` nor ``Sunset`` is well formed.
        ``Deprecation: true`` gives no date: "GET /pets is deprecated by the service".
    """
    headers = answer.headers
    deprecated, sunset = _deprecation(headers), sunset_date(headers)
    if deprecated is None and sunset is None:
        return None
    if deprecated is None:
        message = f"{operation} will be removed by the service"
    else:
        message = f"{operation} is deprecated by the service"
        if deprecated is not True:
            message += f" as of {deprecated.date().isoformat()}"
        if sunset is not None:
            message += " and will be removed"
    if sunset is not None:
        message += f" on {sunset.date().isoformat()}"
    link = deprecation_link(answer.http_response()) if "link" in headers else None
    if link is not None:
        message += f"; see {link}"
    return message


class DeprecationNotices:
    """The operations a client and its ``with_options`` copies have warned about; thread-safe."""

    __slots__ = ("_lock", "_warned")

    def __init__(self) -> None:
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def warn_once(self, operation: str, answer: Answer) -> None:
        """Warn about the response's deprecation signals, unless already done for ``operation``.

        The ``DeprecationWarning`` points at the first line outside the SDK on the stack: the
        caller's, for the sync and the async client alike.

        Args:
            operation: the operation as the spec names it (``"GET /pets"``).
            answer: an answer that carries ``Deprecation`` or ``Sunset``.
        """
        if operation in self._warned:
            return
        message = notice(operation, answer)
        if message is None:
            return
        with self._lock:
            if operation in self._warned:
                return
            self._warned.add(operation)
        warn_deprecated(message)


def warn_deprecated(message: str) -> None:
    """Warn with ``DeprecationWarning`` at the first line outside the SDK that led here.

    For the SDK's own deprecations (``get_pet``), on the client and its raw view alike.
    """
    frame = _callers_frame()
    warnings.warn_explicit(
        message,
        DeprecationWarning,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__", "<string>"),
        registry=frame.f_globals.setdefault("__warningregistry__", {}),
    )


def _callers_frame() -> FrameType:
    """Return the first frame outside the SDK on the way up from here.

    Found by its module rather than counted as a ``stacklevel``, so that it holds however deep
    the client's own calls go, and whatever calls in between (a debugger's, a profiler's)
    add. The warning is then made as ``warnings.warn`` would make it there: the same file, line,
    module and once-per-place registry.
    """
    frame = sys._getframe()
    # str(): code run by exec() may have globals without a __name__ ("None" is no module here).
    while frame.f_back is not None and str(frame.f_globals.get("__name__")).startswith(
        _OWN_MODULES
    ):
        frame = frame.f_back
    return frame


def _ignore(header: str, value: str) -> None:
    logger.debug("ignoring a malformed %s header: %r", header, value[:200])
