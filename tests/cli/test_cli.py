"""The ``animalstore`` command line against a real-socket store: in process, and for real.

``run`` calls the command in this process as a fresh process would run it (``in_process``):
what it prints, its exit status and what it sends. ``run_process`` runs it for real, in a
subprocess, where the process is the point: the entry points, Ctrl-C, a closed or full stdout,
a terminal. A subprocess goes through the installed console script when there is one (next to
``sys.executable``), else ``python -m animalstore_client``; the entry-point tests run both.
Every run is checked for the API key and for tracebacks in its output.
"""

from __future__ import annotations

import ast
import compileall
import contextlib
import functools
import io
import json
import os
import py_compile
import re
import shlex
import signal
import socket
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Final, Literal

import attrs
import pytest

from animalstore_client import PetStatusLiteral, __version__
from animalstore_client._cli import main
from animalstore_client._cli import run as run_as_a_process
from animalstore_client.testing import FakeAnimalStore
from tests.cli.in_process import invoke
from tests.conftest import (
    VirtualClock,
    read_lines,
    reaped,
    sigint_as_in_a_terminal,
    without_our_variables,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
KEY = "cli-secret-key-7f3a9c"  # distinctive, so any leak into the output is found
SCRIPT_NAME = "animalstore.exe" if sys.platform == "win32" else "animalstore"
SCRIPT = Path(sys.executable).parent / SCRIPT_NAME
PYTHON_M = (sys.executable, "-m", "animalstore_client")
DEFAULT_LAUNCHER = (str(SCRIPT),) if SCRIPT.exists() else PYTHON_M
LAUNCHERS = [
    pytest.param(
        (str(SCRIPT),),
        id="console-script",
        marks=pytest.mark.skipif(not SCRIPT.exists(), reason=f"{SCRIPT} is not installed"),
    ),
    pytest.param(PYTHON_M, id="python-m"),
]
TIMEOUT = 20  # seconds for any one subprocess; a hang fails the test instead of the run
NOTICE = (
    "notice: 'pets get' uses GET /pets/{petId}, which is deprecated: the service removes it on "
    "5 December 2030; use 'animalstore pets list --status STATUS' instead."
)
#: How long a command has to end after Ctrl-C before the test presses it again.
INTERRUPT_GRACE = 5.0
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals and ptys")


@attrs.frozen
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def stderr_lines(self) -> list[str]:
        return self.stderr.splitlines()


@attrs.frozen
class Server:
    store: FakeAnimalStore
    base_url: str


def environment(base_url: str | None, key: str | None, **extra: str) -> dict[str, str]:
    """The variables a run sees: a user's (``without_our_variables``), the repo importable."""
    compile_the_package()
    env = without_our_variables()
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])
    env["PYTHONIOENCODING"] = "utf-8"
    if base_url is not None:
        env["ANIMALSTORE_BASE_URL"] = base_url
    if key is not None:
        env["ANIMALSTORE_API_KEY"] = key
    return {**env, **extra}


def check_output(stdout: str, stderr: str) -> None:
    assert KEY not in stdout
    assert KEY not in stderr
    assert "Traceback" not in stderr


@functools.cache
def compile_the_package() -> None:
    """Compile the package's bytecode once, so that no subprocess compiles it again.

    The subprocesses import the package from this tree; where ``PYTHONDONTWRITEBYTECODE`` is
    set they would each compile it from source (about 60 ms a process here). Checked-hash
    bytecode: a module whose source changed since (a mutant, an edit) is compiled afresh.
    """
    compileall.compile_dir(
        REPO_ROOT / "animalstore_client",
        quiet=2,  # a tree that cannot be written to is run from source, as before
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
    )


def run(
    command: str,
    *,
    base_url: str | None,
    key: str | None = KEY,
    stdout_terminal: bool = False,
    stderr_terminal: bool = False,
    **extra_env: str,
) -> Result:
    """Run ``animalstore <command>`` in process, ``command`` split as a shell would; check it.

    ``extra_env``: ``ANIMALSTORE_*``, ``PYTHONIOENCODING`` or ``PYTHONWARNINGS=always``.
    """
    environ: dict[str, str | None] = {
        "ANIMALSTORE_BASE_URL": base_url,
        "ANIMALSTORE_API_KEY": key,
        **extra_env,
    }
    invoked = invoke(
        shlex.split(command),
        environ,
        stdout_terminal=stdout_terminal,
        stderr_terminal=stderr_terminal,
    )
    result = Result(invoked.returncode, invoked.stdout.decode("utf-8"), invoked.stderr)
    check_output(result.stdout, result.stderr)
    return result


#: ``stdout=CLOSED``: the command starts with no stdout at all (``>&-``).
CLOSED: Final = "closed"


