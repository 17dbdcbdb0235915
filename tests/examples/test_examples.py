"""Run every example and check what it prints, so that no example can break or drift unseen.

The scripts run in subprocesses, with ``-W error`` and without the ``ANIMALSTORE_*`` variables,
so they use the built-in reference store and their output is the same on every run. The
notebook is executed with nbclient, and the fresh outputs of each code cell must equal the
outputs stored in the file.

After changing the notebook on purpose, store its fresh outputs with:

    UPDATE_NOTEBOOK=1 python -m pytest tests/examples -k notebook
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from animalstore_client import Pet
from animalstore_client.testing import FakeAnimalStore
from tests.examples.ahead import RunsAhead, session_items

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples"
NOTEBOOK = EXAMPLES / "notebook.ipynb"

DEPRECATION = (
    "DeprecationWarning: get_pet() calls GET /pets/{petId}, which is deprecated and will be"
    " removed on 5 December 2030; use list_pets() with a status filter instead"
)

# What each script prints, line by line; see `normalise` for what is masked.
EXPECTED_OUTPUT: dict[str, list[str]] = {
    "quickstart.py": [
        "ANIMALSTORE_API_KEY is not set: using the built-in reference store at"
        " http://127.0.0.1:<port>/v1",
        "",
        "1. Add two animals at http://127.0.0.1:<port>/v1/",
        "    id  name         category  status",
        "     1  Rex                 1  available",
        "     2  Tom                 2  pending",
        "",
        "2. List the available ones (at most 5)",
        "    id  name         category  status",
        "     1  Rex                 1  available",
        "",
        "3. Fetch Rex by id 1 (a deprecated operation)",
        "    id  name         category  status",
        "     1  Rex                 1  available",
        f"  {DEPRECATION}",
        "",
        "4. Fetch an animal that does not exist",
        "  NotFoundError: 404 not_found: no pet with petId '999999' (request id req_5)",
        "",
        "5. Call with a wrong API key",
        "  AuthenticationError: 401 unauthorized: invalid API key (request id req_6)",
    ],
    "async_concurrency.py": [
        "ANIMALSTORE_API_KEY is not set: using the built-in reference store on 127.0.0.1",
        "Created 50 animals, at most 10 requests at a time",
        "  pet-01 to pet-50, ids 1 to 50",
        "  available   16",
        "  pending     17",
        "  sold        17",
        "Listed each status, 3 requests at once, at most 100 animals each",
        "  available   16 listed,  16 of those created",
        "  pending     17 listed,  17 of those created",
        "  sold        17 listed,  17 of those created",
    ],
    "error_handling.py": [
        "ANIMALSTORE_API_KEY is not set: using the built-in reference store, in process",
        "",
        "1. A wrong API key: AuthenticationError (401)",
        "  AuthenticationError: status_code=401 code='unauthorized' request_id='req_1'"
        " message='invalid API key'",
        "",
        "2. An animal that does not exist: NotFoundError (404)",
        "  NotFoundError: status_code=404 code='not_found' request_id='req_2'"
        " message=\"no pet with petId '999999'\"",
        "",
        "3. Bad arguments: TypeError or ValueError, raised before anything is sent",
        "  TypeError: category_id must be an int, got str '3'",
        "  ValueError: limit must be between 1 and 100, got 500",
        "  ValueError: status must be one of 'available', 'pending', 'sold', got 'lost'",
        "",
        "4. No service at the address: APIConnectionError (APITimeoutError on a timeout)",
        "  APIConnectionError: message='GET http://127.0.0.1:9/v1/pets failed: <reason>'",
        "",
        "5. One handler for all of them",
        "  right key  created Rex with id 1",
        "  wrong key  the API key was refused: check ANIMALSTORE_API_KEY",
        "  offline    no usable answer (APIConnectionError): try again later",
    ],
}

#: Scripts that take longer than a test of the default tier may: each is run by a deep test of
#: its own, and its recipe by a small twin in the default tier (tests/examples/test_dask_recipe.py).
DEEP_SCRIPTS = {"dask_load.py"}
# Every script in examples/, except the pytest module, which test_your_code_module_passes runs.
SCRIPTS = sorted(
    path.name
    for path in EXAMPLES.glob("*.py")
    if not path.name.startswith("test_") and path.name not in DEEP_SCRIPTS
)


def normalise(text: str) -> str:
    """Mask what legitimately differs between runs, and trailing whitespace."""
    text = re.sub(r"127\.0\.0\.1:(?!9/)\d+", "127.0.0.1:<port>", text)  # :9 is a fixed port
    text = re.sub(r"(/v1/pets failed: )[^'\"\n]*", r"\1<reason>", text)  # the OS's wording
    text = re.sub(r"\b0x[0-9a-fA-F]+\b", "0x<address>", text)
    text = re.sub(r"[^\s'\"]*ipykernel_\d+/\d+\.py", "<cell>", text)  # a cell's temp file
    return "\n".join(line.rstrip() for line in text.splitlines())


def example_env() -> dict[str, str]:
    """The environment for an example: no ANIMALSTORE_* variables, and the SDK importable."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("ANIMALSTORE_")}
    env["PY_COLORS"] = "0"
    try:
        importlib.metadata.distribution("animalstore-client")
    except importlib.metadata.PackageNotFoundError:
        # Not installed (a checkout on PYTHONPATH, say): point the examples at this checkout.
        # When it is installed, the examples use the installed package, as a user's would.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


