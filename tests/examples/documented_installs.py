"""Only what the docs say to install: the distributions a page names, and a guard for the rest.

A reader who pastes a snippet has installed the SDK, and whatever the page asked them to
install above that snippet (``pip install '/path/to/animalstore_client[httpx2]'``, ``pip
install pandas``), with what those depend on; nothing else. ``allowed`` is that set of
distributions for one place in a page; ``unimportable`` the modules of every other installed
distribution, which ``GUARD`` (run before the snippet) hides from every finder of modules, as
in a fresh environment. The developers' extras (``test``, ``docs``, ``release``) are not a reader's
set-up, so installing them counts for nothing here.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.metadata
import re
import shlex
from collections.abc import Iterable

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: What every fresh virtual environment has.
FRESH = frozenset({"pip", "setuptools", "wheel"})
#: The SDK's distribution.
SDK = "animalstore-client"
#: Extras for the SDK's developers, not its users.
DEVELOPERS_EXTRAS = frozenset({"test", "docs", "release"})
#: An install command, in a shell block or inline code, up to the end of its line or code span.
_INSTALL = re.compile(r"\b(?:pip install|uv add)\s+([^`\n]+)")
#: What names the SDK itself in an install command: the checkout (``.``), a path or the wheel.
_THE_SDK = re.compile(r"(?:^\.|animalstore_client)[^\[]*(?:\[(?P<extras>[^\]]*)\])?$")

#: Run before a snippet (``python guard.py SNIPPET``), with the set of modules to refuse in
#: place of ``{unimportable}``: every finder of modules then finds none of them (nor their
#: submodules), so that importing one raises ``ModuleNotFoundError`` and
#: ``importlib.util.find_spec`` gives ``None``, as in an environment without it.
GUARD = """\
import runpy
import sys

UNIMPORTABLE = {unimportable!r}


class Without:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        parts = name.split(".")
        if any(".".join(parts[:end]) in UNIMPORTABLE for end in range(1, len(parts) + 1)):
            return None
        return self.finder.find_spec(name, path, target)

    def __getattr__(self, name):
        return getattr(self.finder, name)


sys.meta_path[:] = [Without(finder) for finder in sys.meta_path]
del sys.argv[0]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def requirements_named(text: str, before_line: int) -> list[str]:
    """Return the requirements the install commands of ``text`` above ``before_line`` name.

    The SDK is always one: the page is about it. A command naming the SDK counts with the
    users' extras it names.
    """
    found = [SDK]
    for match in _INSTALL.finditer(text):
        if text.count("\n", 0, match.start()) + 1 >= before_line:
            break
        for word in shlex.split(match[1], comments=True):
            if word in ("&&", ";", "|") or word.startswith("&&"):
                break
            if word.startswith("-"):
                continue
            sdk = _THE_SDK.search(word)
            if sdk is not None:
                extras = {e.strip() for e in (sdk["extras"] or "").split(",")} - {""}
                found.append(f"{SDK}[{','.join(sorted(extras - DEVELOPERS_EXTRAS))}]")
            else:
                found.append(word)
    return found


def allowed(requirements: Iterable[str]) -> frozenset[str]:
    """Return the distributions ``requirements`` install, with those they depend on."""
    pending = [Requirement(requirement) for requirement in requirements]
    seen: set[tuple[str, frozenset[str]]] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            needs = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        extras = requirement.extras or {""}
        for need in map(Requirement, needs):
            marker = need.marker
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in extras):
                pending.append(need)
    return frozenset(name for name, _ in seen) | FRESH


@functools.cache
def _modules() -> dict[str, frozenset[str]]:
    """Each installed distribution's top modules (``pandas``, ``opentelemetry.sdk``)."""
    suffixes = sorted(importlib.machinery.all_suffixes(), key=len, reverse=True)
    found: dict[str, frozenset[str]] = {}
    for dist in importlib.metadata.distributions():
        names: set[str] = set()
        for file in dist.files or []:
            parts = list(file.parts)
            suffix = next((s for s in suffixes if parts[-1].endswith(s)), None)
            if suffix is None:
                continue
            parts[-1] = parts[-1][: -len(suffix)]
            if parts[-1] == "__init__":
                parts.pop()
            if parts and all(part.isidentifier() for part in parts):
                names.add(".".join(parts))
        found[canonicalize_name(dist.metadata["Name"])] = frozenset(
            name for name in names if not any(name.startswith(f"{other}.") for other in names)
        )
    return found


def unimportable(allowed_distributions: frozenset[str]) -> frozenset[str]:
    """Return the modules of every installed distribution not in ``allowed_distributions``."""
    modules = _modules()
    kept = {name for dist in allowed_distributions for name in modules.get(dist, ())}
    refused = {
        name
        for dist, names in modules.items()
        if dist not in allowed_distributions
        for name in names
    }
    return frozenset(
        name
        for name in refused - kept
        if not any(name.startswith(f"{keep}.") or keep.startswith(f"{name}.") for keep in kept)
    )
