"""The ``animalstore`` command line (also ``python -m animalstore_client``).

A thin layer over the public SDK: each command builds a ``Client`` from the global options,
makes one call and prints the result (``_cli_output``). Arguments are checked by the SDK, as
for any caller; every expected failure ends in one line on stderr and an exit status from
``EXIT_STATUSES``, never a traceback. Nothing imports this module but those two entry points,
which call ``run``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, NoReturn

from animalstore_client._cli.bulk import (
    BULK_EPILOG,
    DEFAULT_CONCURRENCY,
    MAX_CONCURRENCY,
    create_from_file,
)
from animalstore_client._cli.output import (
    OUTPUT_FORMATS,
    OutputError,
    discard,
    print_error,
    print_result,
)
from animalstore_client._cli.records import FORMATS
from animalstore_client._cli.status import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_STATUSES,
    EXIT_USAGE,
)
from animalstore_client._client import AsyncClient, Client
from animalstore_client._core.config import (
    API_KEY_VARIABLE,
    BASE_URL_VARIABLE,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    Environment,
)
from animalstore_client._core.exceptions import APIError
from animalstore_client._core.logging import LOG_VARIABLE, debug_to_stderr
from animalstore_client._core.models import Pet, PetStatus
from animalstore_client._core.operations import CREATE_PET, GET_PET, LIST_PETS, Endpoint
from animalstore_client._core.response import IDEMPOTENCY_ADVICE
from animalstore_client._core.retry_policy import DEFAULT_MAX_RETRIES
from animalstore_client._core.safe_repr import tolerant_repr
from animalstore_client._version import __version__

__all__ = ["EXIT_STATUSES", "main"]

assert GET_PET.removal is not None  # a deprecated operation, declared so
GET_NOTICE = (
    f"notice: 'pets get' uses {GET_PET.name}, which is deprecated: the service removes it on "
    f"{GET_PET.removal.day}; use 'animalstore pets list --status STATUS' instead."
)

_EPILOG = f"""\
output (--output, before or after the command):
  table   aligned columns id, name, category, status (the default on a terminal)
  json    the wire JSON: one object, or an array for 'pets list' (the default otherwise)
  jsonl   one JSON object per line
  csv     a header (id,name,categoryId,status), then one row per animal
  Errors go to stderr as one line, 'error: <message>', or as Error JSON
  ({{"code": ..., "message": ..., "status": ...}}) when --output is json or jsonl.

environment variables:
  {API_KEY_VARIABLE:<21} the API key (preferred over --api-key)
  {BASE_URL_VARIABLE:<21} the API's address, unless --base-url or --environment is given
  {LOG_VARIABLE:<21} 'debug' or 'info': SDK logs on stderr (-v is the same as 'debug')

exit status:
  0    success
  1    the API answered with an error (mock-server: the port cannot be bound)
  2    bad usage or a bad argument, found before anything is sent
  3    the API could not be reached (connection failed or timed out)
  4    the result could not be written to stdout (a full disk, a closed stdout)
  5    pets create --from-file: every record created, but some were resent after a
       send that may have created them: a service that does not deduplicate may hold
       those twice (see 'pets create --help')
  130  interrupted (Ctrl-C)
  141  stdout was closed early (the reader of a pipe, like 'head', exited)
