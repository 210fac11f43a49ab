"""The argument declarations of ``judge new`` (``--arg NAME:KIND[:OPTION ...]``) and what each kind puts into
the scaffolded package: its spec lines, description, constraint, validator checks, JUNK and EDGE inputs, and
the example values of the public cases, each asked of the kind's module (``judge.kinds``, the
``scaffold_*`` methods of ``judge.kinds.base.Kind``).

Every kind of ``judge.core.spec.ArgSpec`` scaffolds values that satisfy the validator it writes, so a fresh
scaffold's cases pass the ``cases`` check whatever the signature (what each kind's scaffold gives:
problems/README.md, the ``--arg`` table).
"""

from __future__ import annotations

import json
import keyword
import typing
from dataclasses import dataclass, field

from judge.core.errors import JudgeError
from judge.core.spec import ArgSpec
from judge.kinds.array import ArrayDtype
from judge.kinds.registry import KIND_NAMES, kind_of
from judge.kinds.template import (
    INT_BOUND,
    INT_HIGH,
    INT_LOW,
    INT_TUPLES,
    MAX_RANKS,
    MENU,
    STRINGS,
    UINT32_MAX,
    Code,
    case_shape,
)

__all__ = [
    "ARRAY_DTYPES",
    "INT_BOUND",
    "INT_HIGH",
    "INT_LOW",
    "INT_TUPLES",
    "KINDS",
    "MAX_RANKS",
    "MENU",
    "STRINGS",
    "UINT32_MAX",
    "ArgDecl",
    "Code",
    "ScaffoldError",
    "case_shape",
    "menu_module",
    "py_literal",
]

KINDS: tuple[str, ...] = KIND_NAMES
ARRAY_DTYPES: tuple[str, ...] = typing.get_args(ArrayDtype)


class ScaffoldError(JudgeError):
    pass


