"""The test matrix: the whole suite on every Python the package supports (``nox``).

``.ci/run`` runs it as ``nox``: one ``tests`` session per version, each in a fresh virtual
environment with the package and its ``test`` extra installed (so the newest numpy, aiohttp ...
that version can have). A version whose interpreter cannot be found fails the run instead of
being skipped. Run one version with ``nox -s "tests(3.10)"``; arguments after ``--`` go to
pytest (``nox -- -k numpy``). The oldest Python's session installs the oldest httpx2 the
``httpx2`` extra admits, the others the newest. ``nox -s mutate -- MODULE`` is mutation
testing, by hand (docs/development.md).
"""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nox
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

#: Every version ``requires-python`` admits and the classifiers declare.
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
#: Where pyenv keeps the interpreters on the project's machines and CI's.
PYENV_VERSIONS = "/root/.pyenv/versions"

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "venv"
nox.options.error_on_missing_interpreters = True
# No interpreter from the network: the machines reach package registries only, and the matrix
# is about the interpreters they have.
nox.options.download_python = "never"


def _version_of(executable: str) -> tuple[str, str] | None:
    """Return the ``X.Y`` version and the real executable path of ``executable``, if it runs."""
    try:
        completed = subprocess.run(
            [
                executable,
                "-c",
                "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.executable)",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = completed.stdout.splitlines()
    if completed.returncode != 0 or len(lines) != 2:
        return None
    return lines[0], lines[1]


def _patch_level(path: str) -> tuple[int, ...]:
    release = re.search(r"/(\d+(?:\.\d+)*)[^/]*/bin/python3$", path)
    return tuple(int(part) for part in release[1].split(".")) if release else ()


def interpreter(version: str) -> str:
    """Return the path of a working Python ``version``, or ``version`` itself if there is none.

    ``pythonX.Y`` on ``PATH`` comes first, then the newest ``X.Y.*`` under pyenv's versions.
    Each candidate is run, since a pyenv shim on ``PATH`` exists for every version pyenv has
    but runs only the ones selected (``pyenv global``). Given back a bare version it cannot
    find, nox reports the interpreter missing, which fails the run.
    """
    pyenv = sorted(glob.glob(f"{PYENV_VERSIONS}/{version}.*/bin/python3"), key=_patch_level)
    for candidate in [shutil.which(f"python{version}"), *reversed(pyenv)]:
        found = _version_of(candidate) if candidate else None
        if found is not None and found[0] == version:
            return found[1]
    return version


@nox.session
@nox.parametrize("python", [interpreter(version) for version in PYTHONS], ids=list(PYTHONS))
def tests(session: nox.Session) -> None:
    """Run the whole test suite on one Python version.

    The oldest Python gets the oldest httpx2 the ``httpx2`` extra admits (its lower bound, read
    from ``pyproject.toml``), the others the newest each can have: so both ends of the range
    are tested, with no session of their own.
    """
    oldest = session.python == interpreter(PYTHONS[0])
    pinned = [extra_lower_bound("httpx2")] if oldest else []
    session.install("--quiet", ".[test]", *pinned)
    session.run(
        "python",
        "-c",
        "import sys, numpy, importlib.metadata as m; "
        "print(f'Python {sys.version.split()[0]} from {sys.base_prefix}; "
        "numpy {numpy.__version__}; httpx2 {m.version(\"httpx2\")}')",
    )
    if pinned:
        version = pinned[0].partition("==")[2]
        session.run(
            "python",
            "-c",
            "import importlib.metadata as m, sys; from packaging.version import Version; "
            f"sys.exit(Version(m.version('httpx2')) != Version({version!r}))",
        )
    # No .pytest_cache: nothing of one run is for the next (CI starts from a fresh clone).
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *session.posargs)


def extra_lower_bound(extra: str) -> str:
    """Return the requirement pinning the oldest release the one-package ``extra`` admits.

    From ``pyproject.toml``: ``httpx2>=2.0`` gives ``httpx2==2.0``.
    """
    with (Path(__file__).parent / "pyproject.toml").open("rb") as file:
        [declared] = tomllib.load(file)["project"]["optional-dependencies"][extra]
    requirement = Requirement(declared)
    [lower] = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    return f"{requirement.name}=={lower}"


@nox.session(reuse_venv=True)
def mutate(session: nox.Session) -> None:
    """Mutation-test modules: ``nox -s mutate -- MODULE ...`` or ``-- --changed`` (vs main).

    In an environment of its own, kept between runs: mutmut brings packages that the import-cost
    tests of ``.venv`` would count. Runs ``python -m tests.mutation`` (docs/development.md).
    """
    session.install("--quiet", ".[mutation]")
    session.run("python", "-m", "tests.mutation", *session.posargs)
