"""griffe extensions that make the reference read as the API is used, from unchanged docstrings.

``SpecialiseGenericBases``: methods inherited from a generic base, documented as their class
has them. ``Client`` and ``AsyncClient`` inherit their API methods from ``_BaseClient[Pets,
OnePet, Http]``, which annotates them with those type variables; read as written, the reference
would show ``Client.list_pets(...) -> Pets``. Type checkers substitute the base's type
arguments (``Client`` is ``_BaseClient[list[Pet], Pet, ...]``), and so does this extension:
each inherited method whose annotations name a type variable is copied into the class with the
arguments in their place, and one that then returns ``Coroutine[Any, Any, T]`` is shown as
``async`` and returning ``T``, as ``AsyncClient``'s are awaited. ``AsyncClient`` also assigns
``list_pets = _coroutine_function(_BaseClient.list_pets)`` for the runtime only (hidden from
type checkers): such an attribute, a call on the base's method of the same name, is that
method and is replaced by it.

``RestructuredTextAsMarkdown``: the docstrings, written for ``help()``, introduce code as
reStructuredText does (``Example::`` and an indented block) and name methods with Sphinx roles
(``:meth:`reset```); Markdown would print the ``::`` and the roles as they are. Each such block
becomes a fenced one, each role its target in code.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from typing import Any, TypeVar

import griffe

E = TypeVar("E")


def substitute(expression: E, arguments: dict[str, griffe.Expr]) -> E:
    """Return ``expression`` with every name in ``arguments`` replaced by its value."""
    if isinstance(expression, griffe.ExprName):
        return arguments.get(expression.name, expression)  # type: ignore[return-value]
    if isinstance(expression, list):
        return [substitute(item, arguments) for item in expression]  # type: ignore[return-value]
    if isinstance(expression, griffe.Expr):
        return dataclasses.replace(
            expression,
            **{
                field.name: substitute(getattr(expression, field.name), arguments)
                for field in dataclasses.fields(expression)
                if field.init
            },
        )
    return expression


def type_arguments(cls: griffe.Class) -> tuple[griffe.Class, dict[str, griffe.Expr]] | None:
    """Return the generic base of ``cls`` and its type arguments by parameter, if it has one.

    The base's parameters are those of its ``Generic[...]`` base, in order.
    """
    for base in cls.bases:
        if not isinstance(base, griffe.ExprSubscript):
            continue
        try:
            resolved = cls.modules_collection.get_member(base.canonical_path)
        except KeyError:  # a class from outside the package (``list[Pet]``): not generic here
            continue
        if not isinstance(resolved, griffe.Class):
            continue
        for generic in resolved.bases:
            if isinstance(generic, griffe.ExprSubscript) and generic.canonical_path in {
                "typing.Generic",
                "typing_extensions.Generic",
            }:
                parameters = elements(generic.slice)
                values = elements(base.slice)
                names = [str(parameter) for parameter in parameters]
                return resolved, dict(zip(names, values, strict=True))
    return None


def elements(expression: str | griffe.Expr) -> list[griffe.Expr]:
    """Return the items of a subscript's slice: ``A, B`` is two, ``A`` one."""
    if isinstance(expression, griffe.ExprTuple):
        return [item for item in expression.elements if isinstance(item, griffe.Expr)]
    assert isinstance(expression, griffe.Expr), expression
    return [expression]


def wraps_base_method(member: griffe.Object | griffe.Alias, base: griffe.Class) -> bool:
    """Whether ``member`` is ``name = wrapper(Base.name)``, the runtime twin of a base method."""
    value = getattr(member, "value", None)
    return (
        isinstance(member, griffe.Attribute)
        and isinstance(value, griffe.ExprCall)
        and any(
            isinstance(argument, griffe.ExprAttribute)
            and str(argument) == f"{base.name}.{member.name}"
            for argument in value.arguments
        )
    )


def specialise(method: griffe.Function, arguments: dict[str, griffe.Expr]) -> griffe.Function:
    """Return a copy of ``method`` with the type arguments in its annotations."""
    returns = substitute(method.returns, arguments)
    labels = set(method.labels)
    if isinstance(returns, griffe.ExprSubscript) and returns.canonical_path in {
        "collections.abc.Coroutine",
        "typing.Coroutine",
    }:
        returns = elements(returns.slice)[-1]
        labels.add("async")
    parameters = griffe.Parameters(
        *(
            griffe.Parameter(
                parameter.name,
                annotation=substitute(parameter.annotation, arguments),
                kind=parameter.kind,
                default=parameter.default,
                docstring=parameter.docstring,
            )
            for parameter in method.parameters
        )
    )
    docstring = method.docstring
    copy = griffe.Function(
        method.name,
        lineno=method.lineno,
        endlineno=method.endlineno,
        parameters=parameters,
        returns=returns,
        decorators=method.decorators,
        docstring=docstring
        and griffe.Docstring(
            docstring.value,
            lineno=docstring.lineno,
            endlineno=docstring.endlineno,
            parser=docstring.parser,
            parser_options=docstring.parser_options,
        ),
        runtime=method.runtime,
        analysis=method.analysis,
    )
    copy.labels |= labels
    return copy


def names_a_type_variable(method: griffe.Function, names: set[str]) -> bool:
    """Whether a type variable in ``names`` appears in the annotations of ``method``."""
    annotations = [method.returns, *(parameter.annotation for parameter in method.parameters)]
    return any(
        isinstance(part, griffe.ExprName) and part.name in names
        for annotation in annotations
        if isinstance(annotation, griffe.Expr)
        for part in annotation.iterate(flat=False)
    )


def modules(package: griffe.Module) -> list[griffe.Module]:
    """Return ``package`` and every module in it, however deep (not those it imports)."""
    children = [child for child in package.modules.values() if not child.is_alias]
    return [package, *(module for child in children for module in modules(child))]


class SpecialiseGenericBases(griffe.Extension):
    """Document inherited generic methods with their class's type arguments."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Specialise every class of the package that has a generic base."""
        for module in modules(pkg):
            for cls in module.classes.values():
                found = type_arguments(cls)
                if found is None:
                    continue
                base, arguments = found
                for name, member in base.functions.items():
                    own = cls.members.get(name)
                    if own is not None and not wraps_base_method(own, base):
                        continue
                    if names_a_type_variable(member, set(arguments)):
                        cls.set_member(name, specialise(member, arguments))


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


class RestructuredTextAsMarkdown(griffe.Extension):
    """Show the docstrings' reST literal blocks and roles as Markdown (see the module)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite each object's docstring as it is loaded, before any copy is made of it."""
        if obj.docstring is not None:
            obj.docstring.value = markdown_from_rest(obj.docstring.value)
