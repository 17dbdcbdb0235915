"""Check the built documentation site for what ``mkdocs build --strict`` cannot see.

Usage: ``python .ci/check_site.py SITE`` after ``mkdocs build --strict`` (SITE: its output,
``site``). The strict build already fails on a broken link or anchor, a page left out of the
nav and a reference to a name that does not exist; this checks what the site's own code does:

* the front page is the README and the CHANGELOG is a page (docs/_tools/hooks.py), and every
  page in docs/ was built;
* every operation of the OpenAPI document (``tests/contract/operations.py``) is documented as
  a method of ``Client`` and of ``AsyncClient`` (``async`` there), returning what the
  method's own annotation says;
* no reStructuredText markup, a ``::`` or a ``:meth:`` role, shows in the reference
  (``RestructuredTextAsMarkdown`` there).

Prints each problem and exits 1 if there is any.
"""

from __future__ import annotations

import html
import re
import sys
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from animalstore_client import Client  # noqa: E402
from tests.contract.operations import operations  # noqa: E402  (the one list of operations)

_REST = re.compile(r"::$|:(?:meth|class|func|attr|data|exc|mod|obj):", re.MULTILINE)


def shown_type(annotation: object) -> str:
    """Return a type as the reference shows it: ``list[Pet]``, ``Pet``, ``None``."""
    if annotation is None or annotation is type(None):
        return "None"
    arguments = typing.get_args(annotation)
    if arguments:
        origin = typing.get_origin(annotation)
        return f"{getattr(origin, '__name__', origin)}[{', '.join(map(shown_type, arguments))}]"
    return str(getattr(annotation, "__name__", annotation))


def methods() -> dict[str, str]:
    """Return each operation's method and what it returns, in both clients (awaited)."""
    return {
        operation.method_name: shown_type(
            typing.get_type_hints(getattr(Client, operation.method_name))["return"]
        )
        for operation in operations()
    }


def text(markup: str) -> str:
    """Return the text of some HTML: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def entry(page: str, anchor: str) -> str:
    """Return an entry's heading (its name and labels) and signature as text, spaced once.

    An entry that is not on the page is an empty string.
    """
    if f'id="{anchor}"' not in page:
        return ""
    start = page.index(">", page.index(f'id="{anchor}"')) + 1
    return " ".join(text(page[start : page.index("</pre>", start)]).replace("¶", "").split())


def page_title(page: str) -> str:
    """Return the text of the page's first heading, without its permalink sign."""
    found = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.DOTALL)
    return text(found[1]).replace("¶", "").strip() if found else ""


def problems(site: Path) -> list[str]:
    """Return what is wrong with the site built into ``site``."""
    found: list[str] = []
    pages = {
        "README.md": site / "index.html",
        "CHANGELOG.md": site / "changelog" / "index.html",
    }
    for markdown in sorted((ROOT / "docs").rglob("*.md")):
        name = markdown.relative_to(ROOT / "docs").with_suffix("")
        pages[str(markdown.relative_to(ROOT))] = site / name / "index.html"
    for source, built in pages.items():
        if not built.is_file():
            found.append(f"{source}: no page {built.relative_to(site)}")
    for source in ("README.md", "CHANGELOG.md"):
        title = (ROOT / source).read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        if pages[source].is_file() and page_title(pages[source].read_text("utf-8")) != title:
            found.append(f"{source}: its page is not titled {title!r}")

    clients = (site / "api" / "clients" / "index.html").read_text(encoding="utf-8")
    for cls in ("Client", "AsyncClient"):
        for method, returns in methods().items():
            shown = entry(clients, f"animalstore_client.{cls}.{method}")
            heading = method + (" async" if cls == "AsyncClient" else "")
            if not shown.startswith(f"{heading} {method}(") or not shown.endswith(
                f") -> {returns}"
            ):
                found.append(f"{cls}.{method} is shown as {shown!r}")

    for page in sorted((site / "api").rglob("index.html")):
        article = page.read_text(encoding="utf-8")
        for match in _REST.finditer(text(article)):
            found.append(f"{page.relative_to(site)}: reStructuredText shows: {match[0]!r}")
    return found


if __name__ == "__main__":
    listed = problems(Path(sys.argv[1]))
    for problem in listed:
        print(problem, file=sys.stderr)
    print(f"site check: {len(listed)} problem(s)" if listed else "site check: passed")
    sys.exit(1 if listed else 0)
