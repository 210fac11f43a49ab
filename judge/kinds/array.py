"""``array``: ONE array (never a tree) of ``dtype``: the case dtype (``case``), ``int32`` or ``uint32`` (JSON
numbers that must be integral) or ``bool`` (JSON ``true``/``false`` only), with a rank in ``ndim`` (empty:
any). Always traced: a 0-d ``int32`` array is how a training loop passes a step counter."""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from typing import Any, Literal

from judge.core.pytree_json import json_to_array
from judge.kinds.base import Arg, Decl, Kind, Wire
from judge.kinds.template import INT_BOUND, MAX_RANKS, Code, case_shape, filled, nest, shaped
from sandbox.shared.tree import split_input

#: The dtype of an ``array`` argument: the case dtype (float32/bfloat16), or a fixed int32, uint32 or bool.
ArrayDtype = Literal["case", "int32", "uint32", "bool"]
#: Most dimensions an ``array`` argument may declare (the Run-panel converter allows 8).
MAX_ARRAY_NDIM = 8


class ArrayKind(Kind):
    name = "array"
    api_text = "one array of `dtype` with a rank in `ndim`"
    fields = frozenset({"dtype", "ndim"})
    arrays = True
    gives_steps = True
    coverage = "array"
    statement_order = 30

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        scalar = (
            "boolean" if arg.dtype == "bool" else "integer" if arg.dtype in ("int32", "uint32") else "number"
        )
        if arg.ndim == [0]:
            return (scalar,)
        if arg.ndim and 0 not in arg.ndim:
            return ("array",)
        return ("array", scalar)

    def describe(self, arg: Arg) -> str:
        dtype = {"case": "float", "int32": "int32", "uint32": "uint32", "bool": "bool"}[arg.dtype]
        article = "an" if dtype[0] in "aeio" else "a"  # a uint32 array
        if not arg.ndim:
            return f"{article} {dtype} array"
        if arg.ndim == [0]:
            return f"{article} {dtype} array with 0 dimensions (a scalar)"
        ranks = sorted(arg.ndim)
        listed = " or ".join(str(n) for n in ranks)
        plural = "" if ranks == [1] else "s"
        return f"{article} {dtype} array with {listed} dimension{plural}"

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        leaf_dtype = dtype if arg.dtype == "case" else arg.dtype
        return json_to_array(value, leaf_dtype, root=root, ndim=arg.ndim)

    def wire(self, arg: Arg, value: Any) -> Wire:
        node, leaves = split_input(value)
        return {"tree": node}, leaves

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        if arg.dtype == "case":
            return []
        if arg.ndim == [0] and arg.dtype == "bool":
            return [
                f"`{arg.name}` arrives traced as {arg.describe_kind()}, not as a Python bool: choose with it "
                f"(`jnp.where({arg.name}, a, b)`, `jax.lax.cond`), never `bool({arg.name})` or a Python `if` "
                "on it."
            ]
        if arg.ndim == [0]:
            return [
                f"`{arg.name}` arrives traced as {arg.describe_kind()}, not as a Python number: compute with "
                f"it as an array (`{arg.name} + 1`, or `{arg.name}.astype(jnp.float32)` where a float is "
                f"needed), never `int({arg.name})` or a Python `if` on it."
            ]
        return [
            f"`{arg.name}` arrives traced as {arg.describe_kind()}: its values are unknown while your "
            f"function is traced, but its shape (`{arg.name}.shape`) is a plain tuple of ints you may "
            "use."
        ]

    # ------------------------------------------------------------------------------- judge new

    def parse_options(self, text: str, name: str, options: list[str]) -> dict[str, Any]:
        dtypes: tuple[str, ...] = typing.get_args(ArrayDtype)
        dtype: str | None = None
        ndim: tuple[int, ...] | None = None
        for option in options:
            if option in dtypes and dtype is None:
                dtype = option
            elif ndim is None and all(r.isdigit() for r in option.split(",")):
                ranks = tuple(int(r) for r in option.split(","))
                bad = [r for r in ranks if r > MAX_ARRAY_NDIM]
                if bad:
                    raise ValueError(
                        f"--arg {text!r}: rank {bad[0]} is more than {MAX_ARRAY_NDIM} dimensions"
                    )
                if len(set(ranks)) != len(ranks):
                    raise ValueError(f"--arg {text!r}: a rank repeats in {option!r}")
                if len(ranks) > MAX_RANKS:
                    raise ValueError(f"--arg {text!r}: at most {MAX_RANKS} ranks")
                ndim = ranks
            else:
                raise ValueError(
                    f"--arg {text!r}: {option!r} is neither a dtype ({', '.join(dtypes)}) nor ranks "
                    "such as 2 or 1,2 (each at most once)"
                )
        return {"dtype": dtype or "case", "ndim": ndim if ndim is not None else (1,)}

    def scaffold_spec(self, decl: Decl) -> dict[str, Any]:
        return {"dtype": decl.dtype, "ndim": list(decl.ndim)}

    def scaffold_toml(self, decl: Decl) -> list[str]:
        lines = [] if decl.dtype == "case" else [f'dtype = "{decl.dtype}"']
        return [*lines, f"ndim = {json.dumps(list(decl.ndim))}"]

    def scaffold_description(self, decl: Decl) -> str:
        kind = decl.spec().describe_kind()
        return kind[0].upper() + kind[1:] + "."

    def scaffold_constraint(self, decl: Decl) -> str:
        n = decl.name
        what = decl.spec().describe_kind()
        if decl.dtype == "int32":
            return f"- `{n}` is {what}; every entry has magnitude at most {INT_BOUND}."
        if decl.dtype == "uint32":
            return f"- `{n}` is {what}; every entry is from 0 to {INT_BOUND}."
        if decl.dtype == "bool":
            return f"- `{n}` is {what}."
        return (
            f"- `{n}` is {what} of the case dtype; every entry is finite with magnitude at most $10^{{15}}$."
        )

    def scaffold_promise(self, decl: Decl) -> tuple[str, list[str]] | None:
        n = decl.name
        if decl.dtype == "case":
            return "finite with magnitude at most $10^{15}$", [f"{n}: magnitude at most"]
        if decl.dtype == "int32":
            return f"every entry has magnitude at most {INT_BOUND}", [f"{n}: at most", f"{n}: at least"]
        if decl.dtype == "uint32":
            return f"every entry is from 0 to {INT_BOUND}", [f"{n}: at most"]
        return None

    def scaffold_checks(self, decl: Decl) -> list[str]:
        n = f'args["{decl.name}"], "{decl.name}"'
        if decl.dtype == "case":
            return [f"*check_dtype({n}, dtype)", f"*check_finite({n})", f"*check_max_abs({n}, MAX_ABS)"]
        if decl.dtype == "int32":
            return [f"*check_int_range({n}, ge=-INT_BOUND, le=INT_BOUND)"]
        if decl.dtype == "uint32":
            return [f"*check_int_range({n}, ge=0, le=INT_BOUND)"]
        return []  # bool arrays: the converter refuses anything else

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        wrong_rank = next(r for r in range(MAX_ARRAY_NDIM + 1) if r not in decl.ndim)
        item: object = {"case": 1.0, "int32": 1, "uint32": 1, "bool": True}[decl.dtype]
        junk: list[tuple[str, object]] = [(f"{n} with {wrong_rank} dimensions", filled(wrong_rank, 1, item))]
        rank = decl.ndim[0]
        if decl.dtype == "case":
            junk += [
                (f"string in {n}", filled(rank, 1, "1.0")),
                (f"value past the bound in {n}", filled(rank, 1, 1e20)),
            ]
        elif decl.dtype == "int32":
            junk += [
                (f"non-integer in {n}", filled(rank, 1, 1.5)),
                (f"value past the bound in {n}", filled(rank, 1, INT_BOUND + 1)),
            ]
        elif decl.dtype == "uint32":
            junk += [
                (f"negative entry in {n}", filled(rank, 1, -1)),
                (f"value past the bound in {n}", filled(rank, 1, INT_BOUND + 1)),
            ]
        else:
            junk.append((f"number instead of a boolean in {n}", filled(rank, 1, 1)))
        return junk

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        top, bottom = (Code("-MAX_ABS"), Code("MAX_ABS")) if low else (Code("MAX_ABS"), Code("-MAX_ABS"))
        if decl.dtype == "uint32":
            return nest(decl.ndim[0], [0, INT_BOUND] if low else [INT_BOUND, 0])
        if decl.dtype == "bool":
            return nest(decl.ndim[0], [True, False])
        if decl.dtype == "int32":
            return nest(decl.ndim[0], [-INT_BOUND, INT_BOUND] if low else [INT_BOUND, -INT_BOUND])
        return nest(decl.ndim[0], [top, bottom])

    def scaffold_example(self, decl: Decl, index: int) -> object:
        rank = decl.ndim[index % len(decl.ndim)]
        shape = case_shape(rank, index)
        count = 1
        for size in shape:
            count *= size
        if decl.dtype == "bool":
            flat: list[object] = [i % 2 == index for i in range(count)]
        elif decl.dtype == "int32":
            flat = [(i + 1) * (-1) ** (i * index) for i in range(count)]
        elif decl.dtype == "uint32":
            flat = [(i + 1) * (index + 1) for i in range(count)]
        else:
            flat = [((i + 1) / (2 if index else 1)) * (-1) ** (i * index) for i in range(count)]
        return shaped(flat, shape)
