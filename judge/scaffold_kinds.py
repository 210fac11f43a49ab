"""The argument declarations of ``judge new`` (``--arg NAME:KIND[:OPTION ...]``) and what each kind puts into
the scaffolded package: its spec lines, description, constraint, validator checks, JUNK and EDGE inputs, and
the example values of the public cases.

Every kind of ``judge.spec.ArgSpec`` is declared here, with values that satisfy the validator this module
writes for it, so a fresh scaffold's cases pass the ``cases`` check whatever the signature:

- ``pytree``: a tree of case-dtype arrays (the case generator's ``STRUCTURES``);
- ``number`` (``:static`` for a static one): a finite float;
- ``array``: one traced array, ``:int32`` / ``:uint32`` / ``:bool`` / ``:case`` (the default) for its dtype
  and ranks such as ``:2`` or ``:1,2`` for its ``ndim`` (default ``1``);
- ``int``: a static int from 1 to 8; ``int_tuple``: a static tuple of 1 to 4 such ints (in any
  order: it may be a shape; a problem whose tuple must be sorted adds ``increasing=True``);
- ``bool``: a static bool (both values in the cases); ``str``: a static string, one of ``STRINGS``;
- ``function``: one of the menu functions ``square`` and ``sine`` of the package's ``functions.py``;
- ``key``: one traced typed PRNG key (threefry2x32): a seed per case, and raw key data at the limits.
"""

from __future__ import annotations

import json
import keyword
import typing
from dataclasses import dataclass, field

from judge.errors import JudgeError
from judge.spec import MAX_ARRAY_NDIM, ArgSpec, ArrayDtype

KINDS: tuple[str, ...] = typing.get_args(ArgSpec.model_fields["kind"].annotation)
ARRAY_DTYPES: tuple[str, ...] = typing.get_args(ArrayDtype)
#: The menu ``judge new`` writes for ``function`` arguments (``functions.py``).
MENU = ("square", "sine")
#: The choices ``judge new`` declares for ``str`` arguments.
STRINGS = ("low", "high")
#: Bounds the scaffold's validator puts on static ints (and tuple items) and on int32 array elements.
INT_LOW, INT_HIGH = 1, 8
INT_BOUND = 1000
#: The static tuples cases use, in turn (the first two are the examples').
INT_TUPLES = ([2, 4], [1, 3, 5], [1, 2, 4, 8], [3], [2, 3, 7])
#: The largest uint32 value: raw key data at the limit.
UINT32_MAX = 2**32 - 1
#: At most this many ranks in an array's ndim: the generator's 8 float32 cases must cover each.
MAX_RANKS = 8


class ScaffoldError(JudgeError):
    pass


