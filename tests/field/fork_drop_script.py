"""Run as a script by test_fork.py, under ``-X dev``: a forked child that keeps no reference to
the pool it inherited, uses the client, drops it and exits normally.

Usage: ``python -X dev fork_drop_script.py BASE_URL API_KEY sync|async|async-loop-closed``.
Prints the child's exit status and what its stderr held until it had dropped the client and
collected garbage (nothing, when the inherited pool was kept aside: its sockets are the
parent's, and a pool that was garbage collected would warn of them unclosed).

``async-loop-closed``: the parent closed its loop before the fork without finalizing its async
generators (``loop.close()`` alone), leaving its pool open. An open loop would keep a pool
that the child let go alive by itself (its finalizer hook queues the pool's closing on it); a
closed one keeps nothing, so only the SDK's own reference keeps it from the garbage collector.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import warnings

from animalstore_client import AsyncClient, Client

base_url, api_key, kind = sys.argv[1], sys.argv[2], sys.argv[3]


def child(used: Client | AsyncClient) -> None:
    if isinstance(used, Client):
        used.list_pets()
        used.close()
    else:

        async def main(async_client: AsyncClient) -> None:
            # -X dev reports a step slower than 0.1 s, as one is on a loaded machine.
            asyncio.get_running_loop().slow_callback_duration = 60
            await async_client.list_pets()
            await async_client.aclose()

        asyncio.run(main(used))
    del used
    gc.collect()
    # What the garbage collector reported so far is above this line; at exit, Python's own
    # teardown reports the sockets that were never closed (the parent's, under -X dev).
    print("collected", file=sys.stderr, flush=True)


loop = (
    None if kind == "sync" else asyncio.new_event_loop()
)  # the parent's: open at the fork, but in async-loop-closed
client: Client | AsyncClient
if loop is None:
    client = Client(api_key, base_url=base_url, max_retries=0)
    client.list_pets()
else:
    client = AsyncClient(api_key, base_url=base_url, max_retries=0)
    loop.slow_callback_duration = 60  # -X dev reports a first call's TLS set-up as slow
    loop.run_until_complete(client.list_pets())
    if kind == "async-loop-closed":
        loop.close()  # without shutdown_asyncgens(): the pool stays open
read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read_end)
    os.dup2(write_end, 2)  # the child's stderr, where unclosed sockets would be reported
    child(client)
    del client
    sys.exit(0)  # a normal exit: atexit handlers and finalizers run
os.close(write_end)
with os.fdopen(read_end, "rb") as stderr:
    printed = stderr.read().decode()
_, status = os.waitpid(pid, 0)
print(status)
print(repr(printed.partition("collected\n")[0]))
if loop is None:
    client.close()  # type: ignore[union-attr]
elif not loop.is_closed():
    loop.run_until_complete(client.aclose())  # type: ignore[union-attr]
    loop.close()
else:
    # Its pool can no longer be closed: the parent's own sockets, reported unclosed at its exit,
    # are how its loop was closed, not what this script looks at.
    warnings.simplefilter("ignore", ResourceWarning)
