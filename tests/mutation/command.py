"""What ``python -m tests.mutation`` does: mutate modules a group at a time, score each.

The modules that share their covering tests form a group. For each group: copy the tree (the
files git knows, committed or not) to ``.mutation/<first module>/``, add to the copy's
``[tool.mutmut]`` the modules (``only_mutate``) and their tests
(``pytest_add_cli_args_test_selection``), run ``mutmut run`` there, then read its results. A
survivor listed in ``equivalent.toml`` (by the line it changes and what it makes of it) is
equivalent; the others are printed with their diff. The score is the share of the
non-equivalent mutants killed: a mutant that no test reaches ("no tests") counts as not killed.
``tests/mutation/plugin.py`` lets mutmut see what the tests' subprocesses reach.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import attrs

from tests.mutation import plugin

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
#: Where the copies, mutmut's logs and the report go (git-ignored).
WORK = REPO / ".mutation"
EQUIVALENT = Path(__file__).with_name("equivalent.toml")
#: The score to hold: the share of non-equivalent mutants killed (docs/development.md).
TARGET = 0.95
#: The test files and folders that cover each module, by path prefix: the longest that
#: matches wins. mutmut runs them once to see which test calls which function, then each
#: mutant against those of its function. The unit tests of the module's feature and its
#: reliability file, not every folder: a call's functions are reached by most tests, and a
#: survivor runs every test that reaches it.
COVERING_TESTS: dict[str, tuple[str, ...]] = {
    "animalstore_client/": ("tests/unit", "tests/testing"),
    # The raw views, introspected by the unit tests and called through every operation
    # against the store by the contract tests.
    "animalstore_client/_raw.py": ("tests/unit", "tests/testing", "tests/contract"),
    # The rest of the core: what the unit tests see, and what the requests as sent (contract),
    # the store's answers, numpy's and pandas' values and pickled objects show of it.
    "animalstore_client/_core/": (
        "tests/unit",
        "tests/testing",
        "tests/contract",
        "tests/field/test_numpy_integers.py",
        "tests/field/test_pandas.py",
        "tests/field/test_pickling.py",
        "tests/reliability/test_malformed_responses.py",
        "tests/reliability/test_secrets.py",
    ),
    "animalstore_client/_core/retries.py": (
        "tests/unit/test_retries.py",
        "tests/unit/test_retry_policy.py",
        "tests/reliability/test_cooperative_backoff.py",
        "tests/reliability/test_retry_policy.py",
    ),
    # The options: the core's tests, and the key in another process (EnvironmentKey, a key
    # provider), which only the pickling tests reach.
    "animalstore_client/_core/config.py": (
        "tests/unit",
        "tests/testing",
        "tests/contract",
        "tests/field/test_numpy_integers.py",
        "tests/field/test_pandas.py",
        "tests/field/test_pickling.py",
        "tests/field/test_client_pickle.py",
        "tests/reliability/test_malformed_responses.py",
        "tests/reliability/test_secrets.py",
    ),
    # The policy: its checks, and what it does to the requests sent on every backend.
    "animalstore_client/_core/retry_policy.py": (
        "tests/unit/test_retry_policy.py",
        "tests/unit/test_retries.py",
        "tests/reliability/test_retry_policy.py",
    ),
    # The clients: the unit tests, and pickling, which the field tests prove across processes.
    "animalstore_client/_client.py": (
        "tests/unit",
        "tests/testing",
        "tests/field/test_client_pickle.py",
    ),
    # The call's state machine is reached by nearly every test: the unit tests, the requests
    # as sent (contract), its log lines (instrumentation), its retries and pauses.
    "animalstore_client/_core/call.py": (
        "tests/unit",
        "tests/contract/test_sdk_requests.py",
        "tests/reliability/test_instrumentation.py",
        "tests/reliability/test_retries.py",
        "tests/reliability/test_retry_policy.py",
        "tests/reliability/test_cooperative_backoff.py",
        "tests/reliability/test_malformed_responses.py",
        "tests/reliability/test_middleware.py",
        "tests/reliability/test_tracing.py",
        "tests/field/test_client_pickle.py",
    ),
    # Middleware: the handlers' types and the chain, in process and on every backend.
    "animalstore_client/_core/exchange.py": (
        "tests/unit/test_middleware.py",
        "tests/reliability/test_middleware.py",
    ),
    "animalstore_client/_core/middleware.py": (
        "tests/unit/test_middleware.py",
        "tests/reliability/test_middleware.py",
    ),
    # The call's span, on every backend, with OpenTelemetry's in-memory exporter.
    "animalstore_client/_core/tracing.py": (
        "tests/unit/test_tracing_options.py",
        "tests/reliability/test_tracing.py",
    ),
    # The decoder, by itself and behind each backend's body reader (the codings, the bombs).
    "animalstore_client/_core/decoding.py": (
        "tests/unit/test_decoding.py",
        "tests/unit/test_body_reader.py",
        "tests/reliability/test_content_codings.py",
        "tests/reliability/test_bounded_cost.py",
        "tests/reliability/test_decoded_cap.py",
    ),
    # What crosses between the core and the backends: requests, answers, failures, the body
    # reader and the redaction, met by the unit tests and, over sockets, on every backend.
    "animalstore_client/_core/wire.py": (
        "tests/unit",
        "tests/reliability/test_content_codings.py",
        "tests/reliability/test_bounded_cost.py",
        "tests/reliability/test_connection_faults.py",
        "tests/reliability/test_malformed_responses.py",
        "tests/reliability/test_secrets.py",
        "tests/reliability/test_key_nowhere.py",
        "tests/reliability/test_decoded_cap.py",
        "tests/reliability/test_repeated_headers.py",
    ),
    # The backends are what the reliability tests drive, over real sockets, on every backend.
    # Not tests/field/test_event_loops.py: its children run with -X dev and must print nothing,
    # and under mutmut they do (its first run fails there, and with it the whole group's).
    "animalstore_client/_backends/": (
        "tests/unit",
        "tests/reliability",
        "tests/field/test_trio.py",
        "tests/field/test_fork.py",
        "tests/field/test_proxies.py",
    ),
    "animalstore_client/_core/exceptions.py": (
        "tests/unit/test_errors.py",
        "tests/unit/test_repr.py",
        "tests/unit/test_public_names.py",
        "tests/field/test_pickling.py",
        "tests/reliability/test_secrets.py",
    ),
    # The command line's tests, most in process: its reader, journal, decisions and output,
    # each a few milliseconds; the commands as a user runs them (test_cli.py, test_bulk.py),
    # in process but for the entry points, kills and signals, which run in subprocesses
    # (mutmut sees what those reach through tests/mutation/plugin.py). The generated sequences
    # and the write failures, mostly subprocesses: `--tests tests/cli` adds them.
    "animalstore_client/_cli/": (
        "tests/cli/test_cli.py",
        "tests/cli/test_cli_advice.py",
        "tests/cli/test_bulk.py",
        "tests/cli/test_progress.py",
        "tests/cli/test_feed.py",
        "tests/cli/test_records.py",
        "tests/cli/test_csv_integer_cells.py",
        "tests/cli/test_output.py",
        "tests/cli/test_bulk_outcomes.py",
        "tests/cli/test_create_from_file.py",
        "tests/cli/test_journal.py",
        "tests/cli/test_journal_file.py",
        "tests/cli/test_journal_group_commit.py",
    ),
    "animalstore_client/testing/": ("tests/testing",),
    # The store's faults are exercised through its server and transport by the reliability
    # file of its own; its answers, against the API's document, by the contract tests.
    "animalstore_client/testing/_store.py": (
        "tests/testing",
        "tests/reliability/test_store_faults.py",
        "tests/contract/test_store_responses.py",
    ),
    "animalstore_client_pytest.py": ("tests/testing",),
}
#: mutmut's outcomes, as the score counts them. A timeout is a hang, which the suite's own
#: timeout fails: killed.
KILLED = frozenset({"killed", "timeout", "caught by type check", "segfault"})
SURVIVED = frozenset({"survived", "suspicious"})
#: What mutmut says when a module has no mutant it could test: its functions are all decorated
#: (pytest fixtures, properties), which mutmut leaves alone, or no covering test reaches them.
NO_MUTANTS = "could not find any test case for any mutant"
#: A kill that does not count: the test that killed the mutant also fails without it, after
#: the mutant's run and again after a second run of the mutant.
NOT_CAUSED = "killed by a test that fails without it"


@attrs.frozen
class Equivalent:
    """A mutant that no test can kill: the program does the same with it.

    Attributes:
        module: the module's path.
        line: the line the mutant changes, stripped (a statement over several lines: joined
            by single spaces).
        becomes: what the mutant makes of it, the same way.
        why: why it changes nothing.
    """

    module: str
    line: str
    becomes: str
    why: str


@attrs.frozen
class Score:
    """One module's outcome.

    Attributes:
        module: the module's path.
        statuses: each mutant's name and mutmut's status.
        equivalent: the survivors that are known equivalent mutants.
        survivors: each non-equivalent survivor's name and diff.
        seconds: how long the module's mutmut run took, copy and set-up included (shared
            with the other modules of its group).
        not_caused: each mutant counted as not killed because the test that killed it also
            failed without it (``NOT_CAUSED``), and that test.
        unchecked: the kills whose test is not known, so not checked: made by a run before
            the tests were written down, or before any test started.
    """

    module: str
    statuses: dict[str, str]
    equivalent: list[str]
    survivors: dict[str, str]
    seconds: float
    not_caused: dict[str, str] = attrs.Factory(dict)
    unchecked: int = 0

    @property
    def killed(self) -> int:
        """How many mutants a test killed."""
        return sum(status in KILLED for status in self.statuses.values())

    @property
    def counted(self) -> int:
        """How many mutants count: all of them but the equivalent ones."""
        return len(self.statuses) - len(self.equivalent)

    @property
    def share(self) -> float:
        """The share of the counted mutants killed (1.0 when there is none)."""
        return self.killed / self.counted if self.counted else 1.0

    def line(self) -> str:
        """The score as one line of the report."""
        if not self.statuses:
            return (
                f"{self.module}: no mutant mutmut could test (it leaves decorated functions and "
                "module-level code alone; or no covering test reaches the rest)"
            )
        tally = Counter(self.statuses.values())
        others = ", ".join(f"{count} {status}" for status, count in sorted(tally.items()))
        unchecked = f"; {self.unchecked} kills not checked" if self.unchecked else ""
        return (
            f"{self.module}: {self.share:.1%} killed ({self.killed} of {self.counted}; "
            f"{len(self.equivalent)} equivalent; mutmut: {others}{unchecked}) "
            f"in {self.seconds:.0f} s"
        )


def covering_tests(module: str) -> tuple[str, ...]:
    """Return the tests that cover ``module``: those of the longest prefix that matches."""
    matches = [prefix for prefix in COVERING_TESTS if module.startswith(prefix)]
    if not matches:
        raise SystemExit(f"{module}: not a module of the package (animalstore_client/...)")
    return COVERING_TESTS[max(matches, key=len)]


def equivalents() -> list[Equivalent]:
    """Read ``equivalent.toml``."""
    listed = tomllib.loads(EQUIVALENT.read_text(encoding="utf-8"))
    return [Equivalent(**entry) for entry in listed.get("equivalent", [])]


def stale(entries: list[Equivalent]) -> list[Equivalent]:
    """Return the entries whose line their module no longer has: to drop from the list."""
    found = []
    for entry in entries:
        source = (REPO / entry.module).read_text(encoding="utf-8")
        if entry.line not in " ".join(line.strip() for line in source.splitlines()):
            found.append(entry)
    return found


def changed_modules(base: str) -> list[str]:
    """Return the package's modules that differ from ``base`` (committed or not), that exist."""
    merge_base = _git("merge-base", base, "HEAD").strip()
    names = _git("diff", "--name-only", merge_base, "--").split()
    names += _git("ls-files", "--others", "--exclude-standard").split()
    return sorted(
        {
            name
            for name in names
            if name.endswith(".py")
            and (name.startswith("animalstore_client/") or name == "animalstore_client_pytest.py")
            and (REPO / name).exists()
        }
    )


