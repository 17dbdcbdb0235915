"""The command line's exit statuses, and which failure ends in which."""

from __future__ import annotations

from animalstore_client._core.exceptions import APIConnectionError, APIError

__all__ = [
    "EXIT_API_ERROR",
    "EXIT_BROKEN_PIPE",
    "EXIT_HANGUP",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_RESENT",
    "EXIT_STATUSES",
    "EXIT_TERMINATED",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
]

EXIT_OK = 0
EXIT_API_ERROR = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_OUTPUT = 4  # the result could not be written to stdout (a full disk, a closed stdout)
# pets create --from-file: every record created, but some were resent after an earlier send
# that may have created them, so a service that does not deduplicate may hold them twice.
EXIT_RESENT = 5
EXIT_HANGUP = 129  # the shell's code for a process ended by SIGHUP (the terminal closed)
EXIT_INTERRUPTED = 130  # the shell's code for a process ended by SIGINT
EXIT_TERMINATED = 143  # the shell's code for a process ended by SIGTERM (docker stop ...)
EXIT_BROKEN_PIPE = 141  # the shell's code for a process ended by SIGPIPE

#: The one place that maps a failure to an exit status; first match wins.
EXIT_STATUSES: tuple[tuple[type[Exception], int], ...] = (
    (APIConnectionError, EXIT_UNREACHABLE),  # APITimeoutError included; before APIError
    (APIError, EXIT_API_ERROR),  # an error status, or a 2xx answer that does not fit the schema
    (TypeError, EXIT_USAGE),  # the SDK's argument and configuration checks
    (ValueError, EXIT_USAGE),
)
