"""Tests of the places users run the SDK: notebooks, proxies, forks, process pools, event loops."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import run_child


def run_script(name: str, *arguments: str, python_options: tuple[str, ...] = ()) -> str:
    """Run ``tests/field/<name>`` in a fresh interpreter; return its stdout.

    The script must exit 0 and print nothing on stderr (where asyncio, the garbage collector
    and warnings would complain).
    """
    script = Path(__file__).with_name(name)
    finished = run_child(sys.executable, *python_options, script, *arguments, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert finished.stderr == ""
    return finished.stdout
