"""Release checks: build the sdist and the wheel, and try them as a user and a packager would.

Usage: ``python .ci/check_release.py TOOLS_PYTHON``, run by the Python of an environment with
nox (the ``test`` extra: it finds the interpreters as the matrix does), where TOOLS_PYTHON
belongs to one with the ``release`` extra (build, twine, check-wheel-contents). Everything
happens in a temporary directory outside the source tree, removed afterwards:

1. ``python -m build``: the sdist, then the wheel built from the unpacked sdist (build's
   default), so the wheel holds only what the sdist carries.
2. ``twine check --strict`` on both (the metadata, and the README as an index would render
   it) and ``check-wheel-contents`` on the wheel.
3. The wheel installed into a fresh environment on the oldest and the newest Python of
   ``noxfile.PYTHONS``, and ``examples/quickstart.py`` run there with ``ANIMALSTORE_*`` unset
   (so it starts the built-in store) from a directory of its own with ``python -I`` (so only
   the installed copy can be imported), then ``animalstore --version``.
4. The sdist unpacked, installed with its ``test`` extra into a fresh environment on the
   newest Python, and ``pytest`` run on ``SDIST_TESTS`` from the unpacked tree, as
   distribution packagers do (not all of it: ``SDIST_TESTS`` says why).

Each step is printed before it runs; any failure stops the run with a non-zero status. The
time each took is printed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import noxfile  # noqa: E402  (the matrix's versions and how it finds their interpreters)

#: The tests run from the unpacked sdist: tests/unit and tests/examples, which read the files
#: beside the package and the tests (the README, docs/, .ci/, noxfile.py, pyproject.toml,
#: CHANGELOG.md), so that one missing from the sdist fails here; and tests/contract and
#: tests/testing, quick checks of the package against the API's OpenAPI document. The rest
#: (tests/cli, tests/field, tests/reliability: most of the suite's six minutes, in sockets,
#: subprocesses and load tests) reads nothing but the package and the tests, and runs from the
#: clone under nox on every Python.
SDIST_TESTS = ("tests/unit", "tests/examples", "tests/contract", "tests/testing")

T = TypeVar("T")


class CheckFailed(Exception):
    """A step failed; the message says which."""


def run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    """Run ``command``, printed first, and raise ``CheckFailed`` if it fails."""
    print("+ " + " ".join(str(part) for part in command), flush=True)
    if subprocess.run(command, cwd=cwd, env=env, check=False).returncode != 0:
        raise CheckFailed(f"failed: {' '.join(str(part) for part in command)}")


def interpreter(version: str) -> str:
    """Return the path of Python ``version`` as nox finds it, or fail."""
    found = noxfile.interpreter(version)
    if found == version:
        raise CheckFailed(
            f"no Python {version}: not on PATH as python{version}, nor under "
            f"{noxfile.PYENV_VERSIONS}"
        )
    return found


def fresh_environment(python: str, where: Path) -> Path:
    """Make a virtual environment at ``where`` with ``python``; return its interpreter."""
    run(python, "-m", "venv", where)
    return where / "bin" / "python"


def user_environment() -> dict[str, str]:
    """Return this environment less ``ANIMALSTORE_*``: no key, so the built-in store."""
    return {
        name: value for name, value in os.environ.items() if not name.startswith("ANIMALSTORE_")
    }


def build(tools: str, dist: Path) -> tuple[Path, Path]:
    """Build the sdist and the wheel into ``dist``; return their paths."""
    run(tools, "-m", "build", "--outdir", dist, ROOT)
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise CheckFailed(f"expected one sdist and one wheel in {dist}, got {sdists + wheels}")
    return sdists[0], wheels[0]


def check_metadata(tools: str, sdist: Path, wheel: Path) -> None:
    """Check both artifacts as an index would, and the wheel's contents."""
    run(tools, "-m", "twine", "check", "--strict", sdist, wheel)
    run(tools, "-m", "check_wheel_contents", "--config", ROOT / "pyproject.toml", wheel)


def try_wheel(wheel: Path, version: str, work: Path) -> None:
    """Install ``wheel`` on Python ``version`` and run the quickstart and the command from it."""
    python = fresh_environment(interpreter(version), work / f"wheel-{version}")
    run(python, "-m", "pip", "install", "-q", wheel)
    here = work / f"quickstart-{version}"
    here.mkdir()
    shutil.copy(ROOT / "examples" / "quickstart.py", here)
    # -I: neither the script's directory, the working directory nor PYTHONPATH on sys.path,
    # so the source tree cannot stand in for the installed copy; the check says where it is.
    site = python.parent.parent
    run(
        python,
        "-I",
        "-c",
        "import animalstore_client, pathlib; "
        f"assert pathlib.Path(animalstore_client.__file__).is_relative_to({str(site)!r}), "
        "animalstore_client.__file__",
        cwd=here,
    )
    run(python, "-I", "-W", "error", "quickstart.py", cwd=here, env=user_environment())
    run(python.parent / "animalstore", "--version", cwd=here, env=user_environment())


def run_sdist_tests(sdist: Path, version: str, work: Path) -> None:
    """Unpack ``sdist``, install it with its ``test`` extra and run ``SDIST_TESTS`` from it."""
    with tarfile.open(sdist) as archive:
        archive.extractall(work, filter="data")
    tree = work / sdist.name.removesuffix(".tar.gz")
    python = fresh_environment(interpreter(version), work / "sdist-env")
    run(python, "-m", "pip", "install", "-q", f"{tree}[test]")
    run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SDIST_TESTS, cwd=tree)


def main(tools: str) -> int:
    """Run every check in order; return 0 if all pass, 1 at the first that fails."""
    oldest, newest = noxfile.PYTHONS[0], noxfile.PYTHONS[-1]
    timings: dict[str, float] = {}

    def timed(name: str, action: Callable[..., T], *args: object) -> T:
        started = time.monotonic()
        result = action(*args)
        timings[name] = time.monotonic() - started
        return result

    try:
        with tempfile.TemporaryDirectory(prefix="animalstore-release-") as directory:
            work = Path(directory)
            sdist, wheel = timed("build the sdist and the wheel", build, tools, work / "dist")
            timed("twine check, check-wheel-contents", check_metadata, tools, sdist, wheel)
            for version in (oldest, newest):
                timed(f"the wheel on Python {version}", try_wheel, wheel, version, work)
            timed(f"the sdist's tests on Python {newest}", run_sdist_tests, sdist, newest, work)
    except CheckFailed as failure:
        print(f"release checks: {failure}", file=sys.stderr)
        return 1
    finally:
        for name, seconds in timings.items():
            print(f"  {seconds:6.1f} s  {name}")
    print(f"release checks passed in {sum(timings.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
