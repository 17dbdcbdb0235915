"""Run as a script by test_fork.py: one client, used before a fork, then by both processes.

Usage: ``python fork_script.py BASE_URL API_KEY sync|async CALLS``. Prints one JSON object.

Before forking, the parent makes a call, so that its pool holds an idle keep-alive connection:
the socket a child would share by mistake. Then parent and child each make CALLS calls at the
same time, ``list_pets(limit=k)`` with k in 1..50 for the parent and 51..100 for the child
(the store holds 100 pets), and count answers of the wrong length ("crossed") and errors.
The child says which pool its client held before its first call (none: the one it inherited
is set aside at the fork). Its first call is a raw one, made while the parent waits for it,
and says whether it went out on the parent's pooled connection (the same local port: it must
not). That shows a shared pool whatever the timing; crossed answers show it only when the two
processes happen to use the socket at the same moment, which takes many calls.
The child closes its client, drops it, and says whether the pool it inherited got closed (it
must not be: it holds the parent's sockets); then it exits normally (finalizers and atexit
run). Last, the parent calls once more: the answer must come on the connection it had before
the fork, first try.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from animalstore_client import APIResponse, AsyncClient, Client, Pet

base_url, api_key, kind, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def local_port(raw: APIResponse[list[Pet]]) -> int:
    stream = raw.http_response.extensions["network_stream"]
    port: int = stream.get_extra_info("client_addr")[1]
    return port


def tally(limits: range, call: Callable[[int], list[Pet]]) -> dict[str, Any]:
    crossed = errors = 0
    for index in range(calls):
        limit = limits[index % len(limits)]
        try:
            crossed += len(call(limit)) != limit
        except Exception as exc:
            errors += 1
            last_error = f"{type(exc).__name__}: {exc}"
    result: dict[str, Any] = {"crossed": crossed, "errors": errors}
    if errors:
        result["last_error"] = last_error
    return result


def fork_with_pipes() -> tuple[int, int, int]:
    """Fork, with two pipes from the child to the parent: its outcome, and a go once its first
    call is done.

    Returns:
        ``(0, outcome, go)`` in the child, the ends it writes; ``(pid, outcome, go)`` in the
        parent, the ends it reads.
    """
    read_end, write_end = os.pipe()
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.close(go_read)
        return 0, write_end, go_write
    os.close(write_end)
    os.close(go_write)
    return pid, read_end, go_read


def run_sync() -> dict[str, Any]:
    client = Client(api_key, base_url=base_url, max_retries=0)
    port_before = local_port(client.with_raw_response.list_pets(limit=1))
    inherited = client._pool.http
    pid, outcome_end, go_end = fork_with_pipes()
    if pid == 0:
        pool_before = repr(client._pool.http)
        first_port = local_port(client.with_raw_response.list_pets(limit=51))
        os.write(go_end, b"!")
        outcome: dict[str, Any] = {"pool_before_first_call": pool_before}
        outcome |= tally(range(51, 101), lambda limit: client.list_pets(limit=limit))
        outcome["on_parents_connection"] = first_port == port_before
        client.close()
        del client
        gc.collect()
        outcome["inherited_closed"] = inherited.is_closed
        os.write(outcome_end, json.dumps(outcome).encode())
        sys.exit(0)  # a normal exit: atexit handlers and weakref finalizers run
    os.read(go_end, 1)  # the child's first call is done (or the child is gone)
    parent = tally(range(1, 51), lambda limit: client.list_pets(limit=limit))
    child = json.loads(os.read(outcome_end, 65536))
    _, status = os.waitpid(pid, 0)
    raw = client.with_raw_response.list_pets(limit=1)
    after = {"same_connection": local_port(raw) == port_before, "retries": raw.retries_taken}
    client.close()
    return {"parent": parent, "child": child, "child_exit": status, "after": after}


def run_async() -> dict[str, Any]:
    client = AsyncClient(api_key, base_url=base_url, max_retries=0)
    loop = asyncio.new_event_loop()  # the parent's loop: still open at the fork
    port_before = local_port(loop.run_until_complete(client.with_raw_response.list_pets(limit=1)))
    inherited = client._pool.http
    pid, outcome_end, go_end = fork_with_pipes()
    if pid == 0:
        pool_before = repr(client._pool.http)

        async def child_main() -> dict[str, Any]:
            # A new event loop in the child, as a worker process would start.
            raw = await client.with_raw_response.list_pets(limit=51)
            os.write(go_end, b"!")
            outcome: dict[str, Any] = {
                "pool_before_first_call": pool_before,
                "crossed": 0,
                "errors": 0,
            }
            outcome["on_parents_connection"] = local_port(raw) == port_before
            for index in range(calls):
                limit = 51 + index % 50
                try:
                    outcome["crossed"] += len(await client.list_pets(limit=limit)) != limit
                except Exception as exc:
                    outcome["errors"] += 1
                    outcome["last_error"] = f"{type(exc).__name__}: {exc}"
            await client.aclose()
            return outcome

        outcome = asyncio.run(child_main())
        gc.collect()
        outcome["inherited_closed"] = inherited.is_closed
        os.write(outcome_end, json.dumps(outcome).encode())
        sys.exit(0)
    os.read(go_end, 1)  # the child's first call is done (or the child is gone)
    parent = tally(
        range(1, 51), lambda limit: loop.run_until_complete(client.list_pets(limit=limit))
    )
    child = json.loads(os.read(outcome_end, 65536))
    _, status = os.waitpid(pid, 0)
    raw = loop.run_until_complete(client.with_raw_response.list_pets(limit=1))
    after = {"same_connection": local_port(raw) == port_before, "retries": raw.retries_taken}
    loop.run_until_complete(client.aclose())
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    return {"parent": parent, "child": child, "child_exit": status, "after": after}


if __name__ == "__main__":
    print(json.dumps(run_sync() if kind == "sync" else run_async()))
