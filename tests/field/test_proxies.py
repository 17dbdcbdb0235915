"""Proxies: a client that builds its own pool honours the proxy variables as httpx does.

Over real sockets: a forwarding proxy on 127.0.0.1 (``tests/field/proxy.py``) in front of the
built-in store's HTTP server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from animalstore_client import AsyncClient, Client
from animalstore_client.testing import FakeAnimalStore
from tests.conftest import Api
from tests.field.proxy import ForwardingProxy, forwarding_proxy

PROXY_VARIABLES = [
    f"{name}_{suffix}" for name in ("HTTP", "HTTPS", "ALL", "NO") for suffix in ("PROXY",)
]
PROXY_VARIABLES += [name.lower() for name in PROXY_VARIABLES]
KEY = "sk-proxy-test"


@pytest.fixture(autouse=True)
def _no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start from none of the machine's own proxy settings."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def store() -> FakeAnimalStore:
    return FakeAnimalStore(api_keys={KEY})


@pytest.fixture
def base_url(store: FakeAnimalStore) -> Iterator[str]:
    with store.serve() as url:
        yield url


@pytest.fixture
def proxy() -> Iterator[ForwardingProxy]:
    with forwarding_proxy() as running:
        yield running


@pytest.fixture(params=["sync", "async"])
def client_class(request: pytest.FixtureRequest) -> type[Client | AsyncClient]:
    return Client if request.param == "sync" else AsyncClient


def use(client_class: type[Client | AsyncClient], base_url: str) -> None:
    """Build a client with its own pool, list and create once, and close it."""
    loop = asyncio.new_event_loop()
    api = Api(client_class(api_key=KEY, base_url=base_url, max_retries=0), loop)
    try:
        assert api.list_pets() == []
        assert api.create_pet(name="Rex", category_id=3).id == 1
    finally:
        api.close()
        loop.close()


#: In a setting of the variables: the proxy's URL.
PROXY = "the proxy"


@pytest.mark.parametrize(
    ("variables", "proxied"),
    [
        *(
            pytest.param({variable: PROXY}, True, id=variable)
            for variable in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
        ),
        *(
            pytest.param(
                {"HTTP_PROXY": PROXY, variable: bypassed}, False, id=f"{variable}={bypassed}"
            )
            for variable in ["NO_PROXY", "no_proxy"]
            for bypassed in ["127.0.0.1", "*"]
        ),
    ],
)
def test_requests_go_through_the_proxy_the_variables_name_unless_no_proxy_bypasses_it(
    monkeypatch: pytest.MonkeyPatch,
    client_class: type[Client | AsyncClient],
    store: FakeAnimalStore,
    base_url: str,
    proxy: ForwardingProxy,
    variables: dict[str, str],
    proxied: bool,
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, proxy.url if value == PROXY else value)

    use(client_class, base_url)

    sent = [("GET", f"{base_url}/pets"), ("POST", f"{base_url}/pets")]
    assert proxy.forwarded == (sent if proxied else [])
    assert [request.method for request in store.requests] == ["GET", "POST"]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in store.requests)
    assert store.pets[0].name == "Rex"


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy"])
def test_https_requests_ask_the_https_proxy_for_a_tunnel(
    monkeypatch: pytest.MonkeyPatch,
    client_class: type[Client | AsyncClient],
    proxy: ForwardingProxy,
    variable: str,
) -> None:
    from animalstore_client import APIConnectionError

    monkeypatch.setenv(variable, proxy.url)
    with httpx.Client() as plain, pytest.raises(httpx.ProxyError):
        plain.get("https://animalstore.invalid/v1/pets")
    loop = asyncio.new_event_loop()
    api = Api(
        client_class(api_key=KEY, base_url="https://animalstore.invalid/v1", max_retries=0), loop
    )
    try:
        with pytest.raises(APIConnectionError, match=r"GET https://animalstore\.invalid/v1/pets"):
            api.list_pets()
    finally:
        api.close()
        loop.close()

    # The same tunnel request as plain httpx's, and nothing sent anywhere else: the name
    # does not even resolve.
    assert proxy.forwarded == [("CONNECT", "animalstore.invalid:443")] * 2


def test_the_sdk_routes_as_a_plain_httpx_client_does(
    monkeypatch: pytest.MonkeyPatch, store: FakeAnimalStore, base_url: str, proxy: ForwardingProxy
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with httpx.Client() as plain:
        plain.get(f"{base_url}/pets", headers={"Authorization": f"Bearer {KEY}"})
    through_httpx = list(proxy.forwarded)

    use(Client, base_url)

    assert through_httpx == [("GET", f"{base_url}/pets")]
    assert proxy.forwarded[1:] == [("GET", f"{base_url}/pets"), ("POST", f"{base_url}/pets")]


def test_a_proxy_that_cannot_be_reached_is_an_api_connection_error(
    monkeypatch: pytest.MonkeyPatch, store: FakeAnimalStore, base_url: str
) -> None:
    from animalstore_client import APIConnectionError

    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    with (
        Client(api_key=KEY, base_url=base_url, max_retries=0) as client,
        pytest.raises(APIConnectionError),
    ):
        client.list_pets()
    assert store.requests == []