def copy_tree(target: Path) -> None:
    """Copy the files git knows (committed, staged or new, not ignored) to ``target``."""
    if target.exists():
        shutil.rmtree(target)
    for name in _git("ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0"):
        source = REPO / name
        if name and source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def configure(copy: Path, modules: list[str], tests: tuple[str, ...]) -> None:
    """Add the modules to mutate and the tests to the copy's ``[tool.mutmut]`` (its last table)."""
    settings = (
        f"only_mutate = {json.dumps(modules)}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}\n"
    )
    with (copy / "pyproject.toml").open("a", encoding="utf-8") as pyproject:
        pyproject.write(settings)


def groups(modules: list[str]) -> list[list[str]]:
    """Return the modules in groups that share their covering tests, in the order given.

    One mutmut run mutates a group: its run of the tests to see which test reaches which
    function, and its clean run, are the group's, not each module's (minutes for the command
    line's tests).
    """
    by_tests: dict[tuple[str, ...], list[str]] = {}
    for module in modules:
        by_tests.setdefault(covering_tests(module), []).append(module)
    return list(by_tests.values())


def module_of(mutant: str, modules: list[str]) -> str | None:
    """Return the one of ``modules`` a mutant is in, by its name (``pkg.mod.x_f__mutmut_3``).

    ``None`` for a mutant of none of them (``--again`` on part of a run's group).
    """
    dotted = {
        module.removesuffix(".py").removesuffix("/__init__").replace("/", "."): module
        for module in modules
    }
    # mutmut names a function's mutants x_<function> or xǁ<class>ǁ<method> after its module:
    # "pkg._cli.bulk.x_f" is bulk's, not the package "pkg._cli"'s.
    module, _, _ = mutant.rpartition(".x")
    return dotted.get(module)


