"""The supported Pythons and dependency ranges are said the same everywhere they are said.

``requires-python`` and the classifiers (pyproject.toml), the CI matrix (``PYTHONS`` in
noxfile.py), docs/support.md and the README's first lines.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]
SUPPORT = (ROOT / "docs" / "support.md").read_text(encoding="utf-8")
_CLASSIFIER = re.compile(r"Programming Language :: Python :: (3\.\d+)")


def minor(version: str) -> int:
    return int(version.split(".")[1])


def nox_pythons() -> list[str]:
    """``PYTHONS`` as noxfile.py assigns it, read without running the noxfile."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    values = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(target, ast.Name) and target.id == "PYTHONS" for target in node.targets)
    ]
    assert len(values) == 1
    pythons: list[str] = list(ast.literal_eval(values[0]))
    return pythons


def classifier_pythons() -> list[str]:
    return [
        found[1]
        for classifier in PROJECT["classifiers"]
        if (found := _CLASSIFIER.fullmatch(classifier))
    ]


def section(title: str) -> str:
    """The text of the ``## title`` section of docs/support.md."""
    found = re.search(
        rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", SUPPORT, re.MULTILINE | re.DOTALL
    )
    assert found is not None, title
    return found[1]


def table(text: str) -> list[list[str]]:
    """The body rows of the first Markdown table in ``text``, cells stripped of spaces and `."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip(" `") for cell in row.strip("|").split("|")] for row in rows[2:]]


def test_the_ci_matrix_runs_consecutive_versions_oldest_first() -> None:
    pythons = nox_pythons()

    assert [minor(version) for version in pythons] == list(
        range(minor(pythons[0]), minor(pythons[-1]) + 1)
    )


def test_the_classifiers_name_the_versions_the_ci_matrix_runs() -> None:
    assert classifier_pythons() == nox_pythons()


def test_requires_python_admits_the_oldest_supported_version_and_none_older() -> None:
    admitted = SpecifierSet(PROJECT["requires-python"])
    oldest = nox_pythons()[0]

    assert all(admitted.contains(version) for version in nox_pythons())
    assert not admitted.contains(f"3.{minor(oldest) - 1}")


def test_the_support_page_lists_the_versions_the_ci_matrix_runs() -> None:
    text = section("Python")

    assert [row[0] for row in table(text)] == nox_pythons()
    assert f"`requires-python` is `{PROJECT['requires-python']}`" in " ".join(text.split())


def test_the_readme_names_the_oldest_and_newest_supported_versions() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pythons = nox_pythons()

    assert re.findall(r"Python (3\.\d+) to (3\.\d+)", readme) == [(pythons[0], pythons[-1])]


def test_the_support_page_gives_the_dependency_ranges_of_pyproject() -> None:
    declared = [
        *PROJECT["dependencies"],
        *PROJECT["optional-dependencies"]["aiohttp"],
        *PROJECT["optional-dependencies"]["httpx2"],
    ]
    ranges = {requirement.name: requirement.specifier for requirement in map(Requirement, declared)}

    assert {row[0]: SpecifierSet(row[1]) for row in table(section("Dependencies"))} == ranges


def test_ci_tests_the_httpx2_extras_lower_bound_on_the_oldest_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util
    import subprocess
    import warnings

    # The noxfile runs each candidate interpreter to learn its version, again each time it is
    # asked (a pyenv shim takes about a third of a second to answer): here each runs once.
    run = subprocess.run
    answers: dict[str, Any] = {}

    def run_once(args: Any, **options: Any) -> Any:
        key = repr((args, sorted(options.items())))
        if key not in answers:
            answers[key] = run(args, **options)
        return answers[key]

    monkeypatch.setattr(subprocess, "run", run_once)
    spec = importlib.util.spec_from_file_location("noxfile", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    noxfile = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        # A process that runs the suite twice (a mutation run) registers the sessions again.
        warnings.filterwarnings("ignore", "The session .* has already been registered")
        spec.loader.exec_module(noxfile)
    [declared] = PROJECT["optional-dependencies"]["httpx2"]
    [lower] = [s.version for s in Requirement(declared).specifier if s.operator == ">="]

    # On every Python the package declares: no marker leaves one out.
    assert Requirement(declared).marker is None
    assert noxfile.extra_lower_bound("httpx2") == f"httpx2=={lower}"

    class Session:
        # What a nox session would install and run, recorded instead of done.
        def __init__(self, python: str) -> None:
            self.python = python
            self.posargs: list[str] = []
            self.installed: list[str] = []
            self.ran: list[tuple[str, ...]] = []

        def install(self, *args: str) -> None:
            self.installed.extend(args)

        def run(self, *args: str) -> None:
            self.ran.append(args)

    # The oldest Python's session pins the lower bound; the others take the newest.
    for version in nox_pythons():
        session = Session(noxfile.interpreter(version))
        noxfile.tests(session)
        pinned = [arg for arg in session.installed if arg.startswith("httpx2")]
        assert pinned == ([f"httpx2=={lower}"] if version == nox_pythons()[0] else []), version
        assert session.ran[-1][:3] == ("python", "-m", "pytest")
    # CI runs that session even when the README's command ran the suite on the same Python.
    assert "v == oldest" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"`tests({nox_pythons()[0]})`" in SUPPORT
