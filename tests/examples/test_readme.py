"""Every ``python`` block in README.md and docs/*.md runs, unmodified, as a reader would run it.

The reader's set-up is the Quickstart's: ``animalstore mock-server`` in another shell, and its
two ``export`` lines pasted. So here: one reference store started exactly so (on a free port),
its printed ``ANIMALSTORE_API_KEY`` and ``ANIMALSTORE_BASE_URL`` in the environment, no other
``ANIMALSTORE_*`` variable, and each block in a fresh ``python -W error`` process, which must
exit 0 and print nothing on stderr (no traceback, no warning). Only what the page says to
install above the block can be imported there (``documented_installs``): the SDK, the extras and
packages its install commands name, and what they depend on.

A block whose first line is a comment starting with ``# Continues`` runs right after the block
before it, in the same process (the README says so in that comment). Blocks are found afresh on
every run, so a new one is tested without touching this file.
"""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from tests.conftest import read_lines, reaped, run_child, sigint_as_in_a_terminal
from tests.examples.ahead import RunsAhead, session_items
from tests.examples.documented_installs import (
    GUARD,
    SDK,
    allowed,
    requirements_named,
    unimportable,
)
from tests.examples.test_examples import REPO_ROOT, example_env

README = REPO_ROOT / "README.md"
DOCS = sorted((REPO_ROOT / "docs").glob("*.md"))
#: An opening fence of a Python block (```python or ```py), and its closing fence.
_OPENING = re.compile(r"```(?:python|py)\s*")
_CONTINUES = re.compile(r"#\s*continues\b", re.IGNORECASE)
SCRIPT = Path(sys.executable).with_name("animalstore")
MOCK_SERVER = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "animalstore_client"]


@attrs.frozen
class Block:
    """One fenced Python block: where it starts, the section it is in, its code."""

    line: int
    section: str
    code: str
    file: str = "README.md"


def python_blocks(text: str, file: str = "README.md") -> list[Block]:
    """Every ```python block of a Markdown text, in order."""
    blocks: list[Block] = []
    section = "(top)"
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        elif line.startswith("```"):
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            if _OPENING.fullmatch(line):
                code = "\n".join(lines[index + 1 : end]) + "\n"
                blocks.append(Block(index + 1, section, code, file))
            index = end  # skip the body: a "# comment" in a block is no heading
        index += 1
    return blocks


def programs(blocks: list[Block]) -> list[list[Block]]:
    """Group the blocks into what runs in one process: a block, and those continuing it."""
    grouped: list[list[Block]] = []
    for block in blocks:
        if _CONTINUES.match(block.code) and grouped:
            grouped[-1].append(block)
        else:
            grouped.append([block])
    return grouped


PROGRAMS = [
    program
    for path in (README, *DOCS)
    for program in programs(
        python_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(REPO_ROOT)))
    )
]


def guard_for(block: Block) -> str:
    """The guard that leaves importable only what the block's page says to install above it."""
    text = (REPO_ROOT / block.file).read_text(encoding="utf-8")
    names = allowed(requirements_named(text, block.line))
    return GUARD.format(unimportable=set(unimportable(names)))


@attrs.frozen
class MockServer:
    """A running ``animalstore mock-server``: the lines it printed and the reader's variables."""

    printed: list[str]
    env: dict[str, str]


@pytest.fixture(scope="module")
def mock_server() -> Iterator[MockServer]:
    """The Quickstart's set-up: ``animalstore mock-server`` and its two exports applied."""
    env = example_env()
    server = subprocess.Popen(
        [*MOCK_SERVER, "mock-server", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=sigint_as_in_a_terminal,
    )
    with reaped(server):
        try:
            assert server.stdout is not None
            printed = read_lines(server.stdout, 2, timeout=20)
            for line in printed:
                command, assignment = shlex.split(line)
                assert command == "export"
                name, _, value = assignment.partition("=")
                env[name] = value
            assert set(env) >= {"ANIMALSTORE_API_KEY", "ANIMALSTORE_BASE_URL"}
            yield MockServer(printed, env)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=10)


Finished = subprocess.CompletedProcess[str]


def run_program(program: list[Block], env: dict[str, str], directory: Path) -> Finished:
    """Run ``program`` as a reader would, in a fresh ``python -W error`` in ``directory``."""
    source = directory / "readme_block.py"
    source.write_text("\n".join(block.code for block in program), encoding="utf-8")
    guard = directory / "guard.py"
    guard.write_text(guard_for(program[0]), encoding="utf-8")
    return run_child(sys.executable, "-W", "error", guard, source, cwd=directory, env=env)


@pytest.fixture(scope="module")
def programs_run(
    request: pytest.FixtureRequest,
    mock_server: MockServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RunsAhead[int, Finished]]:
    """The session's programs (by their place in ``PROGRAMS``), each run against the mock
    server in a directory of its own, ahead of its test."""
    name = test_readme_block_runs_as_written.__name__
    order = [
        next(i for i, program in enumerate(PROGRAMS) if program is item.callspec.params["program"])
        for item in session_items(request)
        if item.originalname == name
    ]

    base = tmp_path_factory.mktemp("readme")

    def run(index: int) -> Finished:  # in a worker thread: mkdtemp is safe there
        directory = Path(tempfile.mkdtemp(prefix=f"program-{index}-", dir=base))
        return run_program(PROGRAMS[index], mock_server.env, directory)

    runs = RunsAhead(order, run)
    yield runs
    runs.close()