def animalstore_child(
    command: str,
    base_url: str | None,
    *,
    key: str | None = KEY,
    stdin: bytes = b"",
    stdout: int | IO[bytes] | Literal["closed"] = subprocess.PIPE,
    launcher: Sequence[str] = DEFAULT_LAUNCHER,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``animalstore <command>`` in a subprocess to its end, ``command`` split as a shell
    would; its stderr piped.

    Args:
        command: the arguments.
        base_url: ``ANIMALSTORE_BASE_URL`` (``None``: unset).
        key: ``ANIMALSTORE_API_KEY`` (``None``: unset).
        stdin: all its input.
        stdout: a pipe, a file, a descriptor, or ``CLOSED``.
        launcher: how the command is started.
        preexec_fn: run in the child before the exec.

    Returns:
        The finished process.
    """
    argv = [*launcher, *shlex.split(command)]
    if isinstance(stdout, str):  # CLOSED
        argv, stdout = ["sh", "-c", 'exec "$@" >&-', "sh", *argv], subprocess.DEVNULL
    return subprocess.run(
        argv,
        input=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=environment(base_url, key),
        timeout=TIMEOUT,
        check=False,
        preexec_fn=preexec_fn,
    )


def run_process(
    command: str,
    *,
    base_url: str | None,
    key: str | None = KEY,
    stdin: bytes = b"",
    launcher: Sequence[str] = DEFAULT_LAUNCHER,
    preexec_fn: Callable[[], None] | None = None,
) -> Result:
    """Run ``animalstore <command>`` in a subprocess (``animalstore_child``); check its output."""
    completed = animalstore_child(
        command, base_url, key=key, stdin=stdin, launcher=launcher, preexec_fn=preexec_fn
    )
    result = Result(
        completed.returncode, completed.stdout.decode("utf-8"), completed.stderr.decode("utf-8")
    )
    check_output(result.stdout, result.stderr)
    return result


def served(**options: Any) -> Iterator[Server]:
    """Serve a store that takes ``KEY`` (``options`` go to ``FakeAnimalStore``) until closed."""
    store = FakeAnimalStore(api_keys=[KEY], **options)
    with store.serve() as base_url:
        yield Server(store, base_url)


def emptied(server: Server) -> Server:
    """Return ``server`` with its store as new: a module's tests share one server."""
    server.store.reset()
    return server


@pytest.fixture
def silent_listener() -> Iterator[socket.socket]:
    """A socket that accepts connections (in the backlog) but never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def rex(server: Server) -> None:
    server.store.add_pet("Rex", 3, "available")


# -- importing ------------------------------------------------------------------------------


def test_importing_the_sdk_does_not_import_the_command_line() -> None:
    # httpx does not import argparse either, so both are checked.
    code = (
        "import sys, animalstore_client; "
        "print(sorted(m for m in sys.modules if m in ('argparse', 'animalstore_client._cli') "
        "or m.startswith(('animalstore_client._cli_', 'animalstore_client.testing'))))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environment(None, None),
        timeout=TIMEOUT,
        check=True,
    )
    assert completed.stdout.strip() == "[]"


def imported_testing_names(source: str) -> list[str]:
    """Each ``animalstore_client.testing...`` name a module's source imports, dotted."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in names if name.startswith("animalstore_client.testing")]


def test_the_checks_of_the_command_lines_imports_see_every_form() -> None:
    source = (
        "import animalstore_client.testing._server\n"
        "def f():\n"
        "    from animalstore_client.testing import _faults, Fault\n"
        "    from animalstore_client.testing._foreground import port_number\n"
    )

    assert imported_testing_names(source) == [
        "animalstore_client.testing._server",
        "animalstore_client.testing._faults",
        "animalstore_client.testing.Fault",
        "animalstore_client.testing._foreground.port_number",
    ]


def test_the_command_line_imports_only_public_names_of_the_testing_package() -> None:
    # The command line is a user of the reference store like any other: what it needs of it,
    # the testing package exports (and documents).
    import animalstore_client._cli
    import animalstore_client.testing

    public = {f"animalstore_client.testing.{name}" for name in animalstore_client.testing.__all__}
    folder = Path(animalstore_client._cli.__file__).parent
    imported = {
        path.name: imported_testing_names(path.read_text(encoding="utf-8"))
        for path in sorted(folder.glob("*.py"))
    }

    assert {name: sorted(set(names) - public) for name, names in imported.items()} == {
        name: [] for name in imported
    }
    assert sorted(imported["__init__.py"]) == [
        "animalstore_client.testing.FAULT_HELP",
        "animalstore_client.testing.fault_option",
        "animalstore_client.testing.port_number",
        "animalstore_client.testing.serve_in_foreground",
    ]


# -- both entry points ----------------------------------------------------------------------


#: Each command once, with its exit status and its output (``None``: not checked). The store
#: holds Rex (id 1) for all but ``create``, which makes him.
REX_SOLD = {"id": 1, "name": "Rex", "categoryId": 3, "status": "sold"}
ENTRY_POINT_COMMANDS = [
    pytest.param("--version", 0, f"animalstore {__version__}\n", id="version"),
    pytest.param("pets create --name Rex --category-id 3 --status sold", 0, REX_SOLD, id="create"),
    pytest.param("pets list", 0, [REX_SOLD], id="list"),
    pytest.param("pets get 1", 0, REX_SOLD, id="get"),
    pytest.param("pets get 2", 1, None, id="get-missing"),
]


@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize(("command", "status", "output"), ENTRY_POINT_COMMANDS)
def test_every_command_through_each_entry_point(
    api: Server, launcher: Sequence[str], command: str, status: int, output: object
) -> None:
    if command == "--version":
        result = run_process(command, base_url=None, key=None, launcher=launcher)
        assert (result.returncode, result.stdout) == (status, output)
        return
    if not command.startswith("pets create"):
        api.store.add_pet("Rex", 3, "sold")
    result = run_process(command, base_url=api.base_url, launcher=launcher)
    assert result.returncode == status
    if output is not None:
        assert result.json() == output
    if command.startswith("pets create"):
        assert [pet.to_dict() for pet in api.store.pets] == [REX_SOLD]


# -- results and output formats -------------------------------------------------------------


def test_create_sends_the_pet_and_prints_its_wire_json(api: Server) -> None:
    result = run(
        "pets create --name Rex --category-id 3 --status available",
        base_url=api.base_url,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.json() == {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}
    [request] = api.store.requests
    assert (request.method, request.path) == ("POST", "/v1/pets")
    assert request.json() == {"name": "Rex", "categoryId": 3, "status": "available"}
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_create_without_status_sends_none_and_prints_none(api: Server) -> None:
    result = run("pets create --name Tom --category-id -4", base_url=api.base_url)
    assert result.json() == {"id": 1, "name": "Tom", "categoryId": -4}
    assert api.store.requests[0].json() == {"name": "Tom", "categoryId": -4}


def test_list_prints_a_json_array_and_passes_the_filters(api: Server) -> None:
    seeded: list[tuple[str, PetStatusLiteral | None]] = [
        ("Rex", "sold"),
        ("Tom", None),
        ("Kiki", "sold"),
        ("Max", "sold"),
    ]
    for name, status in seeded:
        api.store.add_pet(name, 1, status)
    result = run("pets list --status sold --limit 2", base_url=api.base_url)
    assert result.returncode == 0
    assert result.json() == [
        {"id": 1, "name": "Rex", "categoryId": 1, "status": "sold"},
        {"id": 3, "name": "Kiki", "categoryId": 1, "status": "sold"},
    ]
    assert api.store.requests[0].query == "limit=2&status=sold"


def test_list_without_options_sends_no_parameters(api: Server) -> None:
    assert run("pets list", base_url=api.base_url).json() == []
    assert api.store.requests[0].query == ""


def test_output_json_is_indented_wire_json(api: Server) -> None:
    rex(api)
    result = run("--output json pets list", base_url=api.base_url)
    expected = [{"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}]
    assert result.stdout == json.dumps(expected, indent=2) + "\n"


@pytest.mark.parametrize(
    "command",
    [
        "--output jsonl pets list",
        "-o jsonl pets list",
        "pets list --output jsonl",
        "--output table pets list -o jsonl",  # the one after the command wins
    ],
)
def test_output_jsonl_prints_one_pet_per_line(api: Server, command: str) -> None:
    rex(api)
    api.store.add_pet("Tom", 4)
    result = run(command, base_url=api.base_url)
    assert result.returncode == 0
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"},
        {"id": 2, "name": "Tom", "categoryId": 4},
    ]


def test_output_jsonl_of_one_pet_is_one_line(api: Server) -> None:
    result = run(
        "-o jsonl pets create --name Rex --category-id 3",
        base_url=api.base_url,
    )
    assert result.stdout == '{"id": 1, "name": "Rex", "categoryId": 3}\n'


def test_output_table_is_aligned(api: Server) -> None:
    rex(api)
    api.store.add_pet("Kiki the Great", 12345, None)
    api.store.add_pet("Café 🐈", 7, "pending")
    result = run("-o table pets list", base_url=api.base_url)
    assert result.returncode == 0
    assert result.stdout == (
        "id  name            category  status\n"
        " 1  Rex                    3  available\n"
        " 2  Kiki the Great     12345  -\n"
        " 3  Café 🐈                7  pending\n"  # the cat is two columns wide
    )


def test_output_table_escapes_control_characters(api: Server) -> None:
    api.store.add_pet("Evil\x1b[2J\nName", 1)
    result = run("pets list -o table", base_url=api.base_url)
    assert result.stdout.splitlines()[1] == " 1  Evil\\x1b[2J\\nName         1  -"


def test_empty_results_in_each_format(api: Server) -> None:
    assert run("-o json pets list", base_url=api.base_url).stdout == "[]\n"
    assert run("-o jsonl pets list", base_url=api.base_url).stdout == ""
    table = run("-o table pets list", base_url=api.base_url).stdout
    assert table == "id  name  category  status\n"


def test_json_output_is_utf8(api: Server) -> None:
    api.store.add_pet("Café 🐈", 7)
    # Even when the locale's encoding cannot represent the name.
    result = run("pets list", base_url=api.base_url, PYTHONIOENCODING="ascii")
    assert result.json() == [{"id": 1, "name": "Café 🐈", "categoryId": 7}]


@POSIX_ONLY
def test_table_is_the_default_on_a_terminal(api: Server) -> None:
    import pty

    rex(api)
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [*DEFAULT_LAUNCHER, "pets", "list"],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=environment(api.base_url, KEY),
        )
        os.close(follower)
        _, stderr = process.communicate(timeout=TIMEOUT)
        output = read_all(leader).decode().replace("\r\n", "\n")
    finally:
        os.close(leader)
    check_output(output, stderr.decode())
    assert process.returncode == 0
    assert output == "id  name  category  status\n 1  Rex          3  available\n"


def read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize(
    ("pet_id", "message"),
    [
        (f"-- {INT64_MIN - 1}", f"error: pet_id must be between {INT64_MIN} and {INT64_MAX}, got"),
        (str(INT64_MAX + 1), f"error: pet_id must be between {INT64_MIN} and {INT64_MAX}, got"),
        ("abc", "error: argument ID: invalid int value: 'abc'"),
    ],
)
def test_get_with_a_bad_id_prints_only_the_error(api: Server, pet_id: str, message: str) -> None:
    result = run(f"pets get {pet_id}", base_url=api.base_url, PYTHONWARNINGS="always")
    assert (result.returncode, result.stdout) == (2, "")
    [error] = result.stderr_lines()
    assert error.startswith(message)
    assert api.store.requests == []


def test_get_notice_says_deprecated_and_the_services_own_signals_add_nothing(
    api: Server,
) -> None:
    rex(api)
    result = run("pets get 1", base_url=api.base_url, PYTHONWARNINGS="always")
    # The store sends Deprecation and Sunset on GET /pets/{petId}: still one notice.
    assert api.store.requests[0].path == "/v1/pets/1"
    assert result.returncode == 0
    [notice] = result.stderr_lines()
    assert "deprecated" in notice
    assert "5 December 2030" in notice


def test_the_services_deprecation_signals_are_printed_as_a_notice() -> None:
    store = FakeAnimalStore(api_keys=[KEY])
    store.set_deprecation(
        "GET /pets",
        deprecation=datetime(2027, 1, 1, tzinfo=timezone.utc),
        sunset=datetime(2028, 1, 1, tzinfo=timezone.utc),
        link="https://example.com/deprecations",
    )
    store.set_deprecation("POST /pets", sunset=datetime(2029, 1, 1, tzinfo=timezone.utc))
    with store.serve() as base_url:
        listed = run("pets list", base_url=base_url, PYTHONWARNINGS="always")
        refused = run("pets list -o json", base_url=base_url, key="wrong-key")
        created = run("pets create --name Rex --category-id 0", base_url=base_url)

    assert (listed.returncode, listed.json()) == (0, [])
    assert listed.stderr_lines() == [
        "notice: GET /pets is deprecated by the service as of 2027-01-01 and will be removed on"
        " 2028-01-01; see https://example.com/deprecations"
    ]
    # A 401 comes before routing: no signals, no notice.
    assert refused.returncode == 1
    assert json.loads(refused.stderr)["code"] == "unauthorized"
    assert created.returncode == 0
    assert created.stderr_lines() == [
        "notice: POST /pets will be removed by the service on 2029-01-01"
    ]
    assert len(store.requests) == 3


def test_get_prints_the_pet_and_one_plain_notice(api: Server) -> None:
    rex(api)
    result = run("pets get 1", base_url=api.base_url, PYTHONWARNINGS="always")
    assert result.returncode == 0
    assert result.json() == {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}
    assert result.stderr_lines() == [NOTICE]  # no Python DeprecationWarning
    assert api.store.requests[0].path == "/v1/pets/1"


# -- errors and exit codes ----------------------------------------------------------------


def test_not_found_exits_1_with_one_line(api: Server) -> None:
    result = run("pets get 99", base_url=api.base_url)
    assert (result.returncode, result.stdout) == (1, "")
    notice, error = result.stderr_lines()
    assert notice == NOTICE
    expected = r"error: 404 not_found: no pet with petId '99' \(request id req_\d+\)"
    assert re.fullmatch(expected, error)


@pytest.mark.parametrize("output", ["json", "jsonl"])
def test_not_found_with_json_output_prints_the_error_json(api: Server, output: str) -> None:
    result = run(f"--output {output} pets get 99", base_url=api.base_url)
    assert (result.returncode, result.stdout) == (1, "")
    notice, error = result.stderr_lines()
    assert notice == NOTICE
    assert json.loads(error) == {
        "code": "not_found",
        "message": "no pet with petId '99'",
        "status": 404,
    }


def test_a_refused_key_exits_1(api: Server) -> None:
    result = run("pets list", base_url=api.base_url, key="wrong-key")
    assert (result.returncode, result.stdout) == (1, "")
    [error] = result.stderr_lines()
    assert re.fullmatch(r"error: 401 unauthorized: invalid API key \(request id req_\d+\)", error)

    as_json = run("pets list -o json", base_url=api.base_url, key="wrong-key")
    assert json.loads(as_json.stderr) == {
        "code": "unauthorized",
        "message": "invalid API key",
        "status": 401,
    }


@pytest.mark.parametrize(
    ("key", "option"), [(None, ""), ("", ""), (None, "--api-key ''"), (KEY, "--api-key ''")]
)
@pytest.mark.parametrize(
    "command", ["pets list", "pets get 1", "pets create --name R --category-id 1"]
)
def test_a_missing_key_exits_2_before_sending_naming_the_option_and_variable(
    api: Server, key: str | None, option: str, command: str
) -> None:
    result = run(f"{option} {command}", base_url=api.base_url, key=key)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr_lines() == [
        "error: no API key: set ANIMALSTORE_API_KEY or pass --api-key KEY"
    ]
    assert api.store.requests == []

    as_json = run(f"{option} -o json {command}", base_url=api.base_url, key=key)
    assert (as_json.returncode, json.loads(as_json.stderr)) == (
        2,
        {
            "code": "invalid_argument",
            "message": "no API key: set ANIMALSTORE_API_KEY or pass --api-key KEY",
            "status": None,
        },
    )


def test_the_api_key_option_works_and_is_not_echoed(api: Server) -> None:
    result = run(f"--api-key {KEY} -v pets list", base_url=api.base_url, key=None)
    assert result.returncode == 0
    assert api.store.requests[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("limit", ["0", "101", "-5"])
def test_a_limit_out_of_range_exits_2_before_sending(api: Server, limit: str) -> None:
    result = run(f"pets list --limit {limit}", base_url=api.base_url)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr_lines() == [f"error: limit must be between 1 and 100, got {limit}"]
    assert api.store.requests == []


def test_a_bad_argument_with_json_output_prints_error_json(api: Server) -> None:
    result = run("pets list --limit 0 -o jsonl", base_url=api.base_url)
    assert result.returncode == 2
    assert json.loads(result.stderr) == {
        "code": "invalid_argument",
        "message": "limit must be between 1 and 100, got 0",
        "status": None,
    }


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            f"pets create --name Rex --category-id {INT64_MAX + 1}",
            f"error: category_id must be between {INT64_MIN} and {INT64_MAX}, got {INT64_MAX + 1}",
        ),
        (
            f"pets get {INT64_MIN - 1}",
            f"error: pet_id must be between {INT64_MIN} and {INT64_MAX}, got {INT64_MIN - 1}",
        ),
        (
            "--timeout -1 pets list",
            "error: timeout must be positive and at most 1e+09 seconds, got -1.0",
        ),
        (
            "--timeout 0 pets list",
            "error: timeout must be positive and at most 1e+09 seconds, got 0.0",
        ),
        ("--max-retries -1 pets list", "error: max_retries must be between 0 and"),
        ("--base-url ftp://host/v1 pets list", "error: base_url must be an absolute"),
    ],
)
def test_values_the_sdk_rejects_exit_2_before_sending(
    api: Server, command: str, message: str
) -> None:
    result = run(command, base_url=api.base_url)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr_lines()[-1].startswith(message)
    assert api.store.requests == []


