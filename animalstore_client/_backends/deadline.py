"""Running one attempt within the time left before a call's deadline.

httpx's ``timeout`` is per phase and restarts with every byte read, so a server that drips a
byte at a time holds an attempt for as long as it likes; a deadline must stop the attempt from
outside. The async clients cancel it (anyio's cancel scope, which works under asyncio and trio,
on httpx and aiohttp alike). A sync attempt waiting for a byte cannot be interrupted through
httpx's public API: it runs in a worker thread, and the caller stops waiting at the deadline.
The abandoned attempt goes on in the background until the server ends it, its per-phase
timeouts (no longer than the time that was left when it began) run out, or, past the
deadline, the next piece of its body arrives (the sender stops reading there); its answer is
dropped. A server that drips the headers themselves keeps it, and its connection, until it
stops.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable

from animalstore_client._core.wire import Answer, Request, SendFailure

__all__ = ["send_within", "send_within_async"]

Outcome = Answer | SendFailure


def send_within(
    seconds: float, send: Callable[[Request], Outcome], request: Request
) -> Outcome | None:
    """Send one attempt with a sync sender; give up waiting after ``seconds``.

    The attempt runs in a daemon thread, in a copy of the caller's context (so that tracing
    and other context variables follow it).

    Args:
        seconds: how long to wait for the outcome.
        send: the sender's ``send``.
        request: the attempt's request.

    Returns:
        The attempt's outcome; ``None`` if ``seconds`` passed first (or was 0).

    Raises:
        Whatever ``send`` raised, if it raised in time.
    """
    if seconds <= 0:
        return None
    # Imported only by calls with a deadline: a millisecond of every program's start-up.
    import contextvars
    from concurrent.futures import Future
    from concurrent.futures import TimeoutError as FutureTimeout

    done: Future[Outcome] = Future()
    context = contextvars.copy_context()

    def attempt() -> None:
        try:
            done.set_result(context.run(send, request))
        except BaseException as exc:  # handed to the caller, which re-raises it
            done.set_exception(exc)

    threading.Thread(target=attempt, name="animalstore-attempt", daemon=True).start()
    try:
        # A lock's wait is bounded by TIMEOUT_MAX (about 49 days on Windows).
        return done.result(timeout=min(seconds, threading.TIMEOUT_MAX))
    except FutureTimeout:
        return None


async def send_within_async(
    seconds: float, send: Callable[[Request], Awaitable[Outcome]], request: Request
) -> Outcome | None:
    """Send one attempt with an async sender, cancelling it after ``seconds``.

    Args:
        seconds: how long the attempt may take.
        send: the sender's ``send``.
        request: the attempt's request.

    Returns:
        The attempt's outcome; ``None`` if it was cancelled at the deadline (or ``seconds``
        was 0).
    """
    if seconds <= 0:
        return None
    import anyio  # httpx's own dependency; imported only by calls with a deadline

    with anyio.move_on_after(seconds):
        return await send(request)
    return None
