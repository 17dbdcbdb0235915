"""``AnimalStoreError``, the root of every exception the SDK raises.

A module of its own, at the bottom of the core: the converter's ``WireFormatError`` derives
from it, and so do the API's exceptions (``exceptions.py``), which carry a decoded ``Error``
model and so import the models, which import the converter.
"""

from __future__ import annotations

__all__ = ["AnimalStoreError"]


class AnimalStoreError(Exception):
    """Base class of every exception the SDK raises for an API call or for malformed data."""