"""

ApiCall = Callable[[Client], Pet | list[Pet]]


def main(argv: Sequence[str] | None = None, *, prog: str = "animalstore") -> int:
    """Run the command line.

    Args:
        argv: the arguments, without the program name; ``sys.argv[1:]`` when ``None``.
        prog: the program name shown in help and usage messages.

    Returns:
        The exit status (see ``animalstore --help``). ``--help``, ``--version`` and usage
        errors exit through ``SystemExit`` instead, with 0 or 2.
    """
    try:
        args = _parser(prog).parse_args(argv)
        command: Callable[[argparse.Namespace], int] = args.command
        return command(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`animalstore pets list | head -1`): nothing more to say.
        discard(sys.stdout)
        return EXIT_BROKEN_PIPE
    except OutputError as error:
        discard(sys.stdout)
        print(f"error: {error}", file=sys.stderr, flush=True)
        return EXIT_OUTPUT


def run(prog: str = "animalstore") -> NoReturn:
    """Run the command line as a process: ``main`` with the process's arguments, then exit.

    The entry point of the ``animalstore`` script and of ``python -m animalstore_client``. Once
    the command's outcome is out, a Ctrl-C has nothing left to stop, so it is ignored: left to
    Python, one that came while the interpreter shut down (logging's flush at exit) would print
    "Exception ignored in atexit callback ... KeyboardInterrupt" after the summary. Call it from
    the main thread only (it sets a signal handler).

    Args:
        prog: the program name shown in help and usage messages.

    Raises:
        SystemExit: always, with ``main``'s exit status (130 for a Ctrl-C that came as ``main``
            returned).
    """
    status = EXIT_INTERRUPTED
    try:
        status = main(prog=prog)
    except KeyboardInterrupt:  # in the instant between main's return and here
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)


# -- the commands -------------------------------------------------------------------------


def _pets_list(args: argparse.Namespace) -> int:
    """``pets list``: ``GET /pets``, optionally filtered by status and limited in number."""
    return _call_api(args, lambda client: client.list_pets(status=args.status, limit=args.limit))


def _pets_create(args: argparse.Namespace) -> int:
    """``pets create``: ``POST /pets``; prints the animal with its assigned id.

    With ``--from-file``, every record of a file instead (``bulk``).
    """
    single = {"--name": args.name, "--category-id": args.category_id}
    single.update({"--status": args.status, "--idempotency-key": args.idempotency_key})
    if args.from_file is not None:
        given = next((option for option, value in single.items() if value is not None), None)
        if given is not None:
            args.usage_error(f"argument --from-file: not allowed with argument {given}")
        if args.output not in (None, "jsonl"):
            args.usage_error(
                f"argument --from-file: prints a JSON line per record, not -o {args.output}"
            )
        return _pets_create_from_file(args)
    for option in ("--format", "--concurrency", "--journal"):
        if getattr(args, option[2:]) is not None:
            args.usage_error(f"argument {option}: only with --from-file")
    missing = [option for option in ("--name", "--category-id") if single[option] is None]
    if missing:
        args.usage_error(
            f"the following arguments are required: {', '.join(missing)} (or --from-file FILE)"
        )

    def create(client: Client) -> Pet:
        try:
            return client.create_pet(
                name=args.name,
                category_id=args.category_id,
                status=args.status,
                idempotency_key=args.idempotency_key,
            )
        except APIError as error:
            _advise_for_the_shell(error, key_given=args.idempotency_key is not None)
            raise

    return _call_api(args, create)


def _advise_for_the_shell(error: APIError, *, key_given: bool) -> None:
    """Word the advice of a create that may have been processed for the shell, in place.

    The SDK tells a Python caller to pass ``idempotency_key=``; a command-line user needs the
    flag, and the key the lost request was sent with, to run the command again safely.

    Args:
        error: the create's error; any other message is left as it is.
        key_given: whether ``--idempotency-key`` was given (then the same command resends it).
    """
    if not error.message.endswith(IDEMPOTENCY_ADVICE):
        return
    if key_given:
        advice = "run the same command again to resend it with the same --idempotency-key"
    else:
        key = error.request.headers.get("idempotency-key")
        advice = f"to resend it, run the command again with --idempotency-key {key}"
    message = (
        error.message.removesuffix(IDEMPOTENCY_ADVICE)
        + f"; {advice}: a service that deduplicates by Idempotency-Key then creates it once"
    )
    error.message = message
    error.args = (message,)


def _pets_create_from_file(args: argparse.Namespace) -> int:
    """``pets create --from-file``: every record of a file, each created once (``bulk``)."""
    try:
        _check_api_key(args)
        client = AsyncClient(**_client_settings(args))
    except (TypeError, ValueError) as error:
        print_error(error, as_json=args.output == "jsonl")
        return EXIT_USAGE
    with _warnings_as_notices(), debug_to_stderr() if args.verbose else nullcontext():
        return create_from_file(
            client,
            args.from_file,
            given_format=args.format,
            concurrency=DEFAULT_CONCURRENCY if args.concurrency is None else args.concurrency,
            journal=args.journal,
        )


def _pets_get(args: argparse.Namespace) -> int:
    """``pets get``: the deprecated ``GET /pets/{petId}``, with a plain notice on stderr.

    The notice follows the call, so that a bad id is reported alone (nothing was sent), and
    precedes the result or the API's error.
    """

    def get(client: Client) -> Pet:
        with warnings.catch_warnings():
            # The notice says it for command-line users, once.
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                pet = client.get_pet(args.pet_id)  # type: ignore[deprecated, unused-ignore]
            except APIError:
                _notice(GET_NOTICE)
                raise
        _notice(GET_NOTICE)
        return pet

    return _call_api(args, get)


def _mock_server(args: argparse.Namespace) -> int:
    """``mock-server``: the built-in reference store in the foreground until Ctrl-C."""
    from animalstore_client.testing import serve_in_foreground

    # mock-server's own --api-key, else the global one given before the command; what is not
    # given is left to the store's defaults.
    options = {"port": args.port, "api_key": args.mock_api_key or args.api_key or None}
    return serve_in_foreground(
        faults=args.fault,
        honour_idempotency_keys=args.honour_idempotency_keys,
        **{name: value for name, value in options.items() if value is not None},
    )


def _call_api(args: argparse.Namespace, call: ApiCall) -> int:
    """Build a client from the global options, make one call, and print its result.

    The service's own deprecation signals (the SDK's ``DeprecationWarning``) are printed as
    ``notice:`` lines on stderr.

    Returns:
        ``EXIT_OK``, or the status ``EXIT_STATUSES`` maps the failure to, after printing it.
    """
    try:
        _check_api_key(args)
        with (
            _warnings_as_notices(),
            Client(**_client_settings(args)) as client,
            _retry_lines(show=not args.verbose and sys.stderr.isatty()),
            # The SDK's records never carry headers (the key).
            debug_to_stderr() if args.verbose else nullcontext(),
        ):
            logging.getLogger("animalstore_client.cli").debug("using %r", client)
            result = call(client)
    except Exception as error:
        status = next((code for kind, code in EXIT_STATUSES if isinstance(error, kind)), None)
        if status is None:
            raise
        print_error(error, as_json=args.output in ("json", "jsonl"))
        return status
    print_result(result, args.output)
    return EXIT_OK


def _check_api_key(args: argparse.Namespace) -> None:
    """Refuse to go on without a key, worded for the shell (the SDK's message names api_key=).

    Raises:
        ValueError: neither ``--api-key`` nor ``ANIMALSTORE_API_KEY`` gives a key.
    """
    if not (os.environ.get(API_KEY_VARIABLE) if args.api_key is None else args.api_key):
        raise ValueError(f"no API key: set {API_KEY_VARIABLE} or pass --api-key KEY")


def _client_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Return the client's settings from the global options."""
    return {
        "api_key": args.api_key,
        "environment": args.environment,
        "base_url": args.base_url,
        "timeout": args.timeout,
        "max_retries": args.max_retries,
        "deadline": args.deadline,
        "max_response_bytes": args.max_response_bytes,
    }


@contextmanager
def _retry_lines(*, show: bool) -> Iterator[None]:
    """Print one line on stderr per retry, as the call starts to wait (a person is watching).

    Otherwise a command that retries is silent for as long as its waits last. ``-v`` shows
    these lines among its DEBUG logs, and ``ANIMALSTORE_LOG`` among its own; a script reading
    stderr gets nothing extra.

    Args:
        show: whether to print them (stderr is a terminal, and no log shows them already).
    """
    sdk_logger = logging.getLogger("animalstore_client")
    if not show or sdk_logger.isEnabledFor(logging.INFO):
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(lambda record: getattr(record, "animalstore_retry", False))
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = sdk_logger.level
    sdk_logger.addHandler(handler)
    sdk_logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        sdk_logger.removeHandler(handler)
        sdk_logger.setLevel(level)


def _notice(text: str) -> None:
    print(text, file=sys.stderr)


@contextmanager
def _warnings_as_notices() -> Iterator[None]:
    """Print the ``DeprecationWarning``s raised inside as ``notice:`` lines on stderr.

    Python's own format (file, line, source) means nothing to a command-line user; any other
    warning is shown as Python would.
    """
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            yield
    finally:
        # Shown once the recording has stopped: shown inside, a warning would be recorded
        # again, and the loop over the record would never end.
        for warning in caught:
            if issubclass(warning.category, DeprecationWarning):
                _notice(f"notice: {warning.message}")
            else:
                warnings.showwarning(
                    warning.message, warning.category, warning.filename, warning.lineno
                )


# -- the parser -----------------------------------------------------------------------------


@tolerant_repr
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Report a usage error in one line, with where to find help, and exit with 2."""
        self.exit(EXIT_USAGE, f"error: {message} (see '{self.prog} --help')\n")


def _parser(prog: str) -> argparse.ArgumentParser:
    """Return the parser of the whole command line: global options, then a command."""
    parser = _Parser(
        prog=prog,
        description="Use the animal store API from the shell.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_global_options(parser)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    pets = commands.add_parser("pets", help="list, add or fetch animals")
    _add_pets_commands(pets.add_subparsers(title="commands", metavar="COMMAND", required=True))
    _add_mock_server(commands)
    return parser


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    """Add the options given before the command: the client's settings, the output format."""
    parser.add_argument("--version", action="version", version=f"animalstore {__version__}")
    address = parser.add_mutually_exclusive_group()
    address.add_argument(
        "--base-url", metavar="URL", help=f"the API's address (default: ${BASE_URL_VARIABLE})"
    )
    address.add_argument(
        "--environment",
        choices=[environment.value for environment in Environment],
        help="use this deployment's address (default: production)",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help=f"the API key; prefer ${API_KEY_VARIABLE}, as command lines end up in shell "
        "history and process lists",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="per attempt (default: 5 to connect, 30 for the rest)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="the most a whole call may take, retries and waits included (default: no limit)",
    )
    parser.add_argument(
        "--max-response-bytes",
        type=int,
        default=DEFAULT_MAX_RESPONSE_BYTES,
        metavar="N",
        help="the most bytes an answer's body may hold once decoded (default: 16 MiB)",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_MAX_RETRIES,
        metavar="N",
        help="retries of a failed attempt (default: %(default)s)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log each request on stderr (DEBUG)"
    )
    _add_output(parser, default=None)


def _add_pets_commands(pet_commands: argparse._SubParsersAction[_Parser]) -> None:
    """Add ``pets list``, ``pets create`` and ``pets get``."""
    statuses = [status.value for status in PetStatus]
    listing = _add_command(pet_commands, "list", _pets_list, _summary(LIST_PETS))
    listing.add_argument("--status", choices=statuses, help="only animals with this status")
    listing.add_argument("--limit", type=int, metavar="N", help="at most N, 1 to 100 (default: 20)")
    _add_create(pet_commands, statuses)
    get = _add_command(
        pet_commands,
        "get",
        _pets_get,
        f"{_summary(GET_PET)}; deprecated, use 'pets list --status'",
    )
    get.add_argument("pet_id", type=int, metavar="ID", help="the animal's id")


def _summary(endpoint: Endpoint) -> str:
    """Return a ``pets`` command's help: what its operation does, and the operation (its route)."""
    return f"{endpoint.summary} ({endpoint.name})"


def _add_create(pet_commands: argparse._SubParsersAction[_Parser], statuses: list[str]) -> None:
    """Add ``pets create``: one animal from its options, or every animal of a file."""
    create = _add_command(
        pet_commands,
        "create",
        _pets_create,
        _summary(CREATE_PET),
        epilog=BULK_EPILOG,
    )
    create.set_defaults(usage_error=create.error)
    create.add_argument("--name", help="the animal's name (required without --from-file)")
    create.add_argument(
        "--category-id",
        type=int,
        metavar="N",
        help="its category's id (required without --from-file)",
    )
    create.add_argument("--status", choices=statuses, help="its status")
    create.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="sent as Idempotency-Key (default: a new one); give the same key to run the "
        "command again after a lost answer, against a service that deduplicates",
    )
    from_file = create.add_argument_group("every animal of a file (see below)")
    from_file.add_argument(
        "--from-file",
        metavar="FILE",
        help="create each record of FILE (- for stdin): JSON lines or CSV",
    )
    from_file.add_argument(
        "--format",
        choices=FORMATS,
        help="the file's format (default: from its extension, .jsonl, .ndjson or .csv; "
        "jsonl for stdin)",
    )
    from_file.add_argument(
        "--concurrency",
        type=_concurrency,
        metavar="N",
        help=f"calls in flight, 1 to {MAX_CONCURRENCY} (default: {DEFAULT_CONCURRENCY})",
    )
    from_file.add_argument(
        "--journal",
        metavar="FILE",
        help="keep each record's key and outcome in FILE; run the same command with the same "
        "journal again to resume, creating none twice",
    )


