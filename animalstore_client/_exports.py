"""Public classes read as public: ``animalstore_client.NotFoundError``, not ``..._exceptions``."""

from __future__ import annotations

from typing import Any

__all__ = ["publish"]


def publish(namespace: dict[str, Any]) -> None:
    """Make each class a package re-exports name the package as its module.

    Reprs, tracebacks and ``help()`` then show the name users import. Pickle finds a class by
    ``__module__`` and ``__qualname__``, so only a class exported under its own name moves.

    Args:
        namespace: the package's ``globals()``; the classes listed in its ``__all__`` move to
            its ``__name__``.
    """
    module = namespace["__name__"]
    for name in namespace["__all__"]:
        value = namespace[name]
        if isinstance(value, type) and value.__qualname__ == name:
            value.__module__ = module