def mutate(
    modules: list[str], jobs: int, known: list[Equivalent], tests: tuple[str, ...] = ()
) -> list[Score]:
    """Run mutmut on ``modules`` (a group) in a fresh copy of the tree; return their scores.

    Against ``tests``, or else the modules' covering tests (they share them: ``groups``).
    """
    started = time.monotonic()
    tests = tests or covering_tests(modules[0])
    copy = copy_of(modules)
    copy_tree(copy)
    configure(copy, modules, tests)
    log = copy.parent / f"{copy.name}.log"
    print(f"{', '.join(modules)}: mutating, tests {' '.join(tests)} (log: {log})", flush=True)
    with log.open("w", encoding="utf-8") as output:
        ran = _mutmut(copy, output, "run", "--max-children", str(jobs))
    return _scores(copy, modules, known, ran, started, jobs)


def again(modules: list[str], jobs: int, known: list[Equivalent]) -> list[Score]:
    """Run the last run's survivors of ``modules`` (a group) again, against today's tree.

    For the tests written to kill them: the copy keeps the run's mutants and outcomes, takes
    every file it does not mutate as it is now (the tests, the package's other modules; mutmut
    finds the new tests and what they reach), and runs each survivor, each mutant no test
    reached, each it never got to (a run cut short) and each kill whose test is not known (a
    run before the tests were written down: ``not_caused`` cannot check it) again, with the
    covering tests the run was made with; not the survivors listed as equivalent. Refused
    when a module the run mutated (named or not) differs from its copy: its mutants would no
    longer be its code, and the tests of today may need today's code; so it must be run whole
    again.
    """
    started = time.monotonic()
    copy = copy_of(modules)
    if not (copy / "mutants").is_dir():
        raise SystemExit(f"{', '.join(modules)}: no earlier run to take up in {copy}")
    settings = tomllib.loads((copy / "pyproject.toml").read_text(encoding="utf-8"))
    # Every module the run mutated, not only those named: the tests run against all of them.
    changed = [
        name
        for name in settings["tool"]["mutmut"]["only_mutate"]
        if (copy / name).read_bytes() != (REPO / name).read_bytes()
    ]
    if changed:
        raise SystemExit(
            f"{', '.join(changed)}: changed since the run in {copy}: run the group whole "
            "again, without --again"
        )
    mutated = {*settings["tool"]["mutmut"]["only_mutate"], "pyproject.toml"}
    for name in _git("ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0"):
        if not name or name in mutated or not (REPO / name).is_file():
            continue
        for target in (copy / name, copy / "mutants" / name):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target)
    names = [
        name
        for name, status in _statuses(copy).items()
        if module_of(name, modules) in modules
        and (
            status in SURVIVED | {"no tests", "not checked"}
            or (status in KILLED and not (copy / "killers" / name).is_file())
        )
        and not (status in SURVIVED and _listed(copy, name, module_of(name, modules), known))
    ]
    log = copy.parent / f"{copy.name}.log"
    print(f"{', '.join(modules)}: {len(names)} mutants again (log: {log})", flush=True)
    if not names:
        return _scores(copy, modules, known, None, started, jobs)
    with log.open("a", encoding="utf-8") as output:
        ran = _mutmut(copy, output, "run", "--max-children", str(jobs), *names)
    return _scores(copy, modules, known, ran, started, jobs)


