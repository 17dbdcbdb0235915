"""The SDK's logger, and the opt-in stderr handler that ``ANIMALSTORE_LOG`` turns on.

Log records carry method, URL, status, timing and retry number; never headers, so never the key.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Mapping

__all__ = ["LOG_VARIABLE", "configure_from_env", "logger"]

logger = logging.getLogger("animalstore_client")

LOG_VARIABLE = "ANIMALSTORE_LOG"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}
_lock = threading.Lock()
_handler: logging.Handler | None = None


def configure_from_env(environ: Mapping[str, str]) -> None:
    """Log to stderr at the level ``ANIMALSTORE_LOG`` names (``debug`` or ``info``).

    Any other value, or none, leaves logging to the application. The handler is installed once
    however many clients are built.

    Args:
        environ: the variables to read.
    """
    level = _LEVELS.get(environ.get(LOG_VARIABLE, "").strip().lower())
    if level is None:
        return
    global _handler
    with _lock:
        if _handler is None:
            _handler = logging.StreamHandler(sys.stderr)
            _handler.setFormatter(
                logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")
            )
            logger.addHandler(_handler)
        logger.setLevel(level)
