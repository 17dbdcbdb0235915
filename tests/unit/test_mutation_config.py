"""The mutation command's configuration is valid: what ``nox -s mutate`` would run with.

Mutation runs take minutes, so CI does not run them; these check what a run reads: mutmut's
table in ``pyproject.toml`` (the command appends to it), the tests that cover each module, and
the list of equivalent mutants, each of which must still name a line of its module.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.mutation import command

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
#: The modules the issue that brought the command asked scores for (docs/development.md).
SCORED = [
    "animalstore_client/_core/retries.py",
    "animalstore_client/_core/call.py",
    "animalstore_client/_core/exceptions.py",
    "animalstore_client/_cli/journal.py",
    "animalstore_client/_cli/bulk.py",
    "animalstore_client/_cli/records.py",
    "animalstore_client/_cli/output.py",
    "animalstore_client/testing/_store.py",
    "animalstore_client_pytest.py",
]


def test_mutmuts_table_is_the_last_one_so_that_the_command_can_append_to_it(
    tmp_path: Path,
) -> None:
    _, _, after = PYPROJECT.partition("\n[tool.mutmut]\n")
    assert after, "pyproject.toml has no [tool.mutmut] table"
    assert not [line for line in after.splitlines() if line.startswith("[")]
    # Without what a mutation run appended, when this test runs in its copy of the tree.
    added = ("only_mutate = ", "pytest_add_cli_args_test_selection = ")
    ours = "".join(line for line in PYPROJECT.splitlines(True) if not line.startswith(added))
    (tmp_path / "pyproject.toml").write_text(ours, encoding="utf-8")

    retries = "animalstore_client/_core/retries.py"
    command.configure(tmp_path, [retries], command.covering_tests(retries))

    table = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["mutmut"]
    assert table["only_mutate"] == ["animalstore_client/_core/retries.py"]
    assert table["pytest_add_cli_args_test_selection"] == list(
        command.COVERING_TESTS["animalstore_client/_core/retries.py"]
    )
    for path in [*table["source_paths"], *table["also_copy"]]:
        assert (ROOT / path).exists(), path


def test_the_mutation_extra_is_apart_from_the_test_extra() -> None:
    extras = tomllib.loads(PYPROJECT)["project"]["optional-dependencies"]
    assert any(requirement.startswith("mutmut") for requirement in extras["mutation"])
    assert not any(requirement.startswith("mutmut") for requirement in extras["test"])


@pytest.mark.parametrize("module", SCORED)
def test_each_scored_module_has_tests_that_exist(module: str) -> None:
    assert (ROOT / module).is_file()
    tests = command.covering_tests(module)
    assert tests
    for path in tests:
        assert (ROOT / path).exists(), path


def test_every_prefix_of_the_table_names_something_that_exists() -> None:
    for prefix, tests in command.COVERING_TESTS.items():
        assert (ROOT / prefix).exists(), prefix
        assert all((ROOT / path).exists() for path in tests), prefix


@pytest.mark.parametrize(
    ("module", "reached_by"),
    [
        ("animalstore_client/_core/decoding.py", "tests/reliability/test_content_codings.py"),
        ("animalstore_client/_core/wire.py", "tests/reliability/test_connection_faults.py"),
        ("animalstore_client/_backends/aiohttp.py", "tests/reliability"),
        ("animalstore_client/_backends/httpx.py", "tests/reliability"),
    ],
)
def test_the_decoder_wire_and_backends_run_against_the_socket_tests_that_reach_them(
    module: str, reached_by: str
) -> None:
    # Without an entry of their own they fell back to the package's default (tests/unit and
    # tests/testing), so the content-coding and backend tests never ran against them.
    assert reached_by in command.covering_tests(module)


def test_a_file_outside_the_package_is_refused() -> None:
    with pytest.raises(SystemExit, match="not a module of the package"):
        command.covering_tests("tests/conftest.py")


def test_each_equivalent_mutant_names_its_module_and_says_why() -> None:
    # A line edited since is reported by the command (command.stale), not failed on here:
    # the modules change on other branches, and the list follows at its next run.
    entries = command.equivalents()
    assert entries
    for entry in entries:
        assert (ROOT / entry.module).is_file(), entry.module
        assert entry.line, entry
        assert entry.becomes != entry.line
        assert len(entry.why) > 20, f"{entry.module}: {entry.line!r} needs a reason"


def test_a_listed_line_the_module_no_longer_has_is_found_stale() -> None:
    listed = command.Equivalent(
        "animalstore_client/_cli/journal.py", "return 42  # no such line", "return 43", "why"
    )
    kept = command.equivalents()[0]
    assert command.stale([listed, kept]) == [listed]


def test_a_mutants_diff_is_read_as_the_line_it_changes_and_what_it_becomes() -> None:
    diff = (
        "--- animalstore_client/_core/retries.py\n"
        "+++ animalstore_client/_core/retries.py\n"
        "@@ -12,7 +12,7 @@\n"
        "     value = 1\n"
        '-    value = headers.get("retry-after")\n'
        '+    value = headers.get("RETRY-AFTER")\n'
    )
    assert command.changed_lines(diff) == (
        'value = headers.get("retry-after")',
        'value = headers.get("RETRY-AFTER")',
    )


def test_modules_that_share_their_tests_are_mutated_in_one_run() -> None:
    bulk, records = "animalstore_client/_cli/bulk.py", "animalstore_client/_cli/records.py"
    call, retries = "animalstore_client/_core/call.py", "animalstore_client/_core/retries.py"

    assert command.groups([bulk, call, records, retries]) == [[bulk, records], [call], [retries]]


@pytest.mark.parametrize(
    ("mutant", "module"),
    [
        ("animalstore_client._cli.bulk.xǁBulkǁ_take__mutmut_3", "animalstore_client/_cli/bulk.py"),
        ("animalstore_client._cli.x_main__mutmut_1", "animalstore_client/_cli/__init__.py"),
        ("animalstore_client_pytest.x_f__mutmut_2", "animalstore_client_pytest.py"),
    ],
)
def test_each_mutant_is_scored_in_its_own_module(mutant: str, module: str) -> None:
    modules = [
        "animalstore_client/_cli/bulk.py",
        "animalstore_client/_cli/__init__.py",
        "animalstore_client_pytest.py",
    ]
    assert command.module_of(mutant, modules) == module
    assert command.module_of(mutant, [m for m in modules if m != module]) is None
