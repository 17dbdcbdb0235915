"""The API reference covers every public name: an entry in docs/api/, a line in reference.md.

The site's build (``mkdocs build --strict``, docs/development.md) fails on an entry for a name
that does not exist; these fail on a public name the reference leaves out, and run wherever
the tests do, the sdist included.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

import animalstore_client
import animalstore_client.testing
import animalstore_client_pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
MODULES = [animalstore_client, animalstore_client.testing, animalstore_client_pytest]
#: A mkdocstrings entry: ``::: animalstore_client.Client`` alone on its line.
_ENTRY = re.compile(r"^::: ([\w.]+)$", re.MULTILINE)
#: A line of reference.md's tables: ``[`Client`](api/clients.md#animalstore_client.Client)``.
_LINK = re.compile(r"\[`([\w.]+)`\]\((api/[\w-]+\.md)#([\w.]+)\)")


def public_names() -> set[str]:
    return {f"{module.__name__}.{name}" for module in MODULES for name in module.__all__}


def entries() -> dict[str, list[str]]:
    """Each page of docs/api and the names it has an entry for, in order."""
    return {
        f"api/{page.name}": _ENTRY.findall(page.read_text(encoding="utf-8"))
        for page in sorted((DOCS / "api").glob("*.md"))
    }


def module_of(path: str) -> ModuleType | None:
    """The public module ``path`` is a name of, or ``None`` for a module itself."""
    if path in {module.__name__ for module in MODULES}:
        return None
    owners = [module for module in MODULES if path.startswith(f"{module.__name__}.")]
    owner = max(owners, key=lambda module: len(module.__name__), default=None)
    return owner if owner is not None and "." not in path[len(owner.__name__) + 1 :] else None


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.__name__)
def test_every_public_name_has_one_entry_in_the_reference_pages(module: ModuleType) -> None:
    documented = [
        path.removeprefix(f"{module.__name__}.")
        for names in entries().values()
        for path in names
        if module_of(path) is module
    ]

    assert sorted(documented) == sorted(module.__all__)


def test_the_reference_pages_document_nothing_else() -> None:
    listed = {path for names in entries().values() for path in names}
    modules = {module.__name__ for module in MODULES}

    assert listed - public_names() <= modules


def test_the_summary_links_every_public_name_to_its_entry() -> None:
    links = _LINK.findall((DOCS / "reference.md").read_text(encoding="utf-8"))
    pages = entries()

    for shown, page, anchor in links:
        assert anchor.endswith(f".{shown}"), (shown, anchor)
        assert anchor in pages[page], f"{page} has no entry for {anchor}"
    assert sorted(anchor for _, _, anchor in links) == sorted(public_names())
