"""A pytest plugin for mutation runs (``-p tests.mutation.plugin`` in ``[tool.mutmut]``).

It lets mutmut see the functions a test reaches in the subprocesses it starts (the command
line's tests run ``animalstore`` for real): it puts ``tests/mutation/startup`` on their
``PYTHONPATH``, whose ``sitecustomize`` writes what they reach to a file, and adds that file's
names to what mutmut recorded for the test, before mutmut reads it at the test's teardown. It puts
the mutated tree there too, before the installed package: the subprocesses of the mutant runs
inherit ``MUTANT_UNDER_TEST``, import the mutated package, and so run the mutant. And it
counts mutmut's trampoline, which it puts between each caller and each mutated function, as the
SDK's own frame, so that a deprecation warning still points at the caller's line and its tests
run (and kill) under mutation. And it empties the SDK's memos (its ``functools`` caches, such
as the converter's hooks for each type) as each run of the tests starts, and, while mutmut
records which test reaches which function, before each test (and the raw views' methods, made
on first read): a memoised function is run by
the first test that needs it (or before mutmut forks the mutant's run, with the unmutated code),
and would be recorded for that test alone, or never run under the mutant.

And it keeps what a kill needs to be checked (``command.py``, ``not_caused``): in a mutant's
run, the test that starts, in a file named for the mutant (mutmut stops at the first failure,
or ends a run that hangs, so the last test started is the one that killed it); in a control
run, the tests that fail.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from pathlib import Path

import pytest

_SITE = Path(__file__).with_name("startup")
#: The mutated tree (mutmut's ``mutants/``): first on the path, the package a subprocess imports.
_TREE = Path(__file__).resolve().parents[2]
_HITS = "TESTS_MUTATION_HITS"
#: A folder for the test each mutant's run started last (``command.py`` sets it for its runs).
KILLERS = "TESTS_MUTATION_KILLERS"
#: A file for the tests that fail in a control run.
FAILURES = "TESTS_MUTATION_FAILURES"


def _mutant() -> str | None:
    """The mutant this run tests; ``None`` in mutmut's own runs (stats, forced failure) and
    in a run without one."""
    name = os.environ.get("MUTANT_UNDER_TEST", "")
    return None if name in ("", "stats", "fail") else name


def pytest_configure(config: pytest.Config) -> None:
    """Point the subprocesses at ``sitecustomize`` and at a fresh file for what they reach."""
    from animalstore_client._core import deprecation

    if "mutmut." not in deprecation._OWN_MODULES:
        deprecation._OWN_MODULES += ("mutmut.",)
    fd, hits = tempfile.mkstemp(prefix="mutation-hits-")
    os.close(fd)
    os.environ[_HITS] = hits
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if str(_SITE) not in paths:  # mutmut runs pytest more than once in its process
        os.environ["PYTHONPATH"] = os.pathsep.join([str(_SITE), str(_TREE), *filter(None, paths)])


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the file."""
    Path(os.environ.pop(_HITS)).unlink(missing_ok=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start each run of the tests with the SDK's memos empty.

    mutmut forks each mutant's run from a process that has imported the tests, and may have
    run them: a memo filled there (a converter's hook, made by the unmutated function) would
    keep the mutant from ever running.
    """
    _forget_memos()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """While mutmut records what each test reaches, make the test run the SDK's memos again."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        _forget_memos()


def _forget_memos() -> None:
    from animalstore_client._raw import RawMethod

    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] != "animalstore_client":
            continue
        for value in list(vars(module).values()):
            if isinstance(value, functools._lru_cache_wrapper) and value.__module__ == name:
                value.cache_clear()
            elif isinstance(value, type) and value.__module__ == name:
                # A raw view's methods, made on first read and kept on the descriptor.
                for member in vars(value).values():
                    if isinstance(member, RawMethod):
                        member._functions = None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Add what the test's subprocesses reached to mutmut's record, and empty the file."""
    if os.environ.get("MUTANT_UNDER_TEST") != "stats":
        return
    from mutmut.state import state

    with open(os.environ[_HITS], "r+", encoding="utf-8") as hits:
        state()._stats.update(hits.read().split())
        hits.truncate(0)


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """In a mutant's run, write down the test that starts (the last is the one that killed it)."""
    folder, mutant = os.environ.get(KILLERS), _mutant()
    if folder and mutant:
        Path(folder, mutant).write_text(nodeid, encoding="utf-8")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """In a control run, write down each test that fails (in its setup, call or teardown)."""
    failures = os.environ.get(FAILURES)
    if failures and report.failed:
        with open(failures, "a", encoding="utf-8") as failed:
            failed.write(report.nodeid + "\n")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In a mutant's run, run its tests fastest first (as timed in the stats run).

    mutmut hands them over in no order and stops at the first failure: a mutant most tests
    kill then dies in the time of the quickest, not of whichever came first (a command line
    test takes a second or more, a unit test a millisecond).
    """
    if _mutant() is None:
        return
    from mutmut.state import state

    durations = state().duration_by_test
    items.sort(key=lambda item: durations.get(item.nodeid, float("inf")))