def _add_mock_server(commands: argparse._SubParsersAction[_Parser]) -> None:
    """Add ``mock-server``: the options of the reference store's server."""
    # Imported here, as the store is: its vocabulary of faults writes the help.
    from animalstore_client.testing import FAULT_HELP, fault_option, port_number

    mock = commands.add_parser(
        "mock-server",
        help="serve the built-in reference store on 127.0.0.1 until Ctrl-C",
        description="Serve an in-memory reference store on 127.0.0.1 until Ctrl-C (exit 130). "
        "Prints the export lines for its URL and its key (test-key unless --api-key is given), "
        "and on stderr each scripted fault.",
    )
    mock.add_argument("--port", type=port_number, help="TCP port, 0 for a free one (default: 8080)")
    mock.add_argument(
        "--api-key",
        dest="mock_api_key",
        metavar="KEY",
        help="the API key the store accepts (default: test-key)",
    )
    mock.add_argument(
        "--fault", type=fault_option, action="append", default=[], metavar="FAULT", help=FAULT_HELP
    )
    mock.add_argument(
        "--honour-idempotency-keys",
        action="store_true",
        help="answer a POST whose Idempotency-Key was seen before with the first answer again",
    )
    mock.set_defaults(command=_mock_server)


def _concurrency(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_CONCURRENCY:
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_CONCURRENCY}, got {value}")
    return value


def _add_command(
    commands: argparse._SubParsersAction[_Parser],
    name: str,
    command: Callable[[argparse.Namespace], int],
    summary: str,
    epilog: str | None = None,
) -> argparse.ArgumentParser:
    description = summary[0].upper() + summary[1:] + "."
    parser = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=(
            argparse.RawDescriptionHelpFormatter if epilog else argparse.HelpFormatter
        ),
    )
    parser.set_defaults(command=command)
    # Also accepted after the command; it then wins over one given before.
    _add_output(parser, default=argparse.SUPPRESS)
    return parser


def _add_output(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=OUTPUT_FORMATS,
        default=default,
        metavar="FORMAT",
        help="table, json, jsonl or csv (default: table on a terminal, json otherwise)",
    )
