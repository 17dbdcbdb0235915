"""Run a fake animal store in the foreground: ``python -m animalstore_client.testing``.

Options: ``--port`` (default 8080, 0 for a free one) and ``--api-key`` (default
``test-key``). Prints the ``export`` lines that point the SDK at it, then serves until Ctrl-C,
which exits with status 130.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence

from animalstore_client.testing import FakeAnimalStore

_EXIT_ERROR = 1
_EXIT_INTERRUPTED = 130  # the shell's code for a process ended by SIGINT


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fresh fake store on 127.0.0.1 until interrupted.

    Args:
        argv: the command-line arguments, without the program name; ``sys.argv[1:]`` when
            ``None``.

    Returns:
        The exit status: 130 after Ctrl-C, 1 when the port cannot be bound.
    """
    args = _parser().parse_args(argv)
    store = FakeAnimalStore(api_keys=(args.api_key,))
    try:
        with store.serve(args.port) as base_url:
            print(f"export ANIMALSTORE_BASE_URL={shlex.quote(base_url)}")
            print(f"export ANIMALSTORE_API_KEY={shlex.quote(args.api_key)}", flush=True)
            print(f"Fake animal store serving on {base_url}; Ctrl-C to stop.", file=sys.stderr)
            while True:
                # time.sleep, unlike a wait on a lock, is interrupted by Ctrl-C everywhere.
                time.sleep(3600)
    except KeyboardInterrupt:
        print("Stopped.", file=sys.stderr)
        return _EXIT_INTERRUPTED
    except OSError as error:
        print(f"error: cannot serve on port {args.port}: {error}", file=sys.stderr)
        return _EXIT_ERROR


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m animalstore_client.testing",
        description="Serve an in-memory animal store on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument(
        "--port", type=_port, default=8080, help="TCP port, 0 for a free one (default: 8080)"
    )
    parser.add_argument(
        "--api-key", default="test-key", help="the API key to accept (default: test-key)"
    )
    return parser


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {text!r}")
    return int(text)


if __name__ == "__main__":
    sys.exit(main())
