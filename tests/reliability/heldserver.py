"""A fault server whose answers wait for an event, not for a delay to pass.

Tests that need calls in flight at once, or an answer that comes only after something else
happened, script ``Held`` replies (sent once the test sets the server's ``release``) or
``Together`` replies (sent once so many requests have arrived): no test waits out a delay,
and no outcome depends on how fast the machine is.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.reliability.faultserver import FaultServer, RecordedRequest, Reply

__all__ = ["Held", "HoldingServer", "Together", "holding_server"]

#: How long a ``Together`` reply waits for the requests it needs: past it, the reply goes
#: anyway, and the test fails on what the server saw.
TOGETHER_TIMEOUT = 5.0


@dataclass(frozen=True)
class Held(Reply):
    """A reply sent once the test sets the server's ``release`` (never, if it closes first)."""


@dataclass(frozen=True)
class Together(Reply):
    """A reply sent once ``together`` requests have arrived: that many were in flight at once
    (or after ``TOGETHER_TIMEOUT``, when they did not come)."""

    together: int = 1


class HoldingServer(FaultServer):
    """A ``FaultServer`` that sends ``Held`` and ``Together`` replies only when they may go.

    Attributes:
        release: set it to let every ``Held`` reply go, those waiting and those to come.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.release = threading.Event()

    def _perform(self, action: Any, connection: socket.socket, request: RecordedRequest) -> bool:
        if isinstance(action, Held):
            self.release.wait()
        elif isinstance(action, Together):
            self.wait_for_requests(action.together, TOGETHER_TIMEOUT)
        if self._stopping.is_set():
            return False  # closing: what was held is not sent
        return super()._perform(action, connection, request)

    def close(self) -> None:
        """Stop as ``FaultServer.close`` does, first waking the replies still held."""
        self._stopping.set()
        self.release.set()
        super().close()


@contextlib.contextmanager
def holding_server(**options: Any) -> Iterator[HoldingServer]:
    """A started ``HoldingServer(**options)``, closed afterwards."""
    server = HoldingServer(**options)
    server.start()
    try:
        yield server
    finally:
        server.close()
