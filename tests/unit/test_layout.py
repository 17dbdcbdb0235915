"""The layout's rules (docs/development.md, "The layout"), read off the package's imports.

Every import counts, those inside functions too; those under ``if TYPE_CHECKING:`` are type
annotations only and are left out, but for import cycles, which none may close.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "animalstore_client"
NAME = PACKAGE.name


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, *, for_type_checkers: bool = False) -> list[str]:
    """Every module (and imported name, as ``module.name``) ``path`` imports at run time.

    With ``for_type_checkers``, those under ``if TYPE_CHECKING:`` too.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = (
        set()
        if for_type_checkers
        else {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for node in ast.walk(block)
        }
    )
    found: list[str] = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def own_module(imported: str) -> str | None:
    """The package's module that an import names (``a.b.name`` -> ``a.b``), if any."""
    while imported and imported not in MODULES:
        imported = imported.rpartition(".")[0]
    return imported or None


def test_every_module_is_read() -> None:
    assert {"animalstore_client._core.call", "animalstore_client._backends.httpx"} <= set(MODULES)


@pytest.mark.parametrize("name", [n for n in MODULES if n.startswith(f"{NAME}._core")])
def test_the_core_imports_no_http_client_transport_or_other_library(name: str) -> None:
    for imported in imports(MODULES[name]):
        root, _, rest = imported.partition(".")
        assert root not in {"aiohttp", "httpx2", "httpcore", "anyio"}, imported
        assert not rest.endswith(("Client", "Transport")), imported  # httpx.Client ...
        assert not imported.startswith(f"{NAME}._backends"), imported


@pytest.mark.parametrize(
    "name",
    [n for n in MODULES if not n.startswith(f"{NAME}._backends") and n != NAME],
)
def test_only_the_backends_import_aiohttp_or_httpx2(name: str) -> None:
    for imported in imports(MODULES[name]):
        assert imported.partition(".")[0] not in {"aiohttp", "httpx2"}, imported


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def test_nothing_in_the_sdk_imports_the_command_line_or_the_test_store() -> None:
    cli, store = f"{NAME}._cli", f"{NAME}.testing"
    for name, path in MODULES.items():
        for imported in imports(path):
            target = own_module(imported) or ""
            if within(target, cli):
                assert within(name, cli) or name == f"{NAME}.__main__", name
            if within(target, store):
                assert within(name, cli) or within(name, store), name


@pytest.mark.parametrize("for_type_checkers", [False, True], ids=["run time", "type checkers"])
def test_no_module_imports_one_that_imports_it_back(for_type_checkers: bool) -> None:
    graph = {
        name: {
            target
            for imported in imports(path, for_type_checkers=for_type_checkers)
            if (target := own_module(imported)) not in (None, name, NAME)
        }
        for name, path in MODULES.items()
    }

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            current = todo.pop()
            if current == goal:
                return True
            if current not in seen:
                seen.add(current)
                todo += graph.get(current, ())
        return False

    circles = sorted(
        f"{a} <-> {b}" for a, targets in graph.items() for b in targets if reaches(b, a)
    )
    assert circles == []


def test_import_animalstore_client_imports_neither_aiohttp_nor_httpx2() -> None:
    code = (
        "import sys, animalstore_client, animalstore_client.testing; "
        "print(sorted(m for m in ('aiohttp', 'httpx2') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