def _listed(copy: Path, name: str, module: str | None, known: list[Equivalent]) -> bool:
    """Whether a survivor is a listed equivalent mutant: no test can kill it, so not run again."""
    removed, added = changed_lines(_mutmut(copy, None, "show", name).stdout)
    return any(
        entry.module == module and entry.line == removed and entry.becomes == added
        for entry in known
    )


def copy_of(modules: list[str]) -> Path:
    """Return where the group of ``modules`` is mutated: named for its first module."""
    return WORK / modules[0].replace("/", ".").removesuffix(".py")


def _statuses(copy: Path) -> dict[str, str]:
    results = _mutmut(copy, None, "results", "--all", "true").stdout
    return dict(re.findall(r"^\s*(\S+): (.+?)\s*$", results, re.MULTILINE))


def _scores(
    copy: Path,
    modules: list[str],
    known: list[Equivalent],
    ran: subprocess.CompletedProcess[str] | None,
    started: float,
    jobs: int,
) -> list[Score]:
    statuses = _statuses(copy)
    log = copy.parent / f"{copy.name}.log"
    doubtful: dict[str, str] = {}
    if NO_MUTANTS in log.read_text(encoding="utf-8"):
        statuses = {}  # nothing mutmut would mutate: the score says so
    elif (ran is not None and ran.returncode != 0) or not statuses:
        code = "none" if ran is None else ran.returncode
        raise SystemExit(f"{', '.join(modules)}: mutmut failed (exit {code}); see {log}")
    else:
        statuses = {name: s for name, s in statuses.items() if module_of(name, modules)}
        doubtful = _caused_or_not(copy, statuses, jobs, log)
    seconds = time.monotonic() - started
    scores = []
    for module in modules:
        mine = {
            name: NOT_CAUSED if name in doubtful else status
            for name, status in statuses.items()
            if module_of(name, modules) == module
        }
        score = _score(copy, module, mine, known, seconds)
        scores.append(
            attrs.evolve(
                score,
                not_caused={name: doubtful[name] for name in mine if name in doubtful},
                unchecked=sum(
                    status in KILLED and not (copy / "killers" / name).is_file()
                    for name, status in mine.items()
                ),
            )
        )
    return scores


