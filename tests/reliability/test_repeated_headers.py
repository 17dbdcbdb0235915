"""A header the SDK reads as one value, repeated in an answer: its first value, on every backend.

``Retry-After``, ``X-Request-Id``, ``Deprecation`` and ``Sunset`` each hold one value. httpx and
httpx2 join a repeated field into one string (``3, 3``, which reads as no wait at all) where
aiohttp gives the first; the SDK reads the first on all five backends, over real sockets, and
after a raw response is pickled.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from datetime import datetime, timezone

import httpx
import pytest

from animalstore_client import NotFoundError, Pet
from animalstore_client._core.wire import FirstValues
from tests.conftest import VirtualClock
from tests.reliability.conftest import PET, Api, error_body
from tests.reliability.faultserver import FaultServer, Reply


@pytest.mark.parametrize(
    "values", [("3", "3"), ("3", "7"), ("3", "soon")], ids=["same", "different", "then-junk"]
)
def test_a_repeated_retry_after_waits_what_its_first_value_says(
    make_client: Callable[..., Api],
    server: FaultServer,
    clock: VirtualClock,
    values: tuple[str, str],
) -> None:
    headers = [("Retry-After", value) for value in values]
    server.script(Reply(503, json=error_body(503), headers=headers), Reply(200, json=[PET]))
    client = make_client(server, max_retries=1)

    assert client.list_pets() == [Pet.from_dict(PET)]

    assert clock.slept == [3.0]  # not the backoff (0.375 s to 0.5 s) that "3, 3" would get
    assert len(server.requests) == 2


def test_a_repeated_request_id_is_its_first_value_on_errors_and_raw_responses(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    headers = [("X-Request-Id", "req_first"), ("X-Request-Id", "req_second")]
    server.script(
        Reply(404, json=error_body(404, "not_found"), headers=headers),
        Reply(200, json=[PET], headers=headers),
    )
    client = make_client(server, max_retries=0)

    with pytest.raises(NotFoundError) as caught:
        client.list_pets()
    raw = client.raw.list_pets()

    assert caught.value.request_id == "req_first"
    assert raw.request_id == "req_first"
    assert pickle.loads(pickle.dumps(raw)).request_id == "req_first"
    # The httpx view keeps every value, joined as httpx joins them.
    assert raw.headers.get_list("x-request-id") == ["req_first", "req_second"]


def test_repeated_deprecation_signals_are_read_by_their_first_values(
    make_client: Callable[..., Api], server: FaultServer
) -> None:
    headers = [
        ("Deprecation", "@1796428800"),  # 2026-12-05
        ("Deprecation", "@1798761600"),
        ("Sunset", "Wed, 01 Jan 2031 00:00:00 GMT"),
        ("Sunset", "Thu, 01 Jan 2032 00:00:00 GMT"),
    ]
    server.script(Reply(200, json=[PET], headers=headers))
    client = make_client(server, max_retries=0)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = client.raw.list_pets()

    assert [str(warning.message) for warning in caught] == [
        "GET /pets is deprecated by the service as of 2026-12-05 and will be removed on 2031-01-01"
    ]
    assert raw.deprecation == datetime(2026, 12, 5, tzinfo=timezone.utc)
    assert raw.sunset == datetime(2031, 1, 1, tzinfo=timezone.utc)


def test_first_values_is_a_mapping_of_each_field_once_to_its_first_value() -> None:
    headers = FirstValues(
        httpx.Headers([("Retry-After", "3"), ("X-Request-Id", "req_1"), ("retry-after", "7")])
    )

    assert list(headers) == ["retry-after", "x-request-id"]
    assert len(headers) == 2
    assert dict(headers) == {"retry-after": "3", "x-request-id": "req_1"}
