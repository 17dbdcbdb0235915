"""Check what editors see of an installed copy: ``pyright --verifytypes`` for each package.

Usage: ``python .ci/verify_types.py PYRIGHT PYTHON PACKAGE...``, where PYTHON belongs to an
environment with the package installed (not editable: pyright reads what users get). Fails
unless every public symbol has a known type (100% completeness) and every public function and
class has a docstring.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile


def main(pyright: str, python: str, packages: list[str]) -> int:
    """Run the check on each package; return 0 when all pass, 1 otherwise."""
    # pyright finds the installed package through the first `python` on PATH (its
    # --pythonpath option is not honoured by --verifytypes), and from a directory that does
    # not hold the source tree, which it would otherwise read instead.
    # Absolute, not resolved: the environment is the directory of the link, not of its target.
    pyright, bin_dir = os.path.abspath(pyright), os.path.dirname(os.path.abspath(python))
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    failed = False
    with tempfile.TemporaryDirectory() as empty:
        for package in packages:
            run = subprocess.run(
                [pyright, "--verifytypes", package, "--ignoreexternal", "--outputjson"],
                capture_output=True,
                text=True,
                env=env,
                cwd=empty,
                check=False,
            )
            report = json.loads(run.stdout)["typeCompleteness"]
            problems = [
                f"{symbol['name']}: {diagnostic['message']}"
                for symbol in report["symbols"]
                for diagnostic in symbol["diagnostics"]
            ]
            score = report["completenessScore"]
            undocumented = (
                report["missingFunctionDocStringCount"] + report["missingClassDocStringCount"]
            )
            installed = report.get("pyTypedPath", "")
            print(
                f"{package}: completeness {score:.1%}, {undocumented} undocumented, "
                f"from {installed or '(not found)'}"
            )
            for problem in problems:
                print("  " + problem.replace("\n", "\n    "))
            if score < 1 or undocumented or problems or "site-packages" not in installed:
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
