"""The test matrix: the whole suite on every Python the package supports (``nox``).

``.ci/run`` runs it as ``nox``: one ``tests`` session per version, each in a fresh virtual
environment with the package and its ``test`` extra installed (so the newest numpy, aiohttp ...
that version can have). A version whose interpreter cannot be found fails the run instead of
being skipped. Run one version with ``nox -s "tests(3.10)"``; arguments after ``--`` go to
pytest (``nox -- -k numpy``). ``nox -s mutate -- MODULE`` is mutation testing, by hand
(docs/development.md).
"""

from __future__ import annotations

import glob
import re
import shutil
import subprocess

import nox

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
    """Run the whole test suite on one Python version."""
    session.install("--quiet", ".[test]")
    session.run(
        "python",
        "-c",
        "import sys, numpy; print(f'Python {sys.version.split()[0]} from {sys.base_prefix}; "
        "numpy {numpy.__version__}')",
    )
    # No .pytest_cache: nothing of one run is for the next (CI starts from a fresh clone).
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *session.posargs)


@nox.session(reuse_venv=True)
def mutate(session: nox.Session) -> None:
    """Mutation-test modules: ``nox -s mutate -- MODULE ...`` or ``-- --changed`` (vs main).

    In an environment of its own, kept between runs: mutmut brings packages that the import-cost
    tests of ``.venv`` would count. Runs ``python -m tests.mutation`` (docs/development.md).
    """
    session.install("--quiet", ".[mutation]")
    session.run("python", "-m", "tests.mutation", *session.posargs)
