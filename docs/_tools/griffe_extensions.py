"""Griffe extensions that make the reference read as the API is used, from unchanged docstrings.

``CachedViewsAsProperties``: the clients' ``with_raw_response`` is made by the SDK's own
descriptor (``cached_view``, which autospec can see through), read as an attribute like a
``functools.cached_property``; griffe knows only the standard decorators, and would list it as
a method.

``RestructuredTextAsMarkdown``: the docstrings, written for ``help()``, introduce code as
reStructuredText does (``Example::`` and an indented block) and name methods with Sphinx roles
(``:meth:`reset```); Markdown would print the ``::`` and the roles as they are. Each such block
becomes a fenced one, each role its target in code.
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

import griffe

#: A line that ends in the literal-block marker: ``Example::``, ``text::`` or a bare ``::``.
_MARKER = re.compile(r"^(?P<indent> *)(?P<text>.*?)::$")
#: A Sphinx cross-reference role: ``:meth:`reset```, ``:class:`~pkg.Fault```.
_ROLE = re.compile(r":(?:meth|class|func|attr|data|exc|mod|obj):`~?([^`]+)`")


def indentation(line: str) -> int:
    """Return the number of spaces ``line`` starts with."""
    return len(line) - len(line.lstrip(" "))


def literal_block_end(lines: list[str], marker: int) -> int:
    """Return the index after the literal block introduced on line ``marker``; ``marker`` if none.

    The block is the lines after the marker and a blank line that are blank or indented deeper
    than the marker's line, less the blank lines that end them.
    """
    if marker + 1 >= len(lines) or lines[marker + 1].strip():
        return marker
    end = marker + 2
    while end < len(lines) and (
        not lines[end].strip() or indentation(lines[end]) > indentation(lines[marker])
    ):
        end += 1
    while end > marker + 2 and not lines[end - 1].strip():
        end -= 1
    return end if end > marker + 2 else marker


def markdown_from_rest(text: str) -> str:
    """Return ``text`` with its reStructuredText literal blocks and roles as Markdown.

    A literal block becomes a fenced block (``python`` where it parses as Python, else
    ``text``) at the marker's indentation, introduced as reST reads the marker: ``text::`` as
    ``text:``, ``text ::`` as ``text`` and a bare ``::`` as nothing. A role such as
    ``:meth:`reset``` becomes its target in code, ```reset```.
    """
    lines = _ROLE.sub(r"`\1`", text).split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        marker = _MARKER.match(lines[index])
        end = literal_block_end(lines, index) if marker else index
        if marker is None or end == index:
            out.append(lines[index])
            index += 1
            continue
        prefix, intro = marker["indent"], marker["text"]
        if intro.strip():
            out += [prefix + (intro.rstrip() if intro.endswith(" ") else f"{intro}:"), ""]
        code = textwrap.dedent("\n".join(lines[index + 2 : end]))
        try:
            ast.parse(code)
        except SyntaxError:
            language = "text"
        else:
            language = "python"
        out.append(f"{prefix}```{language}")
        out += [prefix + line if line else line for line in code.split("\n")]
        out.append(f"{prefix}```")
        index = end
    return "\n".join(out)


#: The SDK's decorator that makes an attribute as ``functools.cached_property`` does.
CACHED_VIEW = "animalstore_client._raw.cached_view"


class CachedViewsAsProperties(griffe.Extension):
    """Show a function decorated with ``cached_view`` as a cached property (see the module)."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        """Put a cached property where griffe has just put the function, once it is made."""
        if func.parent is None or not any(
            decorator.callable_path == CACHED_VIEW for decorator in func.decorators
        ):
            return
        attribute = griffe.Attribute(
            func.name,
            annotation=func.returns,
            lineno=func.lineno,
            endlineno=func.endlineno,
            docstring=func.docstring,
        )
        attribute.labels |= {"cached", "property"}
        func.parent.set_member(func.name, attribute)


class RestructuredTextAsMarkdown(griffe.Extension):
    """Show the docstrings' reST literal blocks and roles as Markdown (see the module)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite each object's docstring as it is loaded, before any copy is made of it."""
        if obj.docstring is not None:
            obj.docstring.value = markdown_from_rest(obj.docstring.value)
