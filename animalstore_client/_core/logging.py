"""The SDK's logger, and the stderr handler that ``ANIMALSTORE_LOG`` turns on.

Log records carry method, URL, status, timing and retry number; never headers, so never the key.

The variable is read once, as the package is imported: building a client never touches logging
(the handlers and level are the application's), and nothing a client or a test does changes
them for another. The command line's ``-v`` logs to stderr for the length of its run only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping

__all__ = ["LOG_VARIABLE", "configure_from_env", "debug_to_stderr", "logger"]

logger = logging.getLogger("animalstore_client")

LOG_VARIABLE = "ANIMALSTORE_LOG"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}


def configure_from_env(environ: Mapping[str, str]) -> logging.Handler | None:
    """Log to stderr at the level ``ANIMALSTORE_LOG`` names (``debug`` or ``info``).

    Called once, as the package is imported. Any other value, or none, leaves logging to the
    application.

    Args:
        environ: the variables to read.

    Returns:
        The handler installed on the SDK's logger, or ``None`` when none was.
    """
    level = _LEVELS.get(environ.get(LOG_VARIABLE, "").strip().lower())
    if level is None:
        return None
    handler = _stderr_handler()
    logger.addHandler(handler)
    logger.setLevel(level)
    return handler


@contextlib.contextmanager
def debug_to_stderr() -> Iterator[None]:
    """Log the SDK's records at DEBUG to stderr inside the block; as before, after it.

    The stderr handler ``ANIMALSTORE_LOG`` installed is used if there is one (no line twice);
    otherwise one is added for the block.
    """
    level = logger.level
    added = None if _FROM_ENV is not None else _stderr_handler()
    if added is not None:
        logger.addHandler(added)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.setLevel(level)
        if added is not None:
            logger.removeHandler(added)


def _stderr_handler() -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    return handler


#: What ``ANIMALSTORE_LOG`` installed when the package was imported; ``None``: nothing.
_FROM_ENV = configure_from_env(os.environ)
