"""The fault API itself: checked arguments, the command line's form, order and thread-safety;
and the pytest plugin, loaded with no configuration."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from animalstore_client import AsyncClient, Client
from animalstore_client.testing import FakeAnimalStore, Fault


@pytest.mark.parametrize(
    ("make", "error", "names"),
    [
        (lambda: Fault.error(200), ValueError, "status"),
        (lambda: Fault.error("503"), TypeError, "status"),  # type: ignore[arg-type]
        (lambda: Fault.error(503, retry_after=-1), ValueError, "retry_after"),
        (lambda: Fault.error(503, headers={"Content-Length": "1"}), ValueError, "headers"),
        (lambda: Fault.error(503, headers={"X": "a\nb"}), ValueError, "headers"),
        (lambda: Fault.error(503, code=5), TypeError, "code"),  # type: ignore[arg-type]
        (lambda: Fault.delay(-1), ValueError, "seconds"),
        (lambda: Fault.delay(float("nan")), ValueError, "seconds"),
        (lambda: Fault.delay("1"), TypeError, "seconds"),  # type: ignore[arg-type]
        (lambda: Fault.drop(processed=True, times=0), ValueError, "times"),
        (lambda: Fault.drop(processed=True, times=True), TypeError, "times"),
        (lambda: Fault.malformed("not_json", operation="nope"), ValueError, "operation"),  # type: ignore[arg-type]
        (lambda: Fault("explode"), ValueError, "kind"),  # type: ignore[arg-type]
        (lambda: Fault("delay", status=503), ValueError, "status"),
        (lambda: Fault.parse("error"), ValueError, "error needs its argument"),
        (lambda: Fault.parse("error:abc"), ValueError, "status must be a number"),
        (lambda: Fault.parse("truncated:3"), ValueError, "takes no"),
        (lambda: Fault.parse("delay:1,colour=red"), ValueError, "colour"),
        (lambda: Fault.parse(503), TypeError, "str"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_are_refused_naming_the_argument(make: Any, error: type, names: str) -> None:
    with pytest.raises(error, match=names):
        make()


def test_inject_refuses_what_is_not_a_fault_and_adds_nothing() -> None:
    store = FakeAnimalStore()
    with pytest.raises(TypeError, match="Fault"):
        store.inject(Fault.malformed("not_json"), "error:503")  # type: ignore[arg-type]
    assert store.faults == []


def test_honour_idempotency_keys_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="honour_idempotency_keys"):
        FakeAnimalStore(honour_idempotency_keys=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("error:503", Fault.error(503)),
        (
            "error:429,retry-after=1,times=3,operation=list",
            Fault.error(429, retry_after=1, times=3, operation="list"),
        ),
        (
            "error:400,code=invalid_field,message=name, please",
            Fault.error(400, "invalid_field", "name, please"),
        ),
        (
            "error:410,header=Sunset:Thu, 05 Dec 2030 00:00:00 GMT",
            Fault.error(410, headers={"Sunset": "Thu, 05 Dec 2030 00:00:00 GMT"}),
        ),
        ("delay:2.5,times=always", Fault.delay(2.5, times=None)),
        ("drop-before", Fault.drop(processed=False)),
        (
            "drop_after,operation=create,reset=yes",
            Fault.drop(processed=True, reset=True, operation="create"),
        ),
        ("not-json", Fault.malformed("not_json")),
        ("wrong-schema,operation=get", Fault.malformed("wrong_schema", operation="get")),
        ("truncated", Fault.malformed("truncated")),
    ],
)
def test_parse_reads_the_command_lines_form(text: str, expected: Fault) -> None:
    assert Fault.parse(text) == expected


def test_describe_says_what_a_fault_does() -> None:
    assert Fault.error(503, retry_after=1, times=2, operation="create").describe() == (
        "the next 2 create requests: answer 503 unavailable"
        " ('injected fault: 503 Service Unavailable'), retry-after: 1, unprocessed"
    )
    assert Fault.delay(2, times=None).describe() == (
        "every request, until reset: process it, answer 2 s late"
    )


def test_faults_pending_show_what_is_left_and_are_consumed_in_order() -> None:
    store = FakeAnimalStore()
    store.inject(Fault.error(500, times=2), Fault.error(502))
    with store.client(max_retries=0) as client:
        statuses = []
        for _ in range(4):
            try:
                client.list_pets()
                statuses.append(200)
            except Exception as exc:
                statuses.append(exc.status_code)  # type: ignore[attr-defined]
            if len(statuses) == 1:
                assert store.faults == [Fault.error(500, times=1), Fault.error(502)]
    assert statuses == [500, 500, 502, 200]


def test_faults_are_taken_once_each_from_many_threads() -> None:
    store = FakeAnimalStore()
    store.inject(Fault.error(503, times=50))
    start = threading.Barrier(10)
    failures: list[int] = []

    def work() -> None:
        with store.client(max_retries=0) as client:
            start.wait()
            for _ in range(10):
                try:
                    client.list_pets()
                except Exception:
                    failures.append(1)

    threads = [threading.Thread(target=work) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(failures) == 50
    assert store.faults == []


def test_a_replayed_answer_is_marked_and_a_401_is_not_remembered() -> None:
    store = FakeAnimalStore(honour_idempotency_keys=True)
    headers = {"authorization": "Bearer test-key", "idempotency-key": "k1"}
    body = b'{"name": "Rex", "categoryId": 3}'
    bad = store.handle("POST", "/v1/pets", "", {**headers, "authorization": "Bearer x"}, body)
    first = store.handle("POST", "/v1/pets", "", headers, body)
    again = store.handle("POST", "/v1/pets", "", headers, body)
    assert (bad[0], first[0], again[0]) == (401, 201, 201)
    assert again[2] == first[2]
    assert ("idempotent-replayed", "true") in again[1]
    assert len(store.pets) == 1


# -- the pytest plugin ----------------------------------------------------------------------

PLUGIN_TEST = textwrap.dedent(
    """
    import asyncio

    import pytest

    from animalstore_client import AsyncClient, Client, InternalServerError
    from animalstore_client.testing import FakeAnimalStore, Fault, retry_floor


    def test_sync(animalstore_store: FakeAnimalStore, animalstore_client: Client) -> None:
        # A Retry-After waited as written: not the second and a half of the default backoff.
        animalstore_store.inject(Fault.error(500, retry_after=0.01, operation="list", times=3))
        with retry_floor(0.0), pytest.raises(InternalServerError):
            animalstore_client.list_pets()
        assert len(animalstore_store.requests) == 3  # the SDK's default: 2 retries


    def test_async_under_asyncio_run(
        animalstore_store: FakeAnimalStore, animalstore_async_client: AsyncClient
    ) -> None:
        asyncio.run(animalstore_async_client.create_pet(name="Rex", category_id=3))
        assert [pet.name for pet in animalstore_store.pets] == ["Rex"]


    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
    async def test_async_under_anyio(
        animalstore_store: FakeAnimalStore, animalstore_async_client: AsyncClient
    ) -> None:
        animalstore_store.inject(Fault.delay(0.01))
        assert await animalstore_async_client.list_pets() == []


    def test_base_url(animalstore_store: FakeAnimalStore, animalstore_base_url: str) -> None:
        with Client("test-key", base_url=animalstore_base_url) as client:
            client.create_pet(name="Rex", category_id=3)
        assert animalstore_store.requests[0].path == "/v1/pets"
    """
)


def run_pytest(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest as a user runs it, in ``directory``: without Hypothesis's plugin, which a user
    of the SDK need not have, and which imports all of Hypothesis at the end of every run (a
    second or more, for nothing here)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            *args,
        ],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_plugins_fixtures_work_with_no_configuration(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(PLUGIN_TEST)

    result = run_pytest(tmp_path, "-W", "error")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 passed" in result.stdout.splitlines()[-1]


def test_the_plugin_imports_nothing_of_the_sdk_until_a_fixture_is_used(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text(
        "import sys\n\n\ndef test_plain():\n"
        "    assert 'animalstore_client_pytest' in sys.modules\n"
        "    assert 'animalstore_client' not in sys.modules\n"
    )

    result = run_pytest(tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr


def test_the_fixtures_give_the_clients_they_say() -> None:
    # Their types, for the reader: the plugin's annotations are checked by mypy.
    import animalstore_client_pytest as plugin

    assert plugin.__all__ == sorted(plugin.__all__)
    assert Client.__name__ in (plugin.animalstore_client.__doc__ or "")
    assert AsyncClient.__name__ in (plugin.animalstore_async_client.__doc__ or "")
