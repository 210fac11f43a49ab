"""The names a problem's starter code leaves unimported: what its code reads that nothing binds, and the
modules its comments and the problem's hints tell the learner to call (``jax.lax.while_loop`` in a
comment of a starter that imports only ``jax.numpy as jnp``: a learner who follows it gets a NameError
on the first Run). ``judge check``'s starter check reports each one.

Pure functions of the source text and the hints; the code is parsed, never run.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import symtable
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

#: The module names that comments and hints use for JAX: a mention of ``jnp.where`` means the learner
#: writes ``jnp.where``, so ``jnp`` must be bound.
JAX_NAMES = ("jax", "jnp", "lax")
#: ``jax.X`` in prose, X a name; ``jax.jit`` only says how the judge calls the function (no learner
#: writes it in a starter), so it asks for no import.
_MENTION = re.compile(r"(?<![\w.])(" + "|".join(JAX_NAMES) + r")\.(?!jit\b)([A-Za-z_]\w*)")
#: Names a module has without binding them.
_MODULE_NAMES = frozenset({"__name__", "__file__", "__doc__", "__builtins__", "__spec__"})


@dataclass(frozen=True)
class Unimported:
    """A name the starter needs and does not bind: ``said`` is where the need shows (``line 7`` of the
    code or a comment, ``hint 2``) and ``mention`` what shows it (``jax.lax.while_loop``)."""

    name: str
    said: str
    mention: str
    line: int | None = None
    in_code: bool = False


def bound_names(source: str) -> set[str]:
    """The names the module binds at its top level: imports, definitions, assignments."""
    top = symtable.symtable(source, "starter.py", "exec")
    return {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}


def _read_globals(source: str) -> set[str]:
    """The global names the code reads, in any scope."""
    top = symtable.symtable(source, "starter.py", "exec")
    found: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table is top or symbol.is_global()):
                found.add(symbol.get_name())
        tables.extend(table.get_children())
    return found


def _first_line(source: str, name: str) -> int | None:
    """The first line on which the code reads ``name``."""
    lines = [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
    ]
    return min(lines, default=None)


def unimported(source: str, hints: Sequence[str] = ()) -> list[Unimported]:
    """What ``source`` (a starter that parses) needs and does not bind: the names its code reads, then the
    JAX modules its comments mention, then those the hints' code (their backticked spans) mention; one
    finding per name, the first place it shows."""
    bound = bound_names(source)
    found: dict[str, Unimported] = {}
    for name in sorted(_read_globals(source) - bound - set(dir(builtins)) - _MODULE_NAMES):
        line = _first_line(source, name)
        found[name] = Unimported(name, f"line {line}", name, line, in_code=True)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        for match in _MENTION.finditer(token.string):
            if match[1] not in bound and match[1] not in found:
                line = token.start[0]
                found[match[1]] = Unimported(match[1], f"line {line}", _dotted(token.string, match), line)
    for index, hint in enumerate(hints, start=1):
        for code in re.findall(r"`([^`]+)`", hint):
            for match in _MENTION.finditer(code):
                if match[1] not in bound and match[1] not in found:
                    found[match[1]] = Unimported(match[1], f"hint {index}", _dotted(code, match))
    return list(found.values())


def _dotted(text: str, match: re.Match[str]) -> str:
    """The whole dotted name a mention starts: ``jax.lax.while_loop``."""
    return re.match(r"[\w.]*\w", text[match.start() :])[0]  # type: ignore[index]