@pytest.mark.parametrize("seconds", ["inf", "1e10"])
def test_a_timeout_too_large_exits_2(closed_port: int, seconds: str) -> None:
    base_url = f"http://127.0.0.1:{closed_port}/v1"
    result = run(f"--timeout {seconds} --max-retries 0 pets list", base_url=base_url)
    assert result.returncode == 2
    assert result.stderr_lines()[-1].startswith("error: timeout must be")


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("pets list --limit abc", "argument --limit: invalid int value: 'abc'"),
        ("--timeout soon pets list", "argument --timeout: invalid float value: 'soon'"),
        ("pets list --status lost", "argument --status: invalid choice: 'lost'"),
        ("pets create --name Rex", "the following arguments are required: --category-id"),
        ("pets", "the following arguments are required: COMMAND"),
        ("", "the following arguments are required: COMMAND"),
        ("--environment dev pets list", "argument --environment: invalid choice: 'dev'"),
        ("--base-url http://x/v1 --environment staging pets list", "not allowed with"),
        ("-o xml pets list", "argument -o/--output: invalid choice: 'xml'"),
        ("mock-server --port 70000", "argument --port: not a TCP port: '70000'"),
    ],
)
def test_bad_usage_exits_2_with_one_line(api: Server, command: str, message: str) -> None:
    result = run(command, base_url=api.base_url)
    assert (result.returncode, result.stdout) == (2, "")
    [error] = result.stderr_lines()
    assert error.startswith("error: ")
    assert message in error
    assert error.endswith("--help')")
    assert api.store.requests == []


