"""What ``middleware=`` costs a call: ``python -m tests.benchmarks.middleware [--quick]``.

Case 10's call (``list_pets(limit=1)``, one pet, in process: the SDK's own work is most of
it), sync and async, through one handler that passes the request on, and through one that adds
a header (``Request.with_headers``), against the same client without middleware. Without
middleware is what every call pays (case 10 of ``python -m tests.benchmarks`` checks it
against httpx). The ratios are reported, not checked: middleware is opt-in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from animalstore_client import Request, Response
from tests.benchmarks._harness import Comparison, compare, compare_async
from tests.benchmarks.cases import Settings, in_process_clients, report


def passing(request: Request, call_next: Callable[[Request], Response]) -> Response:
    """Pass the request on, as a handler that only observes does."""
    return call_next(request)


def tagging(request: Request, call_next: Callable[[Request], Response]) -> Response:
    """Add a header, as a handler that propagates a trace id does."""
    return call_next(request.with_headers({"X-Trace-Id": "t-42"}))


async def passing_async(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    """``passing`` for ``AsyncClient``."""
    return await call_next(request)


async def tagging_async(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    """``tagging`` for ``AsyncClient``."""
    return await call_next(request.with_headers({"X-Trace-Id": "t-42"}))


def middleware_cost(settings: Settings) -> list[Comparison]:
    """Time case 10's call through each handler against no middleware, sync and async."""
    results: list[Comparison] = []
    with in_process_clients() as (off, off_async, loop):
        for name, handler, handler_async in (
            ("a handler that passes on", passing, passing_async),
            ("a handler that adds a header", tagging, tagging_async),
        ):
            on = off.with_options(middleware=[handler])
            on_async = off_async.with_options(middleware=[handler_async])
            results += compare(
                f"sync, {name}",
                lambda on=on: on.list_pets(limit=1),  # type: ignore[misc]
                {"no middleware": (lambda: off.list_pets(limit=1), None)},
                rounds=settings.rounds,
                number=settings.calls * 2,
            )
            results += compare_async(
                f"async, {name}",
                lambda on_async=on_async: on_async.list_pets(limit=1),  # type: ignore[misc]
                {"no middleware": (lambda: off_async.list_pets(limit=1), None)},
                rounds=settings.rounds,
                number=settings.calls * 2,
                loop=loop,
            )
    return results


if __name__ == "__main__":
    report("python -m tests.benchmarks.middleware", __doc__ or "", middleware_cost)
