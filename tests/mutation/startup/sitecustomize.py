"""In the subprocesses a test starts during a mutation run: tell mutmut which functions ran.

mutmut learns which test reaches which function by recording, in the test process, each call
of a mutated function while it runs the tests once ("stats"). The command line's tests run the
``animalstore`` command in subprocesses, where those records would be lost with the process (and
where mutmut's own recorder, reading its settings from the current folder, fails in the test's
temporary folder). ``tests/mutation/plugin.py`` puts this folder on the subprocesses'
``PYTHONPATH``; Python imports this module at start-up; in the stats run only, it appends the
name of each function reached, once, to the file the plugin reads after each test. Appended at
once, not at exit: a test that ends its command with ``kill -9`` loses nothing.
"""

from __future__ import annotations

import os

_HITS = os.environ.get("TESTS_MUTATION_HITS", "")

if _HITS and os.environ.get("MUTANT_UNDER_TEST") == "stats":
    import mutmut.mutation.trampoline

    _seen: set[str] = set()

    def _record(name: str, caller: str | None = None) -> None:
        if name in _seen:
            return
        _seen.add(name)
        try:
            fd = os.open(_HITS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, f"{name}\n".encode())
            finally:
                os.close(fd)
        except OSError:
            # A test that makes its command's writes fail (RLIMIT_FSIZE, no descriptor left)
            # makes this one fail too: that run's record is lost, not the command's outcome.
            pass

    mutmut.mutation.trampoline.record_trampoline_hit = _record
