"""Pre-fork servers and process pools: a client used before ``os.fork()`` works in both
processes, each on its own connections, and the child leaves the parent's alone.

The processes are real (``tests/field/fork_script.py`` forks), and so is the server: the
built-in store's HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json

import pytest

from animalstore_client.testing import FakeAnimalStore
from tests.conftest import at_scale
from tests.field import run_script

KEY = "sk-fork-test"


@pytest.mark.parametrize("calls", at_scale(30, 300, "calls"))
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_parent_and_child_each_get_their_own_answers(kind: str, calls: int) -> None:
    store = FakeAnimalStore(api_keys={KEY})
    for number in range(100):
        store.add_pet(f"pet{number}", 1, "available")

    with store.serve() as base_url:
        outcome = json.loads(run_script("fork_script.py", base_url, KEY, kind, str(calls)))

    assert outcome["parent"] == {"crossed": 0, "errors": 0}
    # The child used pools of its own (it had none until its first call, which did not go out
    # on the connection the parent had pooled), and closed neither the one it inherited (whose
    # sockets are the parent's) nor let a finalizer close it.
    assert outcome["child"] == {
        "pool_before_first_call": "None",
        "crossed": 0,
        "errors": 0,
        "on_parents_connection": False,
        "inherited_closed": False,
    }
    assert outcome["child_exit"] == 0
    # The child closed its client and exited; the parent's pooled connection was not touched.
    assert outcome["after"] == {"same_connection": True, "retries": 0}
    # 1 call before the fork, 1 raw and ``calls`` in the child, ``calls`` in the parent, 1 after.
    assert len(store.requests) == 2 * calls + 3


@pytest.mark.parametrize("kind", ["sync", "async", "async-loop-closed"])
def test_a_child_that_drops_its_client_leaves_no_unclosed_socket_warning(kind: str) -> None:
    # No reference of the test's own to the inherited pool: the SDK's must keep it from the
    # garbage collector, which would report the parent's sockets unclosed (-X dev). With the
    # parent's loop closed before the fork, nothing else keeps an async pool (the script says
    # why).
    store = FakeAnimalStore(api_keys={KEY})
    with store.serve() as base_url:
        status, printed = run_script(
            "fork_drop_script.py", base_url, KEY, kind, python_options=("-X", "dev")
        ).splitlines()
    assert status == "0"
    assert printed == "''"
    assert len(store.requests) == 2  # one call in each process