def test_a_stopped_server_exits_3(closed_port: int) -> None:
    base_url = f"http://127.0.0.1:{closed_port}/v1"
    result = run("--max-retries 0 pets list", base_url=base_url)
    assert (result.returncode, result.stdout) == (3, "")
    [error] = result.stderr_lines()
    assert error.startswith(f"error: GET {base_url}/pets failed: ")

    as_json = run("-o json --max-retries 0 pets list", base_url=base_url)
    assert as_json.returncode == 3
    body = json.loads(as_json.stderr)
    assert (body["code"], body["status"]) == ("connection_error", None)
    assert body["message"].startswith(f"GET {base_url}/pets failed: ")


def test_a_stopped_server_is_retried_then_exits_3(closed_port: int, clock: VirtualClock) -> None:
    base_url = f"http://127.0.0.1:{closed_port}/v1"
    result = run("-v --max-retries 1 pets list", base_url=base_url)
    assert result.returncode == 3
    [wait] = clock.slept  # one retry, after its backoff
    assert 0.375 <= wait <= 0.5
    assert "retrying GET" in result.stderr
    assert result.stderr_lines()[-1].startswith("error: GET ")


def test_a_timeout_exits_3(silent_listener: socket.socket) -> None:
    result = run(
        "--timeout 0.05 --max-retries 0 -o json pets list",
        base_url=url_of(silent_listener),
    )
    assert (result.returncode, result.stdout) == (3, "")
    body = json.loads(result.stderr)
    assert (body["code"], body["status"]) == ("timeout", None)


