"""Mutation runs see what the tests' subprocesses reach (``tests/mutation/startup``).

mutmut is not installed where the suite runs (it is the ``mutation`` extra's): a stand-in
with its one function the start-up hook replaces, ``record_trampoline_hit``, plays its part.
The hook under test is the real one, in a real Python process, killed as a test may kill one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

STARTUP = Path(__file__).resolve().parents[1] / "mutation" / "startup"

#: A process that reaches three functions, one of them twice, then waits to be killed.
REACHES = """
import sys, time
from mutmut.mutation import trampoline
for name in ("pkg.mod.x_a", "pkg.mod.x_b", "pkg.mod.x_a", "pkg.other.x_c"):
    trampoline.record_trampoline_hit(name, caller=None)
print("reached", flush=True)
if sys.argv[1:] == ["hang"]:
    time.sleep(60)
"""


def stand_in_for_mutmut(root: Path) -> Path:
    package = root / "mutmut" / "mutation"
    package.mkdir(parents=True)
    (root / "mutmut" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "trampoline.py").write_text(
        "def record_trampoline_hit(name, caller=None):\n"
        "    raise AssertionError('the start-up hook should have replaced this')\n"
    )
    return root


def start(tmp_path: Path, mode: str, *args: str) -> subprocess.Popen[str]:
    stand_in = stand_in_for_mutmut(tmp_path / "site")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(STARTUP), str(stand_in)]),
        "MUTANT_UNDER_TEST": mode,
        "TESTS_MUTATION_HITS": str(tmp_path / "hits"),
    }
    return subprocess.Popen(
        [sys.executable, "-c", REACHES, *args],
        env=environment,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_each_function_reached_is_written_once_as_it_is_reached(tmp_path: Path) -> None:
    process = start(tmp_path, "stats")
    stdout, stderr = process.communicate(timeout=60)

    assert (process.returncode, stdout, stderr) == (0, "reached\n", "")
    assert (tmp_path / "hits").read_text() == "pkg.mod.x_a\npkg.mod.x_b\npkg.other.x_c\n"


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9")
def test_a_process_killed_with_sigkill_loses_nothing_it_reached(tmp_path: Path) -> None:
    process = start(tmp_path, "stats", "hang")
    assert process.stdout is not None
    assert process.stdout.readline() == "reached\n"

    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)

    assert (tmp_path / "hits").read_text().split() == [
        "pkg.mod.x_a",
        "pkg.mod.x_b",
        "pkg.other.x_c",
    ]


def test_outside_the_stats_run_the_hook_does_nothing(tmp_path: Path) -> None:
    # A mutant's run: mutmut's own recorder stays (here, the stand-in's, which fails).
    process = start(tmp_path, "animalstore_client._core.call.x_f__mutmut_1")
    _, stderr = process.communicate(timeout=60)

    assert process.returncode == 1
    assert "the start-up hook should have replaced this" in stderr
    assert not (tmp_path / "hits").exists()


def test_a_write_that_fails_costs_the_record_not_the_process(tmp_path: Path) -> None:
    (tmp_path / "hits").mkdir()  # a folder where the file should be: every open fails
    process = start(tmp_path, "stats")
    stdout, stderr = process.communicate(timeout=60)

    assert (process.returncode, stdout, stderr) == (0, "reached\n", "")
