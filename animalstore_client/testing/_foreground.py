"""The reference store as a command: served in the foreground until Ctrl-C.

What ``animalstore mock-server`` and ``python -m animalstore_client.testing`` run.
"""

from __future__ import annotations

import errno
import re
import shlex
import sys
import time
from collections.abc import Sequence

from animalstore_client.testing._faults import Fault
from animalstore_client.testing._store import FakeAnimalStore

__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_PORT",
    "fault_option",
    "port_number",
    "serve_in_foreground",
]

DEFAULT_PORT = 8080
DEFAULT_API_KEY = "test-key"
_EXIT_ERROR = 1
_EXIT_INTERRUPTED = 130  # the shell's code for a process ended by SIGINT
#: A port that cannot be had, where any free one would do.
_PORT_TAKEN = frozenset({errno.EADDRINUSE, errno.EACCES})
#: The Python spellings, in a ``Fault.parse`` message, of the command line's words:
#: ``drop_before``, ``retry_after``, ``headers`` (each ``header=``), ``None`` (``times=always``).
_PYTHON_WORD = re.compile(r"\b(?:[a-z]+(?:_[a-z]+)+|headers|None)\b")
_TYPED = {"headers": "header", "None": "always"}


def serve_in_foreground(
    port: int = DEFAULT_PORT,
    api_key: str = DEFAULT_API_KEY,
    faults: Sequence[Fault] = (),
    *,
    honour_idempotency_keys: bool = False,
) -> int:
    """Serve a fresh fake store on 127.0.0.1 until Ctrl-C.

    Prints to stdout the ``export`` lines that point the SDK at it (its URL and key), then
    blocks; progress, and what the store will do wrong, go to stderr.

    Args:
        port: the TCP port, 0 for a free one.
        api_key: the one API key the store accepts.
        faults: faults to script, in order (``FakeAnimalStore.inject``).
        honour_idempotency_keys: as ``FakeAnimalStore``'s.

    Returns:
        The exit status: 130 after Ctrl-C, 1 when the port cannot be bound.
    """
    store = FakeAnimalStore(api_keys=(api_key,), honour_idempotency_keys=honour_idempotency_keys)
    store.inject(*faults)
    try:
        with store.serve(port) as base_url:  # http.server loaded only now
            print(f"export ANIMALSTORE_BASE_URL={shlex.quote(base_url)}")
            print(f"export ANIMALSTORE_API_KEY={shlex.quote(api_key)}", flush=True)
            print(f"Fake animal store serving on {base_url}; Ctrl-C to stop.", file=sys.stderr)
            for number, fault in enumerate(faults, 1):
                print(f"fault {number}: {fault.describe()}", file=sys.stderr)
            if honour_idempotency_keys:
                print("A repeated Idempotency-Key gets the first answer again.", file=sys.stderr)
            sys.stderr.flush()
            while True:
                # time.sleep, unlike a wait on a lock, is interrupted by Ctrl-C everywhere.
                time.sleep(3600)
    except KeyboardInterrupt:
        print("Stopped.", file=sys.stderr)
        return _EXIT_INTERRUPTED
    except OSError as error:
        hint = "; pass --port 0 for a free port" if port and error.errno in _PORT_TAKEN else ""
        print(f"error: cannot serve on port {port}: {error}{hint}", file=sys.stderr)
        return _EXIT_ERROR


def fault_option(text: str) -> Fault:
    """Parse a ``--fault`` option, for an argparse ``type=``.

    Args:
        text: the option's value, ``KIND[:ARG][,NAME=VALUE...]`` (see ``FAULT_HELP``).

    Returns:
        The ``Fault`` it describes, for ``FakeAnimalStore.inject``.

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a fault; the message says why, in the
            command line's words (``drop-before``, ``retry-after``), not Python's.
    """
    import argparse

    try:
        return Fault.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(_as_typed(str(error), text)) from None


def _as_typed(message: str, text: str) -> str:
    """Return a ``Fault.parse`` message with the command line's spelling of each word.

    The text given, which the message quotes, is left as it was typed.
    """

    def typed(match: re.Match[str]) -> str:
        return _TYPED.get(match[0], match[0].replace("_", "-"))

    given = repr(text)
    return given.join(_PYTHON_WORD.sub(typed, part) for part in message.split(given))


def port_number(text: str) -> int:
    """Parse a TCP port, 0 to 65535 (0: any free port), for an argparse ``type=``.

    Args:
        text: the option's value, ASCII digits.

    Returns:
        The port number.

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a port number.
    """
    import argparse  # only the command lines that parse a port need it

    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {text!r}")
    return int(text)
