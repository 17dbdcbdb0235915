"""``.ci/readme_script``: CI runs every line of a README block it takes, and fails on any."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_child

REPO = Path(__file__).resolve().parents[2]
READ_BLOCK = REPO / ".ci" / "readme_script"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="CI's scripts are bash")


def block_script(readme: Path, tag: str) -> subprocess.CompletedProcess[str]:
    return run_child("bash", READ_BLOCK, tag, readme, timeout=30)


def run_block(tmp_path: Path, block: str, tag: str = "tests") -> subprocess.CompletedProcess[str]:
    """Run the block marked ``tag`` in a README made of ``block``, as ``.ci/run`` does."""
    readme = tmp_path / "README.md"
    readme.write_text(block)
    script = block_script(readme, tag)
    assert script.returncode == 0, script.stderr
    return run_child("bash", "-euo", "pipefail", "-c", script.stdout, cwd=tmp_path, timeout=30)


def test_every_line_of_the_block_runs_in_one_shell_and_is_shown(tmp_path: Path) -> None:
    readme = """# Title

```sh
echo not this one
```

<!-- ci:tests -->
```sh
mkdir made && cd made
NAME=pets
echo "one $NAME" > ../out

echo two \\
  three >> ../out
```

```sh
echo nor this one >> out
```
"""
    completed = run_block(tmp_path, readme)

    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "out").read_text() == "one pets\ntwo three\n"
    assert completed.stdout.splitlines() == [
        "+ mkdir made && cd made",
        "+ NAME=pets",
        '+ echo "one $NAME" > ../out',
        "+ echo two \\",
        "  three >> ../out",
    ]


@pytest.mark.parametrize(
    ("failing", "status"),
    [
        ("exit 3", 3),
        ("false && echo unreachable", 1),  # set -e alone lets the next line run
        ("(exit 4) | cat", 4),
        ("sh -c 'exit 5' \\\n  && true", 5),
    ],
)
def test_a_failing_line_fails_the_block_and_stops_it(
    tmp_path: Path, failing: str, status: int
) -> None:
    readme = f"<!-- ci:tests -->\n```sh\necho first > out\n{failing}\necho last >> out\n```\n"
    completed = run_block(tmp_path, readme)

    assert completed.returncode == status
    assert (tmp_path / "out").read_text() == "first\n"


def test_each_marker_takes_its_own_block(tmp_path: Path) -> None:
    readme = (
        "<!-- ci:tests -->\n```sh\necho tests\n```\n<!-- ci:quickstart -->\n```\necho quick\n```\n"
    )
    assert run_block(tmp_path, readme, "tests").stdout == "+ echo tests\ntests\n"
    assert run_block(tmp_path, readme, "quickstart").stdout == "+ echo quick\nquick\n"


@pytest.mark.parametrize(
    "readme",
    [
        "no marker\n```sh\necho hi\n```\n",
        "<!-- ci:tests -->\n```sh\n\n```\n",
        "<!-- ci:testsuite -->\n```sh\necho hi\n```\n",
    ],
)
def test_a_missing_or_empty_block_is_an_error(tmp_path: Path, readme: str) -> None:
    (tmp_path / "README.md").write_text(readme)
    completed = block_script(tmp_path / "README.md", "tests")
    assert (completed.returncode, completed.stdout) == (1, "")


@pytest.mark.parametrize("tag", ["tests", "quickstart"])
def test_the_readmes_blocks_are_taken_whole(tag: str) -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    start = lines.index(f"<!-- ci:{tag} -->") + 2
    end = lines.index("```", start)
    commands = [line for line in lines[start:end] if line.strip()]

    script = block_script(REPO / "README.md", tag)

    assert script.returncode == 0
    # Each command of the block, whole and in order, as a line of the script; not run here.
    script_lines = script.stdout.splitlines()
    positions = [script_lines.index(command) for command in commands]
    assert positions == sorted(positions)
    assert len(commands) == script.stdout.count("\nstatus=$?")


def test_the_documented_site_build_is_the_one_ci_runs_and_prints_no_banner() -> None:
    # Material for MkDocs prints a banner on its end of life as it loads, unless
    # NO_MKDOCS_2_WARNING is set: every mkdocs command the guide gives sets it.
    guide = (REPO / "docs" / "development.md").read_text()
    commands = re.findall(r"([\w=]*)\s*\.venv-docs/bin/mkdocs (?:build|serve)", guide)
    assert len(commands) == 2
    assert set(commands) == {"NO_MKDOCS_2_WARNING=1"}

    script = block_script(REPO / "docs" / "development.md", "docs")

    assert script.returncode == 0
    assert "NO_MKDOCS_2_WARNING=1 .venv-docs/bin/mkdocs build --strict" in script.stdout
    ci = (REPO / ".ci" / "run").read_text()
    assert "bash .ci/readme_script docs docs/development.md" in ci
    # No command of its own: the guide's is the one.
    run_lines = [line for line in ci.splitlines() if not line.lstrip().startswith(("#", "echo"))]
    assert [line for line in run_lines if "mkdocs" in line] == []
