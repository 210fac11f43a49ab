"""``number``: a JSON number passed as a Python float; traced (a weakly typed scalar) or static."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from judge.core.pytree_json import json_to_number
from judge.kinds.base import Arg, Decl, Kind, Wire, listed_names
from judge.kinds.template import Code


class NumberKind(Kind):
    name = "number"
    api_text = "a Python float"
    may_be_static = True
    panel_dtype = "float"
    weak_scalar = True
    statement_order = 60

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("number",)

    def describe(self, arg: Arg) -> str:
        return "a Python float" + ("" if arg.traced else " (static)")

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        return json_to_number(value, root=root)

    def wire(self, arg: Arg, value: Any) -> Wire:
        if arg.traced:
            return {"number": True}, [np.asarray(value, np.float32)]
        return {"static": float(value)}, []

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        traced = [a.name for a in same_kind if a.traced]
        if not traced or arg.name != traced[0]:
            return []
        names = listed_names(traced)
        if len(traced) == 1:
            return [
                f"{names} is passed as a Python float, so under `jax.jit` it is a weakly typed scalar: "
                "it takes the dtype of the arrays it meets (a bfloat16 array times it stays bfloat16)."
            ]
        return [
            f"{names} are passed as Python floats, so under `jax.jit` each is a weakly typed "
            "scalar: it takes the dtype of the arrays it meets (a bfloat16 array times it stays bfloat16)."
        ]

    def parse_options(self, text: str, name: str, options: list[str]) -> dict[str, Any]:
        if options and options != ["static"]:
            raise ValueError(f"--arg {text!r}: the third part may only be 'static'")
        return {"traced": not options}

    def scaffold_description(self, decl: Decl) -> str:
        return "A finite Python float." + (
            "" if decl.traced else " Static: passed as a hashable Python value."
        )

    def scaffold_constraint(self, decl: Decl) -> str:
        return f"- `{decl.name}` is a finite Python float with magnitude at most $10^{{15}}$."

    def scaffold_promise(self, decl: Decl) -> tuple[str, list[str]] | None:
        n = decl.name
        return "finite Python float with magnitude at most $10^{15}$", [f"{n}: at most", f"{n}: at least"]

    def scaffold_checks(self, decl: Decl) -> list[str]:
        return [f'*check_number(args["{decl.name}"], "{decl.name}", ge=-MAX_ABS, le=MAX_ABS)']

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        return [(f"{decl.name} past the bound", 1e20)]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return Code("-MAX_ABS") if low else Code("MAX_ABS")

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return [3.0, 0.5][index]
