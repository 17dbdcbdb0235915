"""``FakeAnimalStore(honour_idempotency_keys=True)``: only a create is answered from its key.

A ``GET`` (or any other method) that carries an ``Idempotency-Key`` is answered from the
store as it is now, never from an earlier answer to the same key.
"""

from __future__ import annotations

import json

import pytest

from animalstore_client.testing import FakeAnimalStore

AUTH = {"authorization": "Bearer test-key"}
WITH_KEY = {**AUTH, "idempotency-key": "k-1"}


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/pets"), ("GET", "/v1/pets/1"), ("DELETE", "/v1/pets/1"), ("PUT", "/v1/pets")],
)
def test_a_request_other_than_a_create_is_never_answered_from_its_key(
    method: str, path: str
) -> None:
    store = FakeAnimalStore(honour_idempotency_keys=True)
    store.handle(method, path, "", WITH_KEY, b"")
    store.add_pet(name="Rex", category_id=3)

    again = store.handle(method, path, "", WITH_KEY, b"")
    fresh = store.handle(method, path, "", AUTH, b"")

    assert ("idempotent-replayed", "true") not in again[1]
    assert (again[0], json.loads(again[2])) == (fresh[0], json.loads(fresh[2]))


def test_a_get_with_a_key_sees_what_was_created_since() -> None:
    store = FakeAnimalStore(honour_idempotency_keys=True)
    assert store.handle("GET", "/v1/pets", "", WITH_KEY, b"")[2] == b"[]"
    assert store.handle("GET", "/v1/pets/1", "", WITH_KEY, b"")[0] == 404
    created = store.handle("POST", "/v1/pets", "", AUTH, b'{"name": "Rex", "categoryId": 3}')
    assert created[0] == 201

    listed = store.handle("GET", "/v1/pets", "", WITH_KEY, b"")
    one = store.handle("GET", "/v1/pets/1", "", WITH_KEY, b"")

    assert json.loads(listed[2]) == [json.loads(created[2])]
    assert (one[0], json.loads(one[2])) == (200, json.loads(created[2]))
    # And the key still deduplicates the create it is then sent with.
    body = b'{"name": "Tom", "categoryId": 4}'
    first = store.handle("POST", "/v1/pets", "", WITH_KEY, body)
    second = store.handle("POST", "/v1/pets", "", WITH_KEY, body)
    assert (first[0], second[0]) == (201, 201)
    assert first[2] == second[2]
    assert len(store.pets) == 2
