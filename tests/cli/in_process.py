"""The ``animalstore`` command line run in the test's own process, as a fresh process would run.

``invoke`` calls ``main()`` with the command's arguments (a few milliseconds, where a process
costs a few hundred). For the call, the process's state is what a new ``animalstore`` process
has: the ``ANIMALSTORE_*`` variables given and no others; a stdout and a stderr of its own, a
terminal or not, stdout encoded as ``PYTHONIOENCODING`` says (strict) and stderr in UTF-8 with
backslash escapes; Python's default warning filters (``"always"`` for ``PYTHONWARNINGS=always``),
a warning shown on stderr; no logging handler (a record nobody handles reaches stderr through
``logging.lastResort``, as in a process); 80 columns. Everything is put back afterwards. An
exception ``main()`` lets out fails the test, as a traceback would have.

What a process alone shows stays in subprocesses: the entry points, signals, kills, a closed or
full stdout, stdin, a file size limit.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

import attrs

from animalstore_client._cli import main
from animalstore_client._core import logging as sdk_logging

#: Python's warning filters at start-up when neither ``-W`` nor ``PYTHONWARNINGS`` is given
#: (3.10 to 3.13, release builds), applied in this order.
_DEFAULT_FILTERS: list[tuple[str, type[Warning], str]] = [
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
]
#: The variables a test may give that are the interpreter's, not the command's.
_INTERPRETER = ("PYTHONIOENCODING", "PYTHONWARNINGS")


class Stream(io.TextIOWrapper):
    """A standard stream of the run: text over bytes kept in memory, a terminal or not."""

    def __init__(self, encoding: str, errors: str, terminal: bool) -> None:
        super().__init__(io.BytesIO(), encoding=encoding, errors=errors)
        self._terminal = terminal

    def isatty(self) -> bool:
        return self._terminal

    def written(self) -> bytes:
        """Every byte written so far."""
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue()


@attrs.frozen
class Invoked:
    """What the run left: its exit status, the bytes on stdout, the text on stderr."""

    returncode: int
    stdout: bytes
    stderr: str


def invoke(
    argv: Sequence[str],
    environ: Mapping[str, str | None],
    *,
    stdout_terminal: bool = False,
    stderr_terminal: bool = False,
) -> Invoked:
    """Run ``animalstore <argv>`` in this process, as ``environ`` sets its variables.

    Args:
        argv: the arguments, without the program name.
        environ: ``ANIMALSTORE_*`` variables (``None``: unset), and ``PYTHONIOENCODING``
            (stdout's encoding, UTF-8 if absent) or ``PYTHONWARNINGS`` (``"always"`` only).
        stdout_terminal: whether stdout is a terminal.
        stderr_terminal: whether stderr is a terminal.
    """
    unknown = [
        name for name in environ if not name.startswith("ANIMALSTORE_") and name not in _INTERPRETER
    ]
    assert not unknown, f"not a variable a run in process can have: {unknown}"
    warnings_option = environ.get("PYTHONWARNINGS")
    assert warnings_option in (None, "always"), warnings_option
    encoding = environ.get("PYTHONIOENCODING") or "utf-8"
    stdout = Stream(encoding, "strict", stdout_terminal)
    stderr = Stream("utf-8", "backslashreplace", stderr_terminal)
    variables = {name: value for name, value in environ.items() if name not in _INTERPRETER}
    with (
        _variables(variables),
        _streams(stdout, stderr),
        _fresh_logging(),
        _default_warnings(always=warnings_option == "always"),
    ):
        try:
            status: Any = main(argv)
        except SystemExit as exit:
            status = exit.code
            if isinstance(status, str):  # as the interpreter does: the text, then 1
                print(status, file=sys.stderr)
                status = 1
    return Invoked(0 if status is None else status, stdout.written(), stderr.written().decode())


@contextmanager
def _variables(given: Mapping[str, str | None]) -> Iterator[None]:
    """The ``ANIMALSTORE_*`` variables ``given``, no others; 80 columns, as on a pipe."""
    wanted: dict[str, str | None] = {
        name: None for name in os.environ if name.startswith("ANIMALSTORE_")
    }
    wanted.update(given)
    wanted.update(COLUMNS="80", LINES="24")
    saved = {name: os.environ.get(name) for name in wanted}
    try:
        for name, value in wanted.items():
            _set(name, value)
        yield
    finally:
        for name, value in saved.items():
            _set(name, value)


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


@contextmanager
def _streams(stdout: TextIO, stderr: TextIO) -> Iterator[None]:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@contextmanager
def _fresh_logging() -> Iterator[None]:
    """Logging as a new process has it: no handler anywhere but what ``ANIMALSTORE_LOG`` (as the
    run's variables set it) installs at import; the SDK's logger put back after."""
    root = logging.getLogger()
    sdk = sdk_logging.logger
    saved = (root.handlers[:], sdk.handlers[:], sdk.level, sdk_logging._FROM_ENV)
    root.handlers = []
    sdk.handlers = []
    sdk.setLevel(logging.NOTSET)
    # Inside _streams: the handler writes to the run's stderr, as the import would have.
    sdk_logging._FROM_ENV = sdk_logging.configure_from_env(os.environ)
    try:
        yield
    finally:
        root.handlers, sdk.handlers = saved[0], saved[1]
        sdk.setLevel(saved[2])
        sdk_logging._FROM_ENV = saved[3]


@contextmanager
def _default_warnings(*, always: bool) -> Iterator[None]:
    """Python's default filters (or ``always``), and warnings shown on the run's stderr."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_DEFAULT_FILTERS):
            warnings.filterwarnings(action, category=category, module=module)  # type: ignore[arg-type]
        if always:
            warnings.simplefilter("always")
        warnings.showwarning = _show_on_stderr
        yield


def _show_on_stderr(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    stream = sys.stderr if file is None else file
    stream.write(warnings.formatwarning(message, category, filename, lineno, line))