@dataclass(frozen=True)
class ArgDecl:
    """One ``--arg NAME:KIND[:OPTION ...]``; what it scaffolds is its kind's (``judge.kinds``)."""

    name: str
    kind: str
    traced: bool = True
    #: ``array`` only: ``case`` (the case's float dtype), ``int32``, ``uint32`` or ``bool``, and the ranks.
    dtype: str = "case"
    ndim: tuple[int, ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, text: str) -> ArgDecl:
        """``grads:pytree``, ``max_norm:number``, ``axis:number:static``, ``x:array`` (float, 1-D),
        ``x:array:2``, ``x:array:1,2``, ``step:array:int32:0``, ``mask:array:bool:2``, ``n:int``,
        ``sizes:int_tuple``, ``flag:bool``, ``mode:str``, ``f:function``, ``bits:array:uint32``,
        ``key:key``. Raises ScaffoldError naming what
        is wrong."""
        parts = text.split(":")
        if len(parts) < 2 or not all(parts):
            raise ScaffoldError(f"--arg {text!r}: expected NAME:KIND or NAME:KIND:OPTION, e.g. grads:pytree")
        name, kind, options = parts[0], parts[1], parts[2:]
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ScaffoldError(f"--arg {text!r}: {name!r} is not a valid Python argument name")
        if kind not in KINDS:
            raise ScaffoldError(f"--arg {text!r}: unknown kind {kind!r} (kinds: {', '.join(KINDS)})")
        try:
            return cls(name, kind, **kind_of(kind).parse_options(text, name, options))
        except ValueError as exc:
            raise ScaffoldError(str(exc)) from None

    def spec(self) -> ArgSpec:
        """The argument as the spec declares it."""
        return ArgSpec.model_validate(
            {"name": self.name, "kind": self.kind, **kind_of(self.kind).scaffold_spec(self)}
        )

    @property
    def floats(self) -> bool:
        """Its values are of the case's float dtype (a pytree, or an array of dtype ``case``)."""
        return kind_of(self.kind).tree or (kind_of(self.kind).arrays and self.dtype == "case")

    # ------------------------------------------------------------------------------------- the spec

    def toml(self, description: str) -> str:
        """Its ``[[args]]`` table."""
        lines = ["[[args]]", f'name = "{self.name}"', f'kind = "{self.kind}"']
        lines.append(f"traced = {'true' if self.spec().traced else 'false'}")
        lines += kind_of(self.kind).scaffold_toml(self)
        lines.append(f'description = "{description}"')
        return "\n".join(lines) + "\n"

    def description(self) -> str:
        return kind_of(self.kind).scaffold_description(self)

    def constraint(self) -> str:
        """Its line of the statement's Constraints section."""
        return kind_of(self.kind).scaffold_constraint(self)

    def promise(self) -> tuple[str, list[str]] | None:
        """Its ``[[promises]]`` entry: words of its constraint line and the stated bounds a hidden case must
        approach (``judge check``'s ``promises`` check); None when its constraint states no bound."""
        return kind_of(self.kind).scaffold_promise(self)

    # ---------------------------------------------------------------------------------- the validator

    def checks(self) -> list[str]:
        """Its lines in ``validate`` (calls of ``judge.constraints`` helpers)."""
        return kind_of(self.kind).scaffold_checks(self)

    def helpers(self) -> set[str]:
        """The ``judge.constraints`` names its checks call."""
        return {line.split("(")[0].lstrip("*") for line in self.checks()}

    def junk(self) -> list[tuple[str, object]]:
        """Inputs that break its constraints: ``(why, value)``."""
        return kind_of(self.kind).scaffold_junk(self)

    def edge(self, low: bool) -> object:
        """Its value at the limits of the constraints (``low``: the other end, for the bfloat16 EDGE)."""
        return kind_of(self.kind).scaffold_edge(self, low)

    # --------------------------------------------------------------------------------------- examples

    def example(self, index: int) -> object:
        """Its value in public example ``index`` (0 or 1): small, hand-checkable; an array has the rank and
        shape the case generator gives its look-alike hidden case."""
        return kind_of(self.kind).scaffold_example(self, index)


def py_literal(value: object, indent: int = 0, used: int = 0, width: int = 110) -> str:
    """A Python literal for JSON-like data, formatted the way ``ruff format`` leaves it: on one line when it
    fits in ``width`` after ``used`` characters of its line (and a trailing comma), else one item per line
    at ``indent + 4`` with trailing commas."""
    flat = _flat(value)
    if used + len(flat) + 1 <= width or not isinstance(value, dict | list) or not value:
        return flat
    inner = " " * (indent + 4)
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            key = f"{json.dumps(k)}: "
            lines.append(f"{inner}{key}{py_literal(v, indent + 4, len(inner) + len(key), width)},")
    else:
        lines = [f"{inner}{py_literal(v, indent + 4, len(inner), width)}," for v in value]
    close = "}" if isinstance(value, dict) else "]"
    return ("{" if isinstance(value, dict) else "[") + "\n" + "\n".join(lines) + "\n" + " " * indent + close


def _flat(value: object) -> str:
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        text = f"{value:g}".replace("e+", "e")
        return text if any(c in text for c in ".en") else f"{text}.0"
    return json.dumps(value)


def menu_module(slug: str) -> str:
    """``functions.py``: the menu of a package with ``function`` arguments."""
    return f'''"""The functions a case of {slug} may pass as a ``function`` argument (problem code: it runs in
the sandbox, and the reference gets the same functions). Each maps a pytree of arrays to one of the same
structure, shapes and dtypes; replace them with your problem's menu and list it in the statement.
"""

import jax
import jax.numpy as jnp


def square(x):
    """x * x, entry by entry."""
    return jax.tree.map(jnp.square, x)


def sine(x):
    """sin(x), entry by entry."""
    return jax.tree.map(jnp.sin, x)
'''
