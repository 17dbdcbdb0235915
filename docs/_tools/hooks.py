"""MkDocs hooks: the README is the site's front page and the CHANGELOG a page, as they are.

Both stay where GitHub and the sdist want them, at the top of the repository, outside docs/,
and are added to the site as generated pages rather than copied into docs/. Every page's links
are written for a reader of the repository (``docs/guide.md`` in the README, ``../README.md``
in a page of docs/); each that leads to a file the site carries is pointed at its page.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
#: Files outside docs/ that the site carries, by their path in the repository.
PAGES = {"README.md": "index.md", "CHANGELOG.md": "changelog.md"}
_LINK = re.compile(r"(\]\()([^)\s#]+)")


def site_path(target: str, source: str) -> str | None:
    """Return where a link from repository file ``source`` to ``target`` points on the site."""
    in_repo = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
    if in_repo in PAGES:
        return PAGES[in_repo]
    if in_repo.startswith("docs/"):
        return in_repo.removeprefix("docs/")
    return None


def rewrite_links(markdown: str, source: str, page: str) -> str:
    """Point the links of repository file ``source``, shown as site page ``page``, at pages."""

    def replace(match: re.Match[str]) -> str:
        target = site_path(match[2], source)
        if target is None:
            return match[0]
        return match[1] + posixpath.relpath(target, posixpath.dirname(page) or ".")

    return _LINK.sub(replace, markdown)


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    """Add the README and the CHANGELOG, as they are in the repository, as pages."""
    for source, page in PAGES.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        files.append(File.generated(config, page, content=text))
    return files


def on_page_markdown(markdown: str, page: Page, **kwargs: Any) -> str:
    """Rewrite links written for GitHub (``docs/guide.md``, ``../README.md``) for the site."""
    site_page = page.file.src_uri
    sources = {page_path: repo_path for repo_path, page_path in PAGES.items()}
    source = sources.get(site_page, f"docs/{site_page}")
    return rewrite_links(markdown, source, site_page)
