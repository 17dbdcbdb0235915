"""A kill counts only if the mutation caused it: what ``nox -s mutate`` checks of each kill.

In a mutant's run the plugin writes down each test as it starts (the last is the one that
killed the mutant); after the run, the command runs each killing test once without any mutant,
and a kill whose test fails there too does not count (``command.not_caused``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.mutation import command, plugin

ROOT = Path(__file__).resolve().parents[2]
MUTANT = "animalstore_client._core.retries.x_backoff__mutmut_3"


def test_a_mutants_run_writes_down_the_last_test_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(plugin.KILLERS, str(tmp_path))
    monkeypatch.setenv("MUTANT_UNDER_TEST", MUTANT)
    plugin.pytest_runtest_logstart("tests/unit/test_a.py::test_one", ("", None, ""))
    plugin.pytest_runtest_logstart("tests/unit/test_a.py::test_two[x y]", ("", None, ""))

    assert [path.name for path in tmp_path.iterdir()] == [MUTANT]
    assert (tmp_path / MUTANT).read_text(encoding="utf-8") == "tests/unit/test_a.py::test_two[x y]"
    statuses = {MUTANT: "killed", "other__mutmut_1": "killed", "other__mutmut_2": "survived"}
    assert command.killers(tmp_path.parent / "copy-without-killers", statuses) == {}


@pytest.mark.parametrize("mutant", ["stats", "fail", ""])
def test_mutmuts_own_runs_write_nothing_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutant: str
) -> None:
    monkeypatch.setenv(plugin.KILLERS, str(tmp_path))
    monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)
    plugin.pytest_runtest_logstart("tests/unit/test_a.py::test_one", ("", None, ""))
    assert list(tmp_path.iterdir()) == []


def test_only_kills_have_killers(tmp_path: Path) -> None:
    (tmp_path / "killers").mkdir()
    for name in ("m_killed", "m_timeout", "m_survived"):
        (tmp_path / "killers" / name).write_text(f"t.py::{name}", encoding="utf-8")
    statuses = {
        "m_killed": "killed",
        "m_timeout": "timeout",
        "m_survived": "survived",
        "m_unrecorded": "killed",
    }
    assert command.killers(tmp_path, statuses) == {
        "m_killed": "t.py::m_killed",
        "m_timeout": "t.py::m_timeout",
    }


PROBE = """
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("a fixture that fails")

def test_passes():
    pass

def test_fails():
    assert False

def test_fails_in_setup(broken):
    pass

@pytest.mark.parametrize("word", ["a b"])
def test_passes_with_a_space(word):
    pass
"""


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A mutation run's copy: its ``mutants/`` has the tests and the plugin, as a real one."""
    mutants = tmp_path / "mutants"
    mutants.mkdir()
    for folder in (tmp_path, mutants):  # mutmut's settings, and pytest's root in mutants/
        shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    (mutants / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    (mutants / "test_probe.py").write_text(PROBE, encoding="utf-8")
    return tmp_path


def test_a_kill_by_a_test_that_fails_without_the_mutant_is_not_caused_by_it(copy: Path) -> None:
    killed_by = {
        "m1": "test_probe.py::test_passes",
        "m2": "test_probe.py::test_fails",
        "m3": "test_probe.py::test_fails_in_setup",
        "m4": "test_probe.py::test_passes",
        "m5": "test_probe.py::test_passes_with_a_space[a b]",
    }
    log = copy / "run.log"

    assert command.not_caused(copy, killed_by, log) == {
        "m2": "test_probe.py::test_fails",
        "m3": "test_probe.py::test_fails_in_setup",
    }
    # Each killing test ran once, without a mutant.
    assert "control: 4 killing tests without a mutant" in log.read_text(encoding="utf-8")
    assert "1 failed, 2 passed, 1 error" in log.read_text(encoding="utf-8")


def test_no_kill_needs_no_control_run(copy: Path) -> None:
    assert command.not_caused(copy, {}, copy / "run.log") == {}
    assert not (copy / "run.log").exists()


def test_a_control_run_that_could_not_run_its_tests_stops_the_command(copy: Path) -> None:
    # A killing test that is gone (renamed since the run): pytest runs nothing (exit 4); no
    # kill may count as checked.
    with pytest.raises(SystemExit, match="the control run failed"):
        command.not_caused(copy, {"m1": "test_probe.py::test_renamed"}, copy / "run.log")


def test_a_score_says_how_many_kills_were_not_checked() -> None:
    score = command.Score(
        "animalstore_client/_core/retries.py",
        {"a": "killed", "b": "killed", "c": command.NOT_CAUSED},
        [],
        {"c": "diff"},
        12.0,
        not_caused={"c": "tests/unit/test_retries.py::test_x"},
        unchecked=1,
    )
    assert (score.killed, score.counted) == (2, 3)
    assert score.line() == (
        "animalstore_client/_core/retries.py: 66.7% killed (2 of 3; 0 equivalent; mutmut: "
        f"2 killed, 1 {command.NOT_CAUSED}; 1 kills not checked) in 12 s"
    )
    assert f"## c: {command.NOT_CAUSED}, tests/unit/test_retries.py::test_x" in command.report(
        [score]
    )


def test_a_doubtful_kill_is_run_again_and_counts_if_then_caused(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    killers = copy / "killers"
    killers.mkdir()
    for name in ("m1", "m2"):
        (killers / name).write_text("test_probe.py::test_fails", encoding="utf-8")
    (killers / "m3").write_text("test_probe.py::test_passes", encoding="utf-8")
    runs: list[tuple[str, ...]] = []

    def mutmut(copy: Path, output: object, *args: str) -> None:
        # What mutmut's second runs leave: m1 killed by a test that passes without it, m2
        # by the same failing test again.
        runs.append(args)
        (killers / "m1").write_text("test_probe.py::test_passes", encoding="utf-8")

    monkeypatch.setattr(command, "_mutmut", mutmut)
    monkeypatch.setattr(command, "_statuses", lambda copy: dict.fromkeys(("m1", "m2"), "killed"))
    statuses = {"m1": "killed", "m2": "killed", "m3": "killed", "m4": "survived"}

    doubtful = command._caused_or_not(copy, statuses, 2, copy / "run.log")

    assert runs == [("run", "--max-children", "2", "m1", "m2")]
    assert doubtful == {"m2": "test_probe.py::test_fails"}
    assert statuses == {"m1": "killed", "m2": "killed", "m3": "killed", "m4": "survived"}


def test_again_is_refused_when_any_module_its_run_mutated_changed_named_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run mutated _cli/__init__.py and _cli/feed.py; feed.py is as it was, __init__.py not.
    # Today's tests may need today's __init__.py (a name it has now): the run cannot be taken up.
    monkeypatch.setattr(command, "WORK", tmp_path)
    modules = ["animalstore_client/_cli/__init__.py", "animalstore_client/_cli/feed.py"]
    copy = command.copy_of(["animalstore_client/_cli/feed.py"])
    (copy / "mutants").mkdir(parents=True)
    (copy / "pyproject.toml").write_text(
        f"[tool.mutmut]\nonly_mutate = {modules!r}\n".replace("'", '"'), encoding="utf-8"
    )
    for name in modules:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_bytes((ROOT / name).read_bytes())
    (copy / modules[0]).write_text("# as it was before\n", encoding="utf-8")

    with pytest.raises(SystemExit, match=r"animalstore_client/_cli/__init__\.py: changed since"):
        command.again(["animalstore_client/_cli/feed.py"], 2, [])