@dataclass(frozen=True)
class ArgDecl:
    """One ``--arg NAME:KIND[:OPTION ...]``."""

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
        if kind == "number":
            if options and options != ["static"]:
                raise ScaffoldError(f"--arg {text!r}: the third part may only be 'static'")
            return cls(name, kind, traced=not options)
        if kind == "array":
            return cls._array(text, name, options)
        if options:
            raise ScaffoldError(f"--arg {text!r}: kind {kind!r} takes no options")
        return cls(name, kind, traced=kind in ("pytree", "key"))

    @classmethod
    def _array(cls, text: str, name: str, options: list[str]) -> ArgDecl:
        dtype: str | None = None
        ndim: tuple[int, ...] | None = None
        for option in options:
            if option in ARRAY_DTYPES and dtype is None:
                dtype = option
            elif ndim is None and all(r.isdigit() for r in option.split(",")):
                ranks = tuple(int(r) for r in option.split(","))
                bad = [r for r in ranks if r > MAX_ARRAY_NDIM]
                if bad:
                    raise ScaffoldError(
                        f"--arg {text!r}: rank {bad[0]} is more than {MAX_ARRAY_NDIM} dimensions"
                    )
                if len(set(ranks)) != len(ranks):
                    raise ScaffoldError(f"--arg {text!r}: a rank repeats in {option!r}")
                if len(ranks) > MAX_RANKS:
                    raise ScaffoldError(f"--arg {text!r}: at most {MAX_RANKS} ranks")
                ndim = ranks
            else:
                raise ScaffoldError(
                    f"--arg {text!r}: {option!r} is neither a dtype ({', '.join(ARRAY_DTYPES)}) nor ranks "
                    "such as 2 or 1,2 (each at most once)"
                )
        return cls(name, "array", dtype=dtype or "case", ndim=ndim if ndim is not None else (1,))

    def spec(self) -> ArgSpec:
        """The argument as the spec declares it."""
        if self.kind == "array":
            return ArgSpec(name=self.name, kind="array", dtype=self.dtype, ndim=list(self.ndim))  # type: ignore[arg-type]
        if self.kind == "function":
            return ArgSpec(name=self.name, kind="function", choices=list(MENU))
        if self.kind == "str":
            return ArgSpec(name=self.name, kind="str", choices=list(STRINGS))
        if self.kind == "key":
            return ArgSpec(name=self.name, kind="key", ndim=[0])
        return ArgSpec(name=self.name, kind=self.kind, traced=self.traced)  # type: ignore[arg-type]

    @property
    def floats(self) -> bool:
        """Its values are of the case's float dtype (a pytree, or an array of dtype ``case``)."""
        return self.kind == "pytree" or (self.kind == "array" and self.dtype == "case")

    # ------------------------------------------------------------------------------------- the spec

    def toml(self, description: str) -> str:
        """Its ``[[args]]`` table."""
        lines = ["[[args]]", f'name = "{self.name}"', f'kind = "{self.kind}"']
        lines.append(f"traced = {'true' if self.spec().traced else 'false'}")
        if self.kind == "array":
            if self.dtype != "case":
                lines.append(f'dtype = "{self.dtype}"')
            lines.append(f"ndim = {json.dumps(list(self.ndim))}")
        if self.kind == "function":
            lines.append(f"choices = {json.dumps(list(MENU))}")
        if self.kind == "str":
            lines.append(f"choices = {json.dumps(list(STRINGS))}")
        if self.kind == "key":
            lines += ['impl = "threefry2x32"', "ndim = [0]"]
        lines.append(f'description = "{description}"')
        return "\n".join(lines) + "\n"

    def description(self) -> str:
        if self.kind == "pytree":
            return "A pytree of dicts and lists; every leaf is an array with 0 to 3 dimensions."
        if self.kind == "number":
            return "A finite Python float." + (
                "" if self.traced else " Static: passed as a hashable Python value."
            )
        if self.kind == "int":
            return f"A static Python int from {INT_LOW} to {INT_HIGH}."
        if self.kind == "int_tuple":
            return f"A static tuple of 1 to 4 Python ints from {INT_LOW} to {INT_HIGH}."
        if self.kind == "function":
            return f"One of the functions of functions.py ({', '.join(MENU)}), passed as a Python function."
        if self.kind == "bool":
            return "A static Python bool."
        if self.kind == "str":
            return f"A static Python str: {' or '.join(STRINGS)}."
        if self.kind == "key":
            return "A typed PRNG key (jax.random.key, threefry2x32), traced."
        kind = self.spec().describe_kind()
        return kind[0].upper() + kind[1:] + "."

    def constraint(self) -> str:
        """Its line of the statement's Constraints section."""
        n = self.name
        if self.kind == "pytree":
            return (
                f"- `{n}` is a pytree made of dicts and lists with at least one leaf; each leaf has 0 to 3 "
                "dimensions, and\n  every value is finite with magnitude at most $10^{15}$."
            )
        if self.kind == "number":
            return f"- `{n}` is a finite Python float with magnitude at most $10^{{15}}$."
        if self.kind == "int":
            return f"- `{n}` is a Python int from {INT_LOW} to {INT_HIGH}."
        if self.kind == "int_tuple":
            return f"- `{n}` is a tuple of 1 to 4 Python ints from {INT_LOW} to {INT_HIGH}."
        if self.kind == "function":
            return f"- `{n}` is one of the functions of the menu: {', '.join(f'`{m}`' for m in MENU)}."
        if self.kind == "bool":
            return f"- `{n}` is a Python bool, `True` or `False`."
        if self.kind == "str":
            return f"- `{n}` is one of the strings {', '.join(f'`{c!r}`' for c in STRINGS)}."
        if self.kind == "key":
            return (
                f'- `{n}` is one typed PRNG key (threefry2x32) with any key data; in the Run panel `{{"key": '
                f'seed}}`\n  or `{{"key_data": [w0, w1]}}` with two uint32 words.'
            )
        what = self.spec().describe_kind()
        if self.dtype == "int32":
            return f"- `{n}` is {what}; every entry has magnitude at most {INT_BOUND}."
        if self.dtype == "uint32":
            return f"- `{n}` is {what}; every entry is from 0 to {INT_BOUND}."
        if self.dtype == "bool":
            return f"- `{n}` is {what}."
        return (
            f"- `{n}` is {what} of the case dtype; every entry is finite with magnitude at most $10^{{15}}$."
        )

    def promise(self) -> tuple[str, list[str]] | None:
        """Its ``[[promises]]`` entry: words of its constraint line and the stated bounds a hidden case must
        approach (``judge check``'s ``promises`` check); None when its constraint states no bound."""
        n = self.name
        if self.kind == "pytree" or (self.kind == "array" and self.dtype == "case"):
            return "finite with magnitude at most $10^{15}$", [f"{n}: magnitude at most"]
        if self.kind == "number":
            return "finite Python float with magnitude at most $10^{15}$", [f"{n}: at most", f"{n}: at least"]
        if self.kind == "array" and self.dtype == "int32":
            return f"every entry has magnitude at most {INT_BOUND}", [f"{n}: at most", f"{n}: at least"]
        if self.kind == "array" and self.dtype == "uint32":
            return f"every entry is from 0 to {INT_BOUND}", [f"{n}: at most"]
        if self.kind == "int":
            return f"a Python int from {INT_LOW} to {INT_HIGH}", [f"{n}: at most", f"{n}: at least"]
        return None

    # ---------------------------------------------------------------------------------- the validator

    def checks(self) -> list[str]:
        """Its lines in ``validate`` (calls of ``judge.constraints`` helpers)."""
        n = f'args["{self.name}"], "{self.name}"'
        if self.kind == "pytree":
            return [
                f"*check_has_leaves({n})",
                f"*check_ndim({n}, max_ndim=3)",
                f"*check_dtype({n}, dtype)",
                f"*check_finite({n})",
                f"*check_max_abs({n}, MAX_ABS)",
            ]
        if self.kind == "number":
            return [f"*check_number({n}, ge=-MAX_ABS, le=MAX_ABS)"]
        if self.kind == "int":
            return [f"*check_int({n}, ge={INT_LOW}, le={INT_HIGH})"]
        if self.kind == "int_tuple":
            return [f"*check_int_tuple({n}, min_items=1, max_items=4, ge={INT_LOW}, le={INT_HIGH})"]
        if self.kind == "array" and self.dtype == "case":
            return [f"*check_dtype({n}, dtype)", f"*check_finite({n})", f"*check_max_abs({n}, MAX_ABS)"]
        if self.kind == "array" and self.dtype == "int32":
            return [f"*check_int_range({n}, ge=-INT_BOUND, le=INT_BOUND)"]
        if self.kind == "array" and self.dtype == "uint32":
            return [f"*check_int_range({n}, ge=0, le=INT_BOUND)"]
        return []  # bool arrays, bools, strings, keys and menu functions: the converter refuses anything else

    def helpers(self) -> set[str]:
        """The ``judge.constraints`` names its checks call."""
        return {line.split("(")[0].lstrip("*") for line in self.checks()}

    def junk(self) -> list[tuple[str, object]]:
        """Inputs that break its constraints: ``(why, value)``."""
        n = self.name
        if self.kind == "pytree":
            return [
                (f"4-D leaf in {n}", {"w": [[[[1.0]]]]}),
                (f"no leaf in {n}", {}),
                (f"string leaf in {n}", {"w": "1.0"}),
                (f"value past the bound in {n}", {"w": [1e20]}),
            ]
        if self.kind == "number":
            return [(f"{n} past the bound", 1e20)]
        if self.kind == "int":
            return [(f"{n} below {INT_LOW}", INT_LOW - 1), (f"{n} not an integer", 2.5)]
        if self.kind == "int_tuple":
            return [
                (f"{n} empty", []),
                (f"{n} past the bound", [INT_HIGH + 1]),
            ]
        if self.kind == "function":
            return [(f"{n} not in the menu", "cube"), (f"{n} not a name", 3.0)]
        if self.kind == "bool":
            return [(f"{n} a number, not a boolean", 1), (f"{n} a string, not a boolean", "true")]
        if self.kind == "str":
            return [(f"{n} not among the choices", "middle"), (f"{n} not a string", 1)]
        if self.kind == "key":
            return [
                (f"{n} a fractional seed", {"key": 1.5}),
                (f"{n} key data of 3 words", {"key_data": [1, 2, 3]}),
                (f"{n} a seed past 2**32 - 1", {"key": 2**32}),
            ]
        wrong_rank = next(r for r in range(MAX_ARRAY_NDIM + 1) if r not in self.ndim)
        item: object = {"case": 1.0, "int32": 1, "uint32": 1, "bool": True}[self.dtype]
        junk: list[tuple[str, object]] = [(f"{n} with {wrong_rank} dimensions", _filled(wrong_rank, 1, item))]
        rank = self.ndim[0]
        if self.dtype == "case":
            junk += [
                (f"string in {n}", _filled(rank, 1, "1.0")),
                (f"value past the bound in {n}", _filled(rank, 1, 1e20)),
            ]
        elif self.dtype == "int32":
            junk += [
                (f"non-integer in {n}", _filled(rank, 1, 1.5)),
                (f"value past the bound in {n}", _filled(rank, 1, INT_BOUND + 1)),
            ]
        elif self.dtype == "uint32":
            junk += [
                (f"negative entry in {n}", _filled(rank, 1, -1)),
                (f"value past the bound in {n}", _filled(rank, 1, INT_BOUND + 1)),
            ]
        else:
            junk.append((f"number instead of a boolean in {n}", _filled(rank, 1, 1)))
        return junk

    def edge(self, low: bool) -> object:
        """Its value at the limits of the constraints (``low``: the other end, for the bfloat16 EDGE)."""
        top, bottom = (Code("-MAX_ABS"), Code("MAX_ABS")) if low else (Code("MAX_ABS"), Code("-MAX_ABS"))
        if self.kind == "pytree":
            return [top] if low else {"w": [top, bottom]}
        if self.kind == "number":
            return top
        if self.kind == "int":
            return INT_LOW if low else INT_HIGH
        if self.kind == "int_tuple":
            return [INT_LOW] if low else [5, 6, 7, INT_HIGH]
        if self.kind == "function":
            return MENU[-1]
        if self.kind == "bool":
            return not low
        if self.kind == "str":
            return STRINGS[-1]
        if self.kind == "key":
            return {"key": 0} if low else {"key_data": [UINT32_MAX, UINT32_MAX]}
        if self.dtype == "uint32":
            return _nest(self.ndim[0], [0, INT_BOUND] if low else [INT_BOUND, 0])
        if self.dtype == "bool":
            return _nest(self.ndim[0], [True, False])
        if self.dtype == "int32":
            return _nest(self.ndim[0], [-INT_BOUND, INT_BOUND] if low else [INT_BOUND, -INT_BOUND])
        return _nest(self.ndim[0], [top, bottom])

    # --------------------------------------------------------------------------------------- examples

    def example(self, index: int) -> object:
        """Its value in public example ``index`` (0 or 1): small, hand-checkable; an array has the rank and
        shape the case generator gives its look-alike hidden case."""
        if self.kind == "pytree":
            return [{"w": [1.0, 2.0], "b": 0.5}, {"layers": [{"w": [0.5, -1.0]}, {"w": [2.0, 0.25]}]}][index]
        if self.kind == "number":
            return [3.0, 0.5][index]
        if self.kind == "int":
            return 2 + index
        if self.kind == "int_tuple":
            return INT_TUPLES[index]
        if self.kind == "function":
            return MENU[index % len(MENU)]
        if self.kind == "bool":
            return index % 2 == 0
        if self.kind == "str":
            return STRINGS[index % len(STRINGS)]
        if self.kind == "key":
            return {"key": 42 + index}
        rank = self.ndim[index % len(self.ndim)]
        shape = case_shape(rank, index)
        count = 1
        for size in shape:
            count *= size
        if self.dtype == "bool":
            flat: list[object] = [i % 2 == index for i in range(count)]
        elif self.dtype == "int32":
            flat = [(i + 1) * (-1) ** (i * index) for i in range(count)]
        elif self.dtype == "uint32":
            flat = [(i + 1) * (index + 1) for i in range(count)]
        else:
            flat = [((i + 1) / (2 if index else 1)) * (-1) ** (i * index) for i in range(count)]
        return _shaped(flat, shape)


def case_shape(rank: int, index: int) -> tuple[int, ...]:
    """The shape of an array argument of ``rank`` in case ``index`` (the generator holds the same rule)."""
    return (2 + index % 3, *([2] * (rank - 1))) if rank else ()


class Code(str):
    """Python source written as is (a constant's name) by ``py_literal``."""


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


def _nest(rank: int, items: list[object]) -> object:
    """``items`` as the innermost list of an array of ``rank`` (its first item alone for rank 0)."""
    if rank == 0:
        return items[0]
    value: object = items
    for _ in range(rank - 1):
        value = [value]
    return value


def _filled(rank: int, size: int, item: object) -> object:
    """An array of ``rank`` with ``size`` entries along its first axis, all ``item``."""
    return _nest(rank, [item] * size)


def _shaped(flat: list[object], shape: tuple[int, ...]) -> object:
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    return [_shaped(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


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