Finished = subprocess.CompletedProcess[str]


def run_python(*args: str) -> Finished:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO_ROOT,
        env=example_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def script_run(script: str) -> tuple[str, ...]:
    """How an example script is run: with warnings as errors."""
    return ("-W", "error", f"examples/{script}")


#: How the user's test module is run: as a user runs it, without Hypothesis's plugin, which a
#: user of the SDK need not have and which imports all of Hypothesis at the end of every run
#: (a second or more), though no test there uses it.
YOUR_CODE_RUN = (
    *("-m", "pytest", "examples/test_your_code.py"),
    *("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"),
)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Iterator[RunsAhead[tuple[str, ...], Finished]]:
    """``run_python`` for the scripts and the user's test module, each run a little ahead of
    the test that checks it (in the order of the session's tests)."""
    order: list[tuple[str, ...]] = []
    for item in session_items(request):
        if item.originalname == test_example_script_prints_what_it_should.__name__:
            order.append(script_run(str(item.callspec.params["script"])))
        elif item.originalname == test_your_code_module_passes.__name__:
            order.append(YOUR_CODE_RUN)
    ahead = RunsAhead(order, lambda args: run_python(*args))
    yield ahead
    ahead.close()


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_script_prints_what_it_should(
    script: str, runs: RunsAhead[tuple[str, ...], Finished]
) -> None:
    result = runs.result(script_run(script))  # run_python(*script_run(script)), run ahead

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    if script in EXPECTED_OUTPUT:  # a script added since is only checked to run cleanly
        assert normalise(result.stdout).splitlines() == EXPECTED_OUTPUT[script]


