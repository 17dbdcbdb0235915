"""The sans-IO core: everything the SDK decides, once, for every client and backend.

It builds each attempt's plain ``Request`` (``call``, ``operations``), decides retries and
their waits (``retries``), the deadline and the size cap (``call``, ``wire.BodyReader``),
redacts the key (``wire.RequestView`` in the requests errors keep, ``wire.redacted`` in any
message from elsewhere), reads the service's deprecation signals (``deprecation``), and turns
an ``Answer`` or a ``SendFailure`` into a result or an exception (``response``, ``converter``,
``exceptions``). It sends nothing: it imports no HTTP client,
transport or session, and no library but httpx's plain data types, which the public API's
views are made of. The backends (``animalstore_client._backends``) do the sending.
"""
