"""One mypy run over every type-checker snippet of the suite, not one run per test.

A cold ``mypy --strict`` of a user's snippet analyses the SDK and all it imports (httpx,
httpx2, aiohttp, trio, cattrs...: some 700 modules), seconds of work that is the same for every
snippet. So each snippet is a named module below; the first import of this module writes them
all into one temporary directory of its own and starts one mypy over them, in a subprocess
(with the options each test used to give its own run, and the working directory, hence
the configuration, of the run), which checks them beside the first tests of the session on
the other core; ``mypy_run()`` waits for it, and each test then checks the errors of its own
snippet. In a mutant's run (``MUTANT_UNDER_TEST``), where a module may be imported
for other tests, the run starts only when a test asks for it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Each snippet by module name: what a user writes; the tests name its flagged lines.
SNIPPETS = {
    # tests/unit/test_typing.py
    "typing_user": """\
from animalstore_client import APIResponse, AsyncClient, Client, Pet


async def main(client: Client, aclient: AsyncClient) -> None:
    client.get_pet(1)
    await aclient.get_pet(1)
    pets: list[Pet] = client.list_pets(limit=5)
    raw: APIResponse[list[Pet]] = client.with_raw_response.list_pets(limit=5)
    created: Pet = await aclient.create_pet(name="Rex", category_id=3)
    client.list_pets(limit="5")
""",
    # tests/unit/test_call_options.py
    "call_options_user": """\
import httpx
from animalstore_client import NOT_GIVEN, AsyncClient, Client, NotGiven, Pet


async def main(client: Client, aclient: AsyncClient, limit: float | NotGiven) -> None:
    pets: list[Pet] = client.list_pets(timeout=2.0, extra_headers={"X-A": "1"})
    client.list_pets(timeout=None)
    client.list_pets(timeout=NOT_GIVEN)
    client.list_pets(timeout=limit)
    await aclient.create_pet(name="R", category_id=3, idempotency_key="k", timeout=httpx.Timeout(1))
    client.with_raw_response.create_pet(name="Rex", category_id=3, idempotency_key=None)
    client.with_options(api_key="k", default_headers={"X-B": "2"})
    client.list_pets(timeout="2")
    client.list_pets(extra_headers={"X-A": 1})
    await aclient.create_pet(name="Rex", category_id=3, idempotency_key=7)
    client.with_options(api_key=None)
    client.list_pets(idempotency_key="k")
""",
}

#: The options of every test's former run (each snippet's run had ``--strict``, a cache of its
#: own, no incremental reuse of an earlier run, Python 3.10; ``deprecated`` was enabled by one
#: test's options and, from the repository's root, by its configuration for the other).
OPTIONS = ["--strict", "--enable-error-code", "deprecated", "--no-incremental"]
#: Seconds the fixture waits for the run at most (a cold run takes a few on an idle core).
TIMEOUT = 300.0


@dataclass(frozen=True)
class MypyRun:
    """The finished run: its exit status, its output and, per snippet, its own lines of it."""

    status: int
    stdout: str
    stderr: str
    paths: dict[str, Path]

    def output(self, snippet: str) -> str:
        """mypy's output lines about ``snippet`` (``<path>:<line>: error: ...`` and notes)."""
        prefix = f"{self.paths[snippet]}:"
        return "".join(
            line for line in self.stdout.splitlines(keepends=True) if line.startswith(prefix)
        )


class _Run:
    """The one run of this process: started once, waited for by ``mypy_run``."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.directory: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.finished: MypyRun | None = None

    def start(self) -> None:
        if self.process is not None:
            return
        self.directory = Path(tempfile.mkdtemp(prefix="typecheck-"))
        atexit.register(self.discard)
        paths = self.paths()
        for name, code in SNIPPETS.items():
            paths[name].write_text(code, encoding="utf-8")
        command = [sys.executable, "-m", "mypy", *OPTIONS]
        command += ["--cache-dir", str(self.directory / "cache"), "--python-version", "3.10"]
        command += [str(path) for path in paths.values()]
        with (
            open(self.directory / "stdout", "wb") as stdout,
            open(self.directory / "stderr", "wb") as stderr,
        ):
            self.process = subprocess.Popen(command, stdout=stdout, stderr=stderr)

    def paths(self) -> dict[str, Path]:
        assert self.directory is not None
        return {name: self.directory / f"{name}.py" for name in SNIPPETS}

    def result(self) -> MypyRun:
        if self.finished is None:
            self.start()
            assert self.process is not None
            assert self.directory is not None
            status = self.process.wait(timeout=TIMEOUT)
            stdout = (self.directory / "stdout").read_text(encoding="utf-8")
            stderr = (self.directory / "stderr").read_text(encoding="utf-8")
            self.finished = MypyRun(status, stdout, stderr, self.paths())
        return self.finished

    def discard(self) -> None:
        """At exit: stop the run if no test waited for it, and remove its directory (in the
        process that started it only: a forked child inherits the exit handler)."""
        if os.getpid() != self.owner:
            return
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


_RUN = _Run()
if "MUTANT_UNDER_TEST" not in os.environ:
    _RUN.start()


def mypy_run() -> MypyRun:
    """The one mypy run over every snippet, finished (the first call waits for it)."""
    return _RUN.result()
