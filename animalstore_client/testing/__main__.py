"""Run a fake animal store in the foreground: ``python -m animalstore_client.testing``.

Options: ``--port`` (default 8080, 0 for a free one), ``--api-key`` (default
``test-key``) and ``--fault`` (repeatable: see ``Fault.parse``). Prints the ``export`` lines
that point the SDK at it, then serves until Ctrl-C, which exits with status 130.
``animalstore mock-server`` runs the same loop, and also takes ``--honour-idempotency-keys``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from animalstore_client.testing._faults import FAULT_HELP
from animalstore_client.testing._foreground import (
    DEFAULT_API_KEY,
    DEFAULT_PORT,
    fault_option,
    port_number,
    serve_in_foreground,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fresh fake store on 127.0.0.1 until interrupted.

    Args:
        argv: the command-line arguments, without the program name; ``sys.argv[1:]`` when
            ``None``.

    Returns:
        The exit status: 130 after Ctrl-C, 1 when the port cannot be bound.
    """
    args = _parser().parse_args(argv)
    return serve_in_foreground(args.port, args.api_key, args.fault)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m animalstore_client.testing",
        description="Serve an in-memory animal store on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"TCP port, 0 for a free one (default: {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--api-key",
        default=DEFAULT_API_KEY,
        help=f"the API key to accept (default: {DEFAULT_API_KEY})",
    )
    parser.add_argument(
        "--fault", type=fault_option, action="append", default=[], metavar="FAULT", help=FAULT_HELP
    )
    return parser


if __name__ == "__main__":
    sys.exit(main())