@pytest.mark.skipif(sys.platform == "win32", reason="stops the mock server with SIGINT")
@pytest.mark.parametrize(
    "program", PROGRAMS, ids=[f"{p[0].file} line {p[0].line} ({p[0].section})" for p in PROGRAMS]
)
def test_readme_block_runs_as_written(
    program: list[Block], programs_run: RunsAhead[int, Finished]
) -> None:
    # Run as a reader would (``run_program``), a little ahead of this test.
    result = programs_run.result(next(i for i, p in enumerate(PROGRAMS) if p is program))

    where = f"{program[0].file} line {program[0].line}"
    assert result.returncode == 0, f"{where}:\n{result.stdout}{result.stderr}"
    assert result.stderr == "", where


@pytest.mark.skipif(sys.platform == "win32", reason="stops the mock server with SIGINT")
def test_the_quickstart_shows_what_mock_server_prints(mock_server: MockServer) -> None:
    # The README shows the default port, 8080; the test server took a free one.
    port = re.search(r":(\d+)/v1", mock_server.printed[0])
    assert port is not None
    shown = [line.replace(f":{port[1]}/", ":8080/") for line in mock_server.printed]
    assert "\n".join(shown) in README.read_text(encoding="utf-8")


def test_the_blocks_the_issue_named_are_found() -> None:
    sections = {block.section for program in PROGRAMS for block in program}
    assert sections >= {
        "Three calls",
        "Async",
        "Errors",
        "Raw responses",
        "Testing your code with the built-in store",
        "Configuration",
    }


def test_the_grouping_follows_continues_comments() -> None:
    text = "\n".join(
        [
            "# Guide",
            "```python",
            "x = 1",
            "```",
            "```sh",
            "# not a heading: a shell comment",
            "```",
            "## Next",
            "```py",
            "# Continues the block above: uses x.",
            "print(x)",
            "```",
            "```python",
            "# An ordinary comment",
            "print(2)",
            "```",
        ]
    )

    grouped = programs(python_blocks(text))

    assert [[block.line for block in group] for group in grouped] == [[2, 9], [13]]
    assert [block.section for block in grouped[0]] == ["Guide", "Next"]
    assert grouped[0][1].code == "# Continues the block above: uses x.\nprint(x)\n"


def test_the_harness_is_documented() -> None:
    text = (REPO_ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert "tests/examples/test_readme.py" in text
    assert "# Continues" in text


def test_the_readme_is_short_and_its_contents_and_links_lead_somewhere() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    }
    for target in re.findall(r"\]\(([^)]+)\)", text):
        if target.startswith("#"):
            assert target[1:] in anchors, target
        else:
            assert (REPO_ROOT / target.split("#")[0]).is_file(), target
    # Every page in docs/ is reachable from the README.
    assert {f"docs/{page.name}" for page in DOCS} <= set(re.findall(r"\((docs/[\w.-]+)", text))
    # The order a newcomer needs.
    order = [
        "Install",
        "The API key",
        "Three calls",
        "Errors",
        "Async",
        "Testing your code with the built-in store",
        "Command line",
        "More",
    ]
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings == order


def test_the_installs_a_page_names_above_a_block_are_what_it_may_import() -> None:
    page = "\n".join(
        [
            "pip install '/path/to/animalstore_client[aiohttp]'     # or the wheel",
            "Run `.venv/bin/pip install -q '.[test]' && .venv/bin/python -m pytest`.",
            "Then `pip install pandas opentelemetry-api`.",
            "And later `uv add '/path/to/animalstore_client[httpx2]'`.",
        ]
    )

    assert requirements_named(page, 4) == [
        SDK,
        f"{SDK}[aiohttp]",
        f"{SDK}[]",  # the developers' extra counts for nothing
        "pandas",
        "opentelemetry-api",
    ]
    assert requirements_named(page, 1) == [SDK]
    names = allowed(requirements_named(page, 4))
    assert {"animalstore-client", "httpx", "aiohttp", "pandas", "numpy"} <= names
    assert {"httpx2", "pytest", "opentelemetry-sdk"}.isdisjoint(names)


def test_a_block_that_imports_what_its_page_does_not_install_fails(tmp_path: Path) -> None:
    source = tmp_path / "block.py"
    source.write_text("import animalstore_client, httpx\nimport pandas\n", encoding="utf-8")
    guard = tmp_path / "guard.py"
    guard.write_text(GUARD.format(unimportable=set(unimportable(allowed([SDK])))))

    result = run_child(sys.executable, "-W", "error", guard, source)

    assert result.returncode == 1
    assert result.stderr.endswith("ModuleNotFoundError: No module named 'pandas'\n")
    assert 'block.py", line 2' in result.stderr