def _caused_or_not(copy: Path, statuses: dict[str, str], jobs: int, log: Path) -> dict[str, str]:
    """Check each kill; return the mutants whose kill does not count, each with its test.

    A kill counts when the test that made it passes without the mutant. Those whose test fails
    without it too are run again (a test that failed for a reason of its own, such as a busy
    machine, is unlikely to fail twice); what the second run kills is checked the same way,
    and a kill still made by a failing test does not count. ``statuses`` is updated with the
    second runs' outcomes.
    """
    doubtful = not_caused(copy, killers(copy, statuses), log)
    if doubtful:
        print(
            f"{len(doubtful)} kills by tests that fail without the mutant: those mutants again",
            flush=True,
        )
        with log.open("a", encoding="utf-8") as output:
            _mutmut(copy, output, "run", "--max-children", str(jobs), *doubtful)
        outcomes = _statuses(copy)
        statuses.update({name: outcomes[name] for name in doubtful})
        again = {name: statuses[name] for name in doubtful}
        doubtful = not_caused(copy, killers(copy, again), log)
    return doubtful


def killers(copy: Path, statuses: dict[str, str]) -> dict[str, str]:
    """Return each killed mutant's killer: the last test its run started (``plugin.py``)."""
    found = {}
    for name, status in statuses.items():
        path = copy / "killers" / name
        if status in KILLED and path.is_file():
            found[name] = path.read_text(encoding="utf-8")
    return found


