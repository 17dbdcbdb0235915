"""An in-memory animal store, faithful to the API spec, for tests and for trying the SDK out.

Usage, with no animal store server anywhere::

    from datetime import datetime, timezone

    import httpx

    from animalstore_client.testing import FakeAnimalStore, Fault, retry_floor

    store = FakeAnimalStore(api_keys={"test-key"})
    store.add_pet("Rex", 3, "available")

    # No socket: an SDK client wired to the store in process (sync or async).
    with store.client() as client:
        client.list_pets()
    async_client = store.async_client(max_retries=0)

    # Or hand the transport (a FakeTransport) to any httpx client.
    httpx.Client(transport=store.transport(), base_url="http://fake/v1/")

    # A real HTTP server on 127.0.0.1, for anything that needs a URL.
    with store.serve() as base_url:  # "http://127.0.0.1:<port>/v1"
        ...

    store.pets       # what is stored, in id order
    store.requests   # every RecordedRequest received, rejected ones included

    # Announce that an operation is deprecated, as a service would (Deprecation, Sunset and
    # Link headers on its answers): for testing how your code copes with the SDK's warning.
    store.set_deprecation("GET /pets", sunset=datetime(2031, 1, 1, tzinfo=timezone.utc))

    # Script failures: the next create answers 503, the one after loses its answer.
    store.inject(
        Fault.error(503, retry_after=0.01, operation="create"),
        Fault.drop(processed=True, operation="create"),
    )
    store.honour_idempotency_keys = True  # off by default: the spec does not promise it

    # A client waits at least 0.3 s whatever Retry-After says; a test may wait less.
    with retry_floor(0.0), store.client() as client:
        ...

Faults (:class:`Fault`: ``error``, ``delay``, ``drop_before``, ``drop_after``, ``not_json``,
``wrong_schema``, ``truncated``) apply in order, each to ``times`` requests of its
``operation``, in process and over ``serve()`` alike; ``store.faults`` lists those pending,
``store.reset()`` drops them. With pytest installed, the fixtures ``animalstore_store``,
``animalstore_client``, ``animalstore_async_client`` and ``animalstore_base_url`` need no
set-up (a plugin registered on install).

From a shell, ``python -m animalstore_client.testing [--port 8080] [--api-key KEY]`` serves a
fresh store in the foreground until Ctrl-C; ``serve_in_foreground`` does the same from Python.
A command line of your own takes the same ``--port`` and ``--fault`` options with
``port_number`` and ``fault_option`` (argparse ``type=``), and ``FAULT_HELP`` as the help of
``--fault``.

Every route lives under ``/v1``; every request must carry ``Authorization: Bearer <key>``
with one of the store's keys (checked before anything else). Every error response has the
Error body ``{"code": ..., "message": ..., "status": ...}``, ``status`` equal to the HTTP
status and ``message`` one line naming the wrong field or parameter by its wire name
(``categoryId``, ``limit``). The ``code`` values, which the spec leaves open, are:

* ``unauthorized`` (401): the Authorization header is missing, is not a Bearer one, or its
  key is not accepted. The response also carries ``WWW-Authenticate: Bearer``.
* ``invalid_body`` (400): POST /pets with a body that is empty, not valid JSON (NaN and
  Infinity included), or not a JSON object.
* ``invalid_field`` (400): POST /pets with ``name`` or ``categoryId`` missing, ``name`` not
  a string, ``categoryId`` not an int64 integer (a boolean is not one), or ``status`` not a
  PetStatus value (``null`` included). Unknown fields are ignored.
* ``invalid_parameter`` (400): GET /pets with ``limit`` not an integer in 1..100, ``status``
  not a PetStatus value, or either given twice. Unknown parameters are ignored.
* ``not_found`` (404): an unknown path, or GET /pets/{petId} with no such pet, including a
  ``petId`` that is not an int64 integer (``/v1/pets/abc``).
* ``method_not_allowed`` (405): a known path with another method; the ``Allow`` header
  lists the methods it takes.
* ``protocol_error`` (400, 414, 431, 505 ... as http.server decides): only from
  ``serve()``, when the HTTP request itself cannot be parsed (a bad request line or
  ``Content-Length``, say). The connection is closed and the request is not recorded.

A pet created without ``status`` keeps none (the spec does not say what the service
assigns): its JSON has no ``status`` key.

The answers to the deprecated ``GET /pets/{petId}`` carry ``Deprecation: @1796428800``
(5 December 2026: the spec gives no date for the deprecation itself) and
``Sunset: Thu, 05 Dec 2030 00:00:00 GMT`` (the spec's removal date), 404s included;
``FakeAnimalStore.set_deprecation`` changes that and announces other operations.
"""

from animalstore_client._exports import publish
from animalstore_client.testing._faults import FAULT_HELP, Fault, FaultKind, OperationName
from animalstore_client.testing._foreground import fault_option, port_number, serve_in_foreground
from animalstore_client.testing._retries import retry_floor
from animalstore_client.testing._store import (
    IN_PROCESS_BASE_URL,
    ClientSettings,
    FakeAnimalStore,
    RecordedRequest,
)
from animalstore_client.testing._transport import FakeTransport

__all__ = [
    "FAULT_HELP",
    "IN_PROCESS_BASE_URL",
    "ClientSettings",
    "FakeAnimalStore",
    "FakeTransport",
    "Fault",
    "FaultKind",
    "OperationName",
    "RecordedRequest",
    "fault_option",
    "port_number",
    "retry_floor",
    "serve_in_foreground",
]

publish(globals())