def test_async_concurrency_counts_what_it_created_in_a_store_that_holds_many_already(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A list call returns at most 100 animals, the oldest first: in a store of 4,000 the 50
    # new ones are on no list, and a count taken from the lists would be 0 for each status.
    spec = importlib.util.spec_from_file_location(
        "async_concurrency", EXAMPLES / "async_concurrency.py"
    )
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    store = FakeAnimalStore()
    for number in range(4000):
        store.add_pet(f"old-{number}", 1, ("available", "pending", "sold")[number % 3])

    async def run() -> None:
        async with store.async_client() as client:
            await example.run(client)

    asyncio.run(run())

    assert capsys.readouterr().out.splitlines() == [
        "Created 50 animals, at most 10 requests at a time",
        "  pet-01 to pet-50, ids 4001 to 4050",
        "  available   16",
        "  pending     17",
        "  sold        17",
        "Listed each status, 3 requests at once, at most 100 animals each",
        "  available  100 listed,   0 of those created: a full page, there may be more",
        "  pending    100 listed,   0 of those created: a full page, there may be more",
        "  sold       100 listed,   0 of those created: a full page, there may be more",
    ]


def readme_errors_block() -> str:
    from tests.examples.test_readme import README, python_blocks

    [block] = [
        block
        for block in python_blocks(README.read_text(encoding="utf-8"))
        if block.section == "Errors"
    ]
    return block.code


def test_the_readmes_errors_block_says_what_happened_on_success(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = FakeAnimalStore(api_keys=("test-key",))
    with store.serve() as base_url:
        monkeypatch.setenv("ANIMALSTORE_API_KEY", "test-key")
        monkeypatch.setenv("ANIMALSTORE_BASE_URL", base_url)
        exec(readme_errors_block(), {})

    assert capsys.readouterr().out == (
        "created Pet(id=1, name='Rex', category_id=3, status=None)\n"
    )


def test_the_readmes_errors_block_handles_a_missing_key_in_its_own_try(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANIMALSTORE_API_KEY", raising=False)

    exec(readme_errors_block(), {})

    assert capsys.readouterr().out == (
        "not sent: no API key: pass api_key= or set the ANIMALSTORE_API_KEY variable\n"
    )


@pytest.mark.parametrize("page", ["README.md", "docs/guide.md"])
def test_where_get_pet_is_flagged_the_settings_that_make_type_checkers_say_so_are_named(
    page: str,
) -> None:
    # mypy --strict and pyright's default mode say nothing of a call to get_pet.
    text = " ".join((REPO_ROOT / page).read_text(encoding="utf-8").split())

    assert (
        "which type checkers report only when told to: mypy with `--enable-error-code "
        "deprecated` (`--strict` leaves it off), pyright in strict mode or with "
        "`reportDeprecated`"
    ) in text


def test_the_testing_page_says_how_each_mocking_tool_meets_the_sdk() -> None:
    text = " ".join((REPO_ROOT / "docs" / "testing.md").read_text(encoding="utf-8").split())
    section = text.split("## respx, pytest-httpx, vcrpy and Prism", 1)[1]

    for said in [
        "they see the SDK's default backend only",
        "A client on aiohttp (`http_client=DefaultAioHttpClient()`) or httpx2 sends its requests "
        "past them",
        '`filter_headers=["authorization"]`',
        "it leaves out the path of the document's `servers` (`/v1`)",
        '`Client("any-key", base_url="http://127.0.0.1:4010")`',
        "**aioresponses** does not work with aiohttp 3.14",
        "https://github.com/pnuckowski/aioresponses/issues/289",
    ]:
        assert said in section, said


def test_respx_sees_the_default_backend_and_not_aiohttp() -> None:
    import respx

    from animalstore_client import APIConnectionError, AsyncClient, DefaultAioHttpClient

    async def list_pets(base_url: str, *, aiohttp: bool = False) -> list[Pet]:
        if aiohttp:
            async with (
                DefaultAioHttpClient() as http,
                AsyncClient(
                    "test-key", base_url=base_url, http_client=http, max_retries=0
                ) as client,
            ):
                return await client.list_pets()
        async with AsyncClient("test-key", base_url=base_url, max_retries=0) as client:
            return await client.list_pets()

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        root = f"http://127.0.0.1:{probe.getsockname()[1]}"
    # An address like Prism's: the document's paths at the root, no /v1.
    with respx.mock(base_url=root) as mock:
        route = mock.get("/pets").respond(200, json=[{"id": 1, "name": "Rex", "categoryId": 3}])
        assert asyncio.run(list_pets(root)) == [Pet(1, "Rex", 3)]
        assert route.call_count == 1
        with pytest.raises(APIConnectionError):  # refused: respx was not asked
            asyncio.run(list_pets(root, aiohttp=True))
        assert route.call_count == 1


def test_every_expected_output_belongs_to_a_script() -> None:
    assert set(EXPECTED_OUTPUT) <= set(SCRIPTS)


def test_your_code_module_passes(runs: RunsAhead[tuple[str, ...], Finished]) -> None:
    result = runs.result(YOUR_CODE_RUN)  # run_python(*YOUR_CODE_RUN), run ahead

    assert result.returncode == 0, result.stdout + result.stderr
    # Exactly this many tests, all passed: no failure, skip or warning.
    assert re.fullmatch(r"7 passed in [\d.]+s", result.stdout.splitlines()[-1]), result.stdout


# -- the notebook ---------------------------------------------------------------------------


def read_notebook() -> nbformat.NotebookNode:
    notebook: nbformat.NotebookNode
    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    return notebook


def cell_outputs(cell: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """A code cell's outputs as (kind, normalised text); consecutive streams are merged."""
    outputs: list[tuple[str, str]] = []
    for output in cell.outputs:
        if output.output_type == "stream":
            kind, text = f"stream {output.name}", output.text
            if outputs and outputs[-1][0] == kind:
                kind, previous = outputs.pop()
                text = previous + text
        elif output.output_type == "error":
            kind, text = "error", f"{output.ename}: {output.evalue}"
        else:  # execute_result or display_data
            kind, text = output.output_type, output.data.get("text/plain", "")
        outputs.append((kind, text))
    return [(kind, normalise(text)) for kind, text in outputs]


def notebook_outputs(notebook: nbformat.NotebookNode) -> dict[str, list[tuple[str, str]]]:
    """Every code cell's outputs, keyed by its position and first line, for readable diffs."""
    return {
        f"cell {index}: {cell.source.splitlines()[0]}": cell_outputs(cell)
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
    }


def test_stored_notebook_was_run_top_to_bottom_without_errors() -> None:
    notebook = read_notebook()
    nbformat.validate(notebook)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]

    assert notebook.metadata.kernelspec.name == "python3"
    assert [cell.execution_count for cell in code_cells] == list(range(1, len(code_cells) + 1))
    kinds = {kind for cell in code_cells for kind, _ in cell_outputs(cell)}
    assert kinds <= {"stream stdout", "execute_result"}  # no error, nothing on stderr
    # Pets and lists of them show as the SDK's HTML tables, not as text.
    tables = [
        output.data["text/html"]
        for cell in code_cells
        for output in cell.outputs
        if output.output_type == "execute_result" and "text/html" in output.data
    ]
    sdk_tables = [html for html in tables if html.startswith("<table><thead><tr><th>id</th>")]
    assert len(sdk_tables) == 5  # Tom, Rex, the available list, the fetched Rex, the async list


def test_notebook_runs_and_its_outputs_match_the_stored_ones() -> None:
    from nbclient import NotebookClient

    stored = read_notebook()
    fresh = read_notebook()
    NotebookClient(
        fresh,
        kernel_name="python3",
        timeout=60,
        record_timing=False,
        coalesce_streams=True,
        resources={"metadata": {"path": str(EXAMPLES)}},
    ).execute(env=example_env())  # raises CellExecutionError if a cell fails

    if os.environ.get("UPDATE_NOTEBOOK") == "1":
        fresh.metadata.language_info = {"name": "python"}  # no version details in the file
        nbformat.write(fresh, NOTEBOOK)  # type: ignore[no-untyped-call]
    assert notebook_outputs(fresh) == notebook_outputs(stored)


def test_the_notebook_names_the_type_list_pets_returns() -> None:
    from animalstore_client.testing import FakeAnimalStore

    with FakeAnimalStore().client() as client:
        returned = type(client.list_pets()).__name__
    [words] = [
        cell.source
        for cell in read_notebook().cells
        if cell.cell_type == "markdown" and "`list_pets`" in cell.source
    ]

    assert f"The result is a `{returned}`" in words
    assert "a plain `list[Pet]` that" not in words
