"""Middleware handlers written once for both clients: a test writes a handler's logic, and
``handler`` makes it a ``Client`` handler or an ``AsyncClient`` one.

The logic is a generator function ``logic(request)``: each ``yield`` hands a request to
``call_next`` and takes back its ``Response`` (or has the exception ``call_next`` raised thrown
in), and its ``return`` is the handler's answer. A plain function (one that never calls
``call_next``) is returned as it is, or awaited for an ``AsyncClient``. The handler has the
logic's name, which the SDK's messages show.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any

from animalstore_client import Request, Response

#: A handler's logic: a generator of the requests to send on, or a plain function.
Logic = Callable[[Request], Generator[Request, Response, Any] | Any]


def handler(logic: Logic, *, asynchronous: bool) -> Any:
    """Return ``logic`` as a middleware handler for ``AsyncClient`` or for ``Client``."""
    if asynchronous:

        async def run_async(
            request: Request, call_next: Callable[[Request], Awaitable[Response]]
        ) -> Any:
            steps: Any = logic(request)
            if not isinstance(steps, Generator):
                return steps
            try:
                sent = next(steps)
                while True:
                    try:
                        answer = await call_next(sent)
                    except Exception as exc:
                        sent = steps.throw(exc)
                    else:
                        sent = steps.send(answer)
            except StopIteration as stop:
                return stop.value

        made: Any = run_async
    else:

        def run(request: Request, call_next: Callable[[Request], Response]) -> Any:
            steps: Any = logic(request)
            if not isinstance(steps, Generator):
                return steps
            try:
                sent = next(steps)
                while True:
                    try:
                        answer = call_next(sent)
                    except Exception as exc:
                        sent = steps.throw(exc)
                    else:
                        sent = steps.send(answer)
            except StopIteration as stop:
                return stop.value

        made = run
    made.__name__ = made.__qualname__ = logic.__name__
    return made


def handlers(*logic: Logic, asynchronous: bool) -> list[Any]:
    """Return each of ``logic`` as a handler of the client's kind, in order."""
    return [handler(each, asynchronous=asynchronous) for each in logic]
