"""Fixtures shared by the command line's tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.cli.test_cli import Server, emptied, served


@pytest.fixture
def closed_port() -> int:
    """A port that was free a moment ago and has no listener: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """A store that takes ``KEY``, served to the tests of a module."""
    yield from served()


@pytest.fixture
def api(server: Server) -> Server:
    """The module's served store, emptied for this test."""
    return emptied(server)