@POSIX_ONLY
def test_ctrl_c_exits_130_without_a_traceback(silent_listener: socket.socket) -> None:
    process = subprocess.Popen(
        [*DEFAULT_LAUNCHER, "pets", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(url_of(silent_listener), KEY),
        preexec_fn=sigint_as_in_a_terminal,
    )
    with reaped(process):
        silent_listener.settimeout(TIMEOUT)
        connection, _ = silent_listener.accept()  # the command now waits for an answer
        with connection:
            process.send_signal(signal.SIGINT)
            try:
                stdout, stderr = process.communicate(timeout=INTERRUPT_GRACE)
            except subprocess.TimeoutExpired:
                # Under CPython 3.13.0 the first SIGINT is now and then lost: seen in 2 of 900
                # runs here (none of 60 under 3.11), the command still in httpcore's recv(),
                # the signal delivered (caught, none pending) and no KeyboardInterrupt raised;
                # the SDK catches none. A user presses Ctrl-C again; what this test checks is
                # how the program then ends.
                process.send_signal(signal.SIGINT)
                stdout, stderr = process.communicate(timeout=TIMEOUT)
    assert (process.returncode, stdout, stderr) == (130, b"", b"")


#: A ``sitecustomize`` for a run: at exit, as the interpreter shuts down (after the command's
#: outcome, before logging's own flush at exit), the process gets a SIGINT, as from a Ctrl-C
#: pressed as the command ended; then Python code runs, where a handler for it would raise.
CTRL_C_AT_EXIT = """
import atexit, os, signal, sys

def interrupt():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(10_000):
        pass
    sys.stderr.write("went on\\n")

atexit.register(interrupt)
"""


@POSIX_ONLY
@pytest.mark.parametrize("launcher", LAUNCHERS)
@pytest.mark.parametrize(
    ("command", "status", "stdout"),
    [("pets list", 0, "[]\n"), ("--version", 0, f"animalstore {__version__}\n")],
    ids=["returned", "exited"],
)
def test_a_ctrl_c_once_the_outcome_is_out_is_ignored(
    api: Server,
    tmp_path: Path,
    launcher: Sequence[str],
    command: str,
    status: int,
    stdout: str,
) -> None:
    (tmp_path / "sitecustomize.py").write_text(CTRL_C_AT_EXIT, encoding="utf-8")
    env = environment(api.base_url, KEY)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    completed = subprocess.run(
        [*launcher, *command.split()],
        capture_output=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
        preexec_fn=sigint_as_in_a_terminal,
    )
    # Not "Exception ignored in atexit callback ... KeyboardInterrupt": the handler that ran
    # the rest of the shutdown was SIG_IGN, set by the entry point.
    assert (completed.returncode, completed.stdout.decode(), completed.stderr) == (
        status,
        stdout,
        b"went on\n",
    )


@contextlib.contextmanager
def sigint_put_back() -> Iterator[list[object]]:
    """Put this process's SIGINT handler back afterwards (``run`` ignores Ctrl-C when done);
    yield a list that then holds the handler that was left."""
    before = signal.getsignal(signal.SIGINT)
    left: list[object] = []
    try:
        yield left
    finally:
        left.append(signal.getsignal(signal.SIGINT))
        signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize(
    ("argv", "status"), [(["pets", "list"], 0), (["pets", "list", "--limit", "x"], 2)]
)
def test_run_exits_with_mains_status_and_leaves_ctrl_c_ignored(
    api: Server, monkeypatch: pytest.MonkeyPatch, argv: list[str], status: int
) -> None:
    monkeypatch.setattr(sys, "argv", ["anything", *argv])
    monkeypatch.setenv("ANIMALSTORE_BASE_URL", api.base_url)
    monkeypatch.setenv("ANIMALSTORE_API_KEY", KEY)
    with sigint_put_back() as left, pytest.raises(SystemExit) as exited:
        run_as_a_process()
    assert left == [signal.SIG_IGN]
    assert exited.value.code == status
    assert len(api.store.requests) == (1 if status == 0 else 0)


@pytest.mark.parametrize(
    ("prog", "usage"),
    [
        ((), "(see 'animalstore pets list --help')"),
        (("python -m x",), "(see 'python -m x pets list --help')"),
    ],
)
def test_run_names_the_program_in_its_messages(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    prog: tuple[str, ...],
    usage: str,
) -> None:
    monkeypatch.setattr(sys, "argv", ["anything", "pets", "list", "--limit", "x"])
    with sigint_put_back(), pytest.raises(SystemExit):
        run_as_a_process(*prog)
    assert capsys.readouterr().err == f"error: argument --limit: invalid int value: 'x' {usage}\n"


def test_a_ctrl_c_as_main_returns_exits_130_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(prog: str) -> int:
        raise KeyboardInterrupt  # as a Ctrl-C in the instant main returns would

    monkeypatch.setattr("animalstore_client._cli.main", interrupted)
    with sigint_put_back() as left, pytest.raises(SystemExit) as exited:
        run_as_a_process()
    assert (exited.value.code, left) == (130, [signal.SIG_IGN])


@POSIX_ONLY
def test_a_closed_pipe_ends_quietly(api: Server) -> None:
    rex(api)
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `animalstore pets list | head -0`
    try:
        completed = animalstore_child("pets list", api.base_url, stdout=write_end)
    finally:
        os.close(write_end)
    assert completed.returncode == 141
    assert completed.stderr == b""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_error_line_and_exit_4(api: Server) -> None:
    rex(api)
    with open("/dev/full", "wb") as full:
        completed = animalstore_child("pets list", api.base_url, stdout=full)
    assert completed.returncode == 4
    assert completed.stderr.decode() == (
        "error: cannot write the result to stdout: No space left on device\n"
    )


def test_a_closed_stdout_is_one_error_line_and_exit_4(api: Server) -> None:
    rex(api)
    completed = animalstore_child("pets list", api.base_url, stdout=CLOSED)
    assert completed.returncode == 4
    assert completed.stderr.decode() == "error: cannot write the result: stdout is closed\n"
    assert len(api.store.requests) == 1  # the call was made; only its output was lost


def test_a_sunset_date_past_the_year_9999_is_ignored_and_the_pet_created() -> None:
    from tests.reliability.faultserver import FaultServer, Reply

    pet = {"id": 1, "name": "Rex", "categoryId": 3}
    sunset = ("Sunset", "Fri, 31 Dec 9999 23:00:00 -0500")  # 10000 in UTC: past datetime
    with FaultServer() as server:
        server.script(Reply(201, json=pet, headers=[sunset]))
        result = run("pets create --name Rex --category-id 3", base_url=server.base_url)
        assert len(server.requests) == 1
    assert result.returncode == 0, result.stderr
    assert result.json() == pet
    assert result.stderr == ""


def test_an_error_line_shows_the_servers_control_characters_escaped() -> None:
    from tests.reliability.faultserver import FaultServer, Reply

    message = "no pet \x1b[31mhere\x1b[0m \u202eevil"
    with FaultServer() as server:
        server.script(Reply(404, json={"code": "not_found", "message": message, "status": 404}))
        result = run("pets list", base_url=server.base_url)
    assert result.returncode == 1
    (line,) = result.stderr_lines()
    assert "\x1b" not in line
    assert "\u202e" not in line
    assert line.startswith("error: 404 not_found: no pet ")
    assert "\\x1b[31mhere" in line


def test_any_error_line_is_one_line_with_control_characters_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Whatever an error says (a library's message, a future one), the line cannot drive the
    # terminal, reorder what it shows, or forge a second line.
    from animalstore_client._cli.output import print_error

    print_error(ValueError("bad \x1b[31mred\nerror: forged \u202eevil"), as_json=False)
    line = capsys.readouterr().err
    assert line.count("\n") == 1
    assert "\x1b" not in line
    assert "\u202e" not in line
    assert line.startswith("error: bad \\x1b[31mred error: forged ")


def test_other_warnings_are_not_printed_as_notices(
    api: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A warning that is not the SDK's DeprecationWarning, raised while the command runs (by
    # a library the user's environment loads, say), is left to Python's own warning display.
    from animalstore_client import _client

    original = _client.Client._request

    def noisy(self: _client.Client, *args: Any, **kwargs: Any) -> Any:
        warnings.warn("something else", UserWarning, stacklevel=1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(_client.Client, "_request", noisy)
    result = run("pets list", base_url=api.base_url)
    assert result.returncode == 0
    assert not any(line.startswith("notice:") for line in result.stderr_lines())
    assert "UserWarning: something else" in result.stderr


# -- --verbose ------------------------------------------------------------------------------


def test_verbose_logs_each_request_without_the_key(api: Server) -> None:
    result = run("-v pets create --name Rex --category-id 3", base_url=api.base_url)
    assert result.returncode == 0
    assert result.json()["id"] == 1
    logs = result.stderr
    assert re.search(r"animalstore_client DEBUG POST \S+/v1/pets -> 201 in [\d.]+ ms", logs)
    assert "animalstore_client.cli DEBUG using Client(base_url=" in logs
    assert "authorization" not in logs.lower()
    assert "bearer" not in logs.lower()
    assert "idempotency" not in logs.lower()


def test_verbose_and_animalstore_log_log_each_request_once(api: Server) -> None:
    result = run("-v pets list", base_url=api.base_url, ANIMALSTORE_LOG="info")
    assert result.returncode == 0
    assert len(re.findall(r"DEBUG GET \S+/v1/pets -> 200", result.stderr)) == 1


def test_without_verbose_nothing_is_logged(api: Server) -> None:
    result = run("pets list", base_url=api.base_url)
    assert (result.returncode, result.stderr) == (0, "")


def test_a_file_run_logs_its_requests_with_verbose_only(api: Server, tmp_path: Path) -> None:
    source = tmp_path / "pets.jsonl"
    source.write_text('{"name": "Rex", "categoryId": 3}\n', encoding="utf-8")
    quiet = run(
        f"pets create --from-file {source} --journal {tmp_path / 'quiet'}", base_url=api.base_url
    )
    loud = run(
        f"-v pets create --from-file {source} --journal {tmp_path / 'loud'}", base_url=api.base_url
    )

    assert (quiet.returncode, loud.returncode) == (0, 0)
    assert "DEBUG" not in quiet.stderr
    posts = re.findall(r"animalstore_client DEBUG POST \S+/v1/pets -> 201", loud.stderr)
    assert len(posts) == 1
    assert KEY not in loud.stderr


# -- help -----------------------------------------------------------------------------------


def test_help_lists_the_exit_codes_and_the_variables() -> None:
    result = run("--help", base_url=None, key=None)
    assert result.returncode == 0
    text = result.stdout
    for line in [
        "0    success",
        "1    the API answered with an error",
        "2    bad usage or a bad argument",
        "3    the API could not be reached",
        "130  interrupted (Ctrl-C)",
    ]:
        assert line in text
    for variable in ["ANIMALSTORE_API_KEY", "ANIMALSTORE_BASE_URL", "ANIMALSTORE_LOG"]:
        assert variable in text
    assert "prefer $ANIMALSTORE_API_KEY" in text
    for command in ["pets", "mock-server"]:
        assert command in text


def test_each_command_has_help() -> None:
    for command in ["pets", "pets list", "pets create", "pets get", "mock-server"]:
        result = run(f"{command} --help", base_url=None, key=None)
        assert result.returncode == 0
        assert result.stdout.startswith("usage: ")
        assert f"{command} [-h]" in result.stdout
        if command == "pets get":
            assert "deprecated" in result.stdout


def test_a_commands_epilog_is_printed_as_written_and_its_description_wrapped() -> None:
    # pets create's epilog is laid out by hand (its indented outputs and exit statuses), so it
    # is printed as it is written; a command's one-line description is wrapped to the width.
    from animalstore_client._cli.bulk import BULK_EPILOG

    create = run("pets create --help", base_url=None, key=None).stdout
    get = run("pets get --help", base_url=None, key=None).stdout

    assert create.endswith(f"\n\n{BULK_EPILOG}")
    assert (
        "\n\nFetch one animal by id (GET /pets/{petId}); deprecated, use 'pets list\n--status'.\n\n"
    ) in get


# -- mock-server ----------------------------------------------------------------------------


@POSIX_ONLY
def test_mock_server_serves_the_commands_until_ctrl_c() -> None:
    process = subprocess.Popen(
        [*DEFAULT_LAUNCHER, "mock-server", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(None, KEY),  # the user's own key is neither used nor shown
        preexec_fn=sigint_as_in_a_terminal,
    )
    with reaped(process):
        assert process.stdout is not None
        url_line, key_line = read_lines(process.stdout, 2, timeout=TIMEOUT)
        assert re.fullmatch(r"export ANIMALSTORE_BASE_URL=http://127\.0\.0\.1:\d+/v1", url_line)
        assert key_line == "export ANIMALSTORE_API_KEY=test-key"
        base_url = url_line.partition("=")[2]

        created = run(
            "pets create --name Rex --category-id 3",
            base_url=base_url,
            key="test-key",
        )
        assert (created.returncode, created.json()["id"]) == (0, 1)
        listed = run("pets list", base_url=base_url, key="test-key")
        assert listed.json() == [created.json()]

        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    check_output(stdout.decode(), stderr.decode())
    assert process.returncode == 130
    assert stderr.decode().splitlines() == [
        f"Fake animal store serving on {base_url}; Ctrl-C to stop.",
        "Stopped.",
    ]
    stopped = run("--max-retries 0 pets list", base_url=base_url, key="test-key")
    assert stopped.returncode == 3


def test_mock_server_on_a_busy_port_exits_1(silent_listener: socket.socket) -> None:
    port = silent_listener.getsockname()[1]
    result = run(f"mock-server --port {port}", base_url=None)
    assert (result.returncode, result.stdout) == (1, "")
    [error] = result.stderr_lines()
    assert error.startswith(f"error: cannot serve on port {port}: ")


def test_an_absurd_retry_after_from_the_server_is_an_error_line_not_a_traceback(
    clock: VirtualClock,
) -> None:
    from tests.reliability.faultserver import FaultServer, Reply

    busy = {"code": "busy", "message": "try later", "status": 503}
    absurd = (("Retry-After", "Mon, 1 Jan 99999999999999999999 00:00:00 GMT"),)
    with FaultServer() as server:
        server.script(Reply(503, json=busy, headers=absurd), Reply(503, json=busy, headers=absurd))
        result = run("--max-retries 1 pets list", base_url=server.base_url)
        assert len(server.requests) == 2

    [wait] = clock.slept  # the date ignored: the backoff's wait
    assert 0.375 <= wait <= 0.5
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr_lines() == ["error: 503 busy: try later"]


# -- names no terminal or encoding should choke on --------------------------------------------

#: Names a service can send (the JSON below escapes them all): a lone surrogate, which UTF-8
#: cannot encode; C1 CSI (U+009B), which a terminal reads as ESC [; bidi overrides, isolates
#: and marks, which reorder what a terminal shows; and printable text that stays as it is.
HOSTILE_NAMES = [
    "a\ud800b",
    "x\x9b31my",
    "\u202eevil\u202c",
    "\u202a\u202b\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
    "Café 🐈",
]
#: The characters above that a terminal must not get raw.
RAW_CONTROLS = "\x9b\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.fixture
def hostile_api() -> Iterator[str]:
    """A server whose every answer is a list of pets with ``HOSTILE_NAMES``; yields its URL.

    Not the fake store: it refuses to store a name with a lone surrogate.
    """
    from tests.reliability.faultserver import FaultServer, Reply

    pets = [{"id": i, "name": name, "categoryId": 1} for i, name in enumerate(HOSTILE_NAMES, 1)]
    body = json.dumps(pets, ensure_ascii=True).encode("ascii")
    with FaultServer(default=Reply(200, body=body)) as server:
        yield server.base_url


def decoded_names(stdout: str, output: str) -> list[str]:
    """The names in ``-o json`` or ``-o jsonl`` output, as ``json.loads`` decodes them."""
    lines = stdout.splitlines() if output == "jsonl" else [stdout]
    decoded = [json.loads(line) for line in lines]
    pets = decoded if output == "jsonl" else decoded[0]
    return [pet["name"] for pet in pets]


@pytest.mark.parametrize("option", ["-o json", "-o jsonl", ""])
def test_piped_json_writes_a_lone_surrogate_as_an_escape_and_keeps_the_rest(
    hostile_api: str, option: str
) -> None:
    # `run` decodes stdout as strict UTF-8, so the output must be encodable to get this far.
    result = run(f"{option} pets list", base_url=hostile_api)
    assert (result.returncode, result.stderr) == (0, "")
    assert decoded_names(result.stdout, "jsonl" if "jsonl" in option else "json") == HOSTILE_NAMES
    assert '"a\\ud800b"' in result.stdout  # the 6-character escape
    # Not a terminal: other characters are written raw, as before.
    assert "x\x9b31my" in result.stdout
    assert "\u202eevil\u202c" in result.stdout
    assert "Café 🐈" in result.stdout


@pytest.mark.parametrize("output", ["json", "jsonl"])
def test_json_on_a_terminal_escapes_controls_bidi_and_surrogates(
    hostile_api: str, output: str
) -> None:
    result = run(f"-o {output} pets list", base_url=hostile_api, stdout_terminal=True)
    assert (result.returncode, result.stderr) == (0, "")
    text = result.stdout  # decoded strictly: nothing unencodable
    for char in RAW_CONTROLS:
        assert char not in text, f"U+{ord(char):04X} printed raw"
    assert "\\u009b" in text
    assert "\\u202e" in text
    assert "\\ud800" in text
    assert "Café 🐈" in text  # printable text is not escaped
    assert decoded_names(text, output) == HOSTILE_NAMES


def test_csv_on_a_terminal_escapes_controls_bidi_and_surrogates(hostile_api: str) -> None:
    result = run("-o csv pets list", base_url=hostile_api, stdout_terminal=True)
    assert (result.returncode, result.stderr) == (0, "")
    text = result.stdout  # decoded strictly: nothing unencodable
    for char in RAW_CONTROLS:
        assert char not in text, f"U+{ord(char):04X} printed raw"
    # Escaped the table's way, as the docs say.
    names = [row.split(",")[1] for row in text.splitlines()[1:]]
    assert names == [
        "a\\ud800b",
        "x\\x9b31my",
        "\\u202eevil\\u202c",
        "\\u202a\\u202b\\u202d\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c",
        "Café 🐈",
    ]


# -- the deadline and retry lines ---------------------------------------------------------


def test_deadline_bounds_the_whole_command(silent_listener: socket.socket) -> None:
    # Per attempt, 30 s would pass three times over (with backoff) before the command gave up.
    result = run("--deadline 0.2 pets list", base_url=url_of(silent_listener))

    assert result.returncode == 3
    assert result.stdout == ""
    [line] = result.stderr_lines()
    assert line.startswith("error: GET ")
    assert line.endswith("failed: deadline=0.2 s passed before the call was done")


@pytest.mark.parametrize("value", ["0", "-2", "nan", "soon"])
def test_a_bad_deadline_is_a_usage_error(value: str) -> None:
    result = run(f"--deadline {value} pets list", base_url="http://127.0.0.1:9/v1")

    assert result.returncode == 2
    assert "deadline" in result.stderr


def retrying_server() -> Any:
    """A fault server that answers 503 (asking for a 0.4 s wait), then an empty list."""
    from tests.reliability.faultserver import FaultServer, Reply

    server = FaultServer(default=Reply(200, json=[])).start()
    server.script(Reply(503, headers={"Retry-After": "0.4"}))
    return server


def test_each_retry_is_a_line_on_stderr_when_it_is_a_terminal(clock: VirtualClock) -> None:
    server = retrying_server()
    try:
        result = run("-o json pets list", base_url=server.base_url, stderr_terminal=True)
    finally:
        server.close()
    assert (result.returncode, result.stdout) == (0, "[]\n")
    assert result.stderr_lines() == [
        f"retrying GET {server.base_url}/pets in 0.4 s after 503 (attempt 2 of 3)"
    ]
    assert len(server.requests) == 2
    assert clock.slept == [0.4]  # the wait the line announced


def test_retries_add_nothing_to_stderr_when_it_is_not_a_terminal(clock: VirtualClock) -> None:
    server = retrying_server()
    try:
        result = run("-o json pets list", base_url=server.base_url)
    finally:
        server.close()

    assert (result.returncode, result.stdout, result.stderr) == (0, "[]\n", "")
    assert len(server.requests) == 2
    assert clock.slept == [0.4]


def test_an_answer_past_max_response_bytes_is_an_api_error_with_its_own_code() -> None:
    from tests.reliability.faultserver import FaultServer, Reply

    with FaultServer(default=Reply(200, body=b"[" + b" " * 5000 + b"]")) as server:
        result = run("--max-response-bytes 1000 -o json pets list", base_url=server.base_url)
        fits = run("--max-response-bytes 6000 -o json pets list", base_url=server.base_url)

    assert (result.returncode, result.stdout) == (1, "")
    body = json.loads(result.stderr)
    assert (body["code"], body["status"]) == ("response_too_large", None)
    assert "max_response_bytes=1000" in body["message"]
    assert (fits.returncode, fits.stdout, fits.stderr) == (0, "[]\n", "")


def test_retry_lines_are_not_printed_twice_beside_the_sdk_log(clock: VirtualClock) -> None:
    server = retrying_server()
    try:
        result = run(
            "-o json pets list",
            base_url=server.base_url,
            stderr_terminal=True,
            ANIMALSTORE_LOG="info",
        )
    finally:
        server.close()
    assert clock.slept == [0.4]
    assert (result.returncode, result.stdout) == (0, "[]\n")
    [line] = [line for line in result.stderr_lines() if "retrying GET" in line]
    assert line.endswith(f"retrying GET {server.base_url}/pets in 0.4 s after 503 (attempt 2 of 3)")


@POSIX_ONLY
def test_mock_server_takes_a_key_and_misbehaves_as_told(clock: VirtualClock) -> None:
    process = subprocess.Popen(
        [
            *DEFAULT_LAUNCHER,
            "mock-server",
            "--port=0",
            "--api-key=shell-key",
            "--fault=delay:5,operation=list",
            "--fault=error:503,retry-after=0.01,times=2,operation=list",
            "--fault=drop-after,operation=create",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(None, KEY),
        preexec_fn=sigint_as_in_a_terminal,
    )
    with reaped(process):
        assert process.stdout is not None
        url_line, key_line = read_lines(process.stdout, 2, timeout=TIMEOUT)
        assert key_line == "export ANIMALSTORE_API_KEY=shell-key"
        base_url = url_line.partition("=")[2]

        slow = run("--deadline 0.1 pets list", base_url=base_url, key="shell-key")
        assert slow.returncode == 3
        assert "deadline" in slow.stderr
        assert clock.slept == []
        listed = run("--max-retries 2 pets list", base_url=base_url, key="shell-key")
        assert (listed.returncode, listed.json()) == (0, [])  # 2 x 503, then the list
        assert clock.slept == [0.3, 0.3]  # retry-after 0.01, raised to the floor
        created = run("pets create --name Rex --category-id 3", base_url=base_url, key="shell-key")
        assert created.returncode == 3  # the answer was lost: unreachable, not resent
        listed = run("pets list", base_url=base_url, key="shell-key")
        assert [pet["name"] for pet in listed.json()] == ["Rex"]

        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=TIMEOUT)
    assert stderr.decode().splitlines()[1:4] == [
        "fault 1: the next list request: process it, answer 5 s late",
        "fault 2: the next 2 list requests: answer 503 unavailable"
        " ('injected fault: 503 Service Unavailable'), retry-after: 0.01, unprocessed",
        "fault 3: the next create request: process it, then hang up without answering",
    ]


def test_mock_server_refuses_a_malformed_fault() -> None:
    result = run("mock-server --fault error:abc", base_url=None)
    assert result.returncode == 2
    assert "argument --fault: status must be a number, got 'abc'" in result.stderr


@pytest.mark.parametrize(
    ("argv", "asked"),
    [
        (["mock-server"], (8080, "test-key", [], False)),
        (
            ["--api-key", "global", "mock-server", "--port", "0", "--honour-idempotency-keys"],
            (0, "global", [], True),
        ),
        (
            ["--api-key", "global", "mock-server", "--api-key", "own", "--port", "8000"],
            (8000, "own", [], False),
        ),
        # An empty key is no key: the next one given, else the store's default.
        (["--api-key", "global", "mock-server", "--api-key", ""], (8080, "global", [], False)),
        (["--api-key", "", "mock-server"], (8080, "test-key", [], False)),
    ],
)
def test_mock_server_serves_what_its_options_say(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], asked: tuple[object, ...]
) -> None:
    # What the command hands the store's server, the server's own defaults filled in (it is
    # run for real above), through the name the testing package exports.
    import inspect

    import animalstore_client.testing as store_testing

    signature = inspect.signature(store_testing.serve_in_foreground)
    served: list[tuple[object, ...]] = []

    def serve(*args: object, **kwargs: object) -> int:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        port, api_key, faults, honour_idempotency_keys = bound.arguments.values()
        served.append((port, api_key, list(faults), honour_idempotency_keys))
        return 0

    monkeypatch.setattr(store_testing, "serve_in_foreground", serve)

    assert invoke(argv, {"ANIMALSTORE_API_KEY": None}).returncode == 0
    assert served == [asked]


def test_an_unexpected_error_is_not_taken_for_an_api_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A bug (here, one put into the client by the test) keeps its traceback: no exit status of
    # the command line's stands for it.
    import animalstore_client

    def broken(self: object, **options: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr(animalstore_client.Client, "list_pets", broken)
    environ = {"ANIMALSTORE_BASE_URL": "http://127.0.0.1:9/v1", "ANIMALSTORE_API_KEY": KEY}
    with pytest.raises(RuntimeError, match=r"^a bug$"):
        invoke(["pets", "list"], environ)


#: The default policy's fields after max_retries, as the client's repr shows them.
_POLICY_REST = (
    "initial_delay=0.5, max_delay=8.0, jitter=0.25, "
    "statuses=frozenset({408, 429, 500, 502, 503, 504})"
)


@pytest.mark.parametrize(
    ("options", "settings"),
    [
        (
            "",
            "timeout=Timeout(connect=5.0, read=30.0, write=30.0, pool=30.0), "
            f"retry=RetryPolicy(max_retries=2, {_POLICY_REST}), "
            "deadline=None, max_response_bytes=16777216",
        ),
        (
            "--timeout 7 --deadline 9.5 --max-retries 0 --max-response-bytes 1000",
            f"timeout=Timeout(timeout=7.0), retry=RetryPolicy(max_retries=0, {_POLICY_REST}), "
            "deadline=9.5, max_response_bytes=1000",
        ),
    ],
)
def test_the_client_is_built_with_the_options_or_their_defaults(
    api: Server, options: str, settings: str
) -> None:
    result = run(f"{options} -v pets list", base_url=api.base_url)
    assert result.returncode == 0
    [using] = [line for line in result.stderr_lines() if " using Client(" in line]
    assert using.endswith(
        f"using Client(base_url='{api.base_url}/', {settings}, default_headers=[])"
    )


# -- --help: what it tells a user, option by option -------------------------------------------
# Each option's name, the word for its value and what it does, for every command; read with
# spaces folded (the layout follows the terminal's width and the Python version; the words do
# not).

OUTPUT = "--output FORMAT table, json, jsonl or csv (default: table on a terminal, json otherwise)"
HELP: dict[str, list[str]] = {
    "": [
        "usage: animalstore [-h] [--version] [--base-url URL | --environment "
        "{production,staging}] [--api-key KEY] [--timeout SECONDS] [--deadline SECONDS] "
        "[--max-response-bytes N] [--max-retries N] [-v] [-o FORMAT] COMMAND ...",
        "Use the animal store API from the shell.",
        "--version show program's version number and exit",
        "--base-url URL the API's address (default: $ANIMALSTORE_BASE_URL)",
        "--environment {production,staging} use this deployment's address (default: production)",
        "--api-key KEY the API key; prefer $ANIMALSTORE_API_KEY, as command lines end up in "
        "shell history and process lists",
        "--timeout SECONDS per attempt (default: 5 to connect, 30 for the rest)",
        "--deadline SECONDS the most a whole call may take, retries and waits included "
        "(default: no limit)",
        "--max-response-bytes N the most bytes an answer's body may hold once decoded "
        "(default: 16 MiB)",
        "--max-retries N retries of a failed attempt (default: 2)",
        "--verbose log each request on stderr (DEBUG)",
        OUTPUT,
        "commands: COMMAND pets list, add or fetch animals mock-server serve the built-in "
        "reference store on 127.0.0.1 until Ctrl-C",
    ],
    "pets": [
        "usage: animalstore pets [-h] COMMAND ...",
        "commands: COMMAND list list animals (GET /pets) create add an animal, or every "
        "animal of a file (POST /pets) get fetch one animal by id (GET /pets/{petId}); "
        "deprecated, use 'pets list --status'",
    ],
    "pets list": [
        "usage: animalstore pets list [-h] [-o FORMAT] [--status {available,pending,sold}] "
        "[--limit N]",
        "List animals (GET /pets).",
        OUTPUT,
        "--status {available,pending,sold} only animals with this status",
        "--limit N at most N, 1 to 100 (default: 20)",
    ],
    "pets create": [
        "usage: animalstore pets create [-h] [-o FORMAT] [--name NAME] [--category-id N] "
        "[--status {available,pending,sold}] [--idempotency-key KEY] [--from-file FILE] "
        "[--format {jsonl,csv}] [--concurrency N] [--journal FILE]",
        "Add an animal, or every animal of a file (POST /pets).",
        OUTPUT,
        "--name NAME the animal's name (required without --from-file)",
        "--category-id N its category's id (required without --from-file)",
        "--status {available,pending,sold} its status",
        "--idempotency-key KEY sent as Idempotency-Key (default: a new one); give the same "
        "key to run the command again after a lost answer, against a service that "
        "deduplicates",
        "every animal of a file (see below): --from-file FILE create each record of FILE "
        "(- for stdin): JSON lines or CSV",
        "--format {jsonl,csv} the file's format (default: from its extension, .jsonl, "
        ".ndjson or .csv; jsonl for stdin)",
        "--concurrency N calls in flight, 1 to 100 (default: 8)",
        "--journal FILE keep each record's key and outcome in FILE; run the same command "
        "with the same journal again to resume, creating none twice",
    ],
    "pets get": [
        "usage: animalstore pets get [-h] [-o FORMAT] ID",
        "Fetch one animal by id (GET /pets/{petId}); deprecated, use 'pets list --status'.",
        "ID the animal's id",
        OUTPUT,
    ],
    "mock-server": [
        "usage: animalstore mock-server [-h] [--port PORT] [--api-key KEY] [--fault FAULT] "
        "[--honour-idempotency-keys]",
        "Serve an in-memory reference store on 127.0.0.1 until Ctrl-C (exit 130). Prints the "
        "export lines for its URL and its key (test-key unless --api-key is given), and on "
        "stderr each scripted fault.",
        "--port PORT TCP port, 0 for a free one (default: 8080)",
        "--api-key KEY the API key the store accepts (default: test-key)",
        "--fault FAULT misbehave on the next matching request, in order (repeatable): "
        "KIND[:ARG][,NAME=VALUE...] with KIND one of error:STATUS, delay:SECONDS, "
        "drop-before, drop-after, not-json, wrong-schema, truncated; NAME one of operation "
        "(list, create, get, any), times (N or always; default 1), code, message, "
        "retry-after, header (NAME:VALUE), reset (yes/no). Example: --fault "
        "error:503,retry-after=1,times=2 --fault drop-after,operation=create",
        "--honour-idempotency-keys answer a POST whose Idempotency-Key was seen before with "
        "the first answer again",
    ],
}


def folded_help(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "300")  # what argparse reads for the width
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        main([*command.split(), "--help"])
    assert exited.value.code == 0
    return " ".join(out.getvalue().split())


@pytest.mark.parametrize("command", list(HELP), ids=lambda command: command or "animalstore")
def test_the_help_says_what_each_option_takes_and_does(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = f" {folded_help(command, monkeypatch)} "
    # Each entry whole: spaces (or the ends) on both sides.
    missing = [entry for entry in HELP[command] if f" {entry} " not in shown]
    assert missing == [], shown
