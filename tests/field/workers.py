"""Functions that ``ProcessPoolExecutor`` workers run in test_pickling.py (importable by name)."""

from __future__ import annotations

from animalstore_client import Client


def list_pets(base_url: str, api_key: str) -> int:
    """Make one real call from the worker; raise whatever SDK error it gets."""
    with Client(api_key, base_url=base_url, max_retries=0) as client:
        return len(client.list_pets())