def not_caused(copy: Path, killed_by: dict[str, str], log: Path) -> dict[str, str]:
    """Run each killing test once without any mutant; return the kills whose test failed.

    The tests run together, in one pytest run in the copy's ``mutants/`` (the mutated tree,
    its trampolines all calling the code as it was), with the options of mutmut's runs
    (``pytest_add_cli_args`` of the copy's ``[tool.mutmut]``).
    """
    if not killed_by:
        return {}
    failures = copy / "control-failures.txt"
    failures.write_text("", encoding="utf-8")
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MUTANT_UNDER_TEST": ""}
    environment[plugin.FAILURES] = str(failures)
    environment.pop(plugin.KILLERS, None)
    # mutmut's own options for its runs, less its -x: every killing test is to run.
    settings = tomllib.loads((copy / "pyproject.toml").read_text(encoding="utf-8"))
    options = ["-q", "-p", "no:randomly", *settings["tool"]["mutmut"]["pytest_add_cli_args"]]
    with log.open("a", encoding="utf-8") as output:
        output.write(f"control: {len(set(killed_by.values()))} killing tests without a mutant\n")
        output.flush()
        ran = subprocess.run(
            [sys.executable, "-m", "pytest", *options, *sorted(set(killed_by.values()))],
            cwd=copy / "mutants",
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if ran.returncode not in (0, 1):  # 1: some failed; anything else: the run itself failed
        raise SystemExit(f"the control run failed (exit {ran.returncode}); see {log}")
    failed = set(failures.read_text(encoding="utf-8").splitlines())
    return {name: test for name, test in killed_by.items() if test in failed}


def _score(
    copy: Path, module: str, statuses: dict[str, str], known: list[Equivalent], seconds: float
) -> Score:
    equivalent: list[str] = []
    survivors: dict[str, str] = {}
    mine = [entry for entry in known if entry.module == module]
    for entry in stale(mine):
        print(f"{module}: equivalent.toml lists a line it no longer has: {entry.line!r}")
    for name, status in sorted(statuses.items()):
        if status not in SURVIVED | {NOT_CAUSED}:
            continue
        diff = _mutmut(copy, None, "show", name).stdout
        removed, added = changed_lines(diff)
        if any(entry.line == removed and entry.becomes == added for entry in mine):
            equivalent.append(name)
        else:
            survivors[name] = diff
    return Score(module, statuses, equivalent, survivors, seconds)


def report(scores: list[Score]) -> str:
    """Return the report: each module's score, then its non-equivalent survivors."""
    lines = ["# Mutation scores (python -m tests.mutation)", ""]
    lines += [f"- {score.line()}" for score in scores]
    for score in scores:
        for name, diff in score.survivors.items():
            test = score.not_caused.get(name)
            said = f"{NOT_CAUSED}, {test}" if test else "survived"
            lines += ["", f"## {name}: {said}", "", "```diff", diff.strip(), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Mutate the modules given (or changed), print and write the report; return 1 below target."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutation", description="Mutation-test modules with mutmut."
    )
    parser.add_argument("modules", nargs="*", help="paths, e.g. animalstore_client/_core/call.py")
    parser.add_argument(
        "--changed",
        metavar="BASE",
        nargs="?",
        const="main",
        help="also every module changed since BASE (default main), committed or not",
    )
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="mutants run at once (cores)"
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="run the last run's survivors again against today's tests (the code unchanged)",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        metavar="PATH",
        default=[],
        help="run against these test files or folders instead of each module's covering tests",
    )
    options = parser.parse_args(argv)
    modules = list(dict.fromkeys(options.modules + _changed(options.changed)))
    if not modules:
        parser.error("no module to mutate: name one, or give --changed")
    for module in modules:
        if not (REPO / module).is_file():
            parser.error(f"{module}: no such file (paths are from the repository's root)")
        covering_tests(module)
    known = equivalents()
    scores = []
    # One group at a time: each run uses every core it is given. Tests given: one group.
    for group in [modules] if options.tests else groups(modules):
        if options.again:
            outcome = again(group, options.jobs, known)
        else:
            outcome = mutate(group, options.jobs, known, tuple(options.tests))
        for score in outcome:
            print(score.line(), flush=True)
            scores.append(score)
    text = report(scores)
    (WORK / "report.md").write_text(text, encoding="utf-8")
    print(text.split("\n", 2)[2] if any(s.survivors for s in scores) else "", end="")
    print(f"report: {WORK / 'report.md'}")
    return 0 if all(score.share >= TARGET for score in scores if score.statuses) else 1


def _changed(base: str | None) -> list[str]:
    return [] if base is None else changed_modules(base)


def changed_lines(diff: str) -> tuple[str, str]:
    """Return the lines a mutant's diff removes and adds, each stripped and joined."""
    removed, added = [], []
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            removed.append(line[1:].strip())
        elif line.startswith("+"):
            added.append(line[1:].strip())
    return " ".join(removed), " ".join(added)


def _mutmut(copy: Path, output: Any, *args: str) -> subprocess.CompletedProcess[str]:
    (copy / "killers").mkdir(exist_ok=True)
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    environment[plugin.KILLERS] = str(copy / "killers")
    return subprocess.run(
        [sys.executable, "-m", "mutmut", *args],
        cwd=copy,
        env=environment,
        stdout=output if output is not None else subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
