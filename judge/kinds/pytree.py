"""``pytree``: a tree of dicts, lists and arrays of the case dtype; always traced."""

from __future__ import annotations

from typing import Any

from judge.core.pytree_json import json_to_pytree
from judge.kinds.base import Arg, Decl, Kind, Wire
from judge.kinds.template import Code
from sandbox.shared.tree import split_input


class PytreeKind(Kind):
    name = "pytree"
    panel_layout = "tree"
    api_text = "dicts, lists and arrays of the case dtype"
    fields = frozenset({"structure"})
    tree = True
    arrays = True
    gives_steps = True
    coverage = "tree"

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("object", "array", "number")

    def describe(self, arg: Arg) -> str:
        return "a pytree of arrays (dicts, lists and arrays of the case dtype)"

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        return json_to_pytree(value, dtype, root=root)

    def wire(self, arg: Arg, value: Any) -> Wire:
        node, leaves = split_input(value)
        return {"tree": node}, leaves

    def scaffold_description(self, decl: Decl) -> str:
        return "A pytree of dicts and lists; every leaf is an array with 0 to 3 dimensions."

    def scaffold_constraint(self, decl: Decl) -> str:
        return (
            f"- `{decl.name}` is a pytree made of dicts and lists with at least one leaf; each leaf has 0 "
            "to 3 dimensions, and\n  every value is finite with magnitude at most $10^{15}$."
        )

    def scaffold_promise(self, decl: Decl) -> tuple[str, list[str]] | None:
        return "finite with magnitude at most $10^{15}$", [f"{decl.name}: magnitude at most"]

    def scaffold_checks(self, decl: Decl) -> list[str]:
        n = f'args["{decl.name}"], "{decl.name}"'
        return [
            f"*check_has_leaves({n})",
            f"*check_ndim({n}, max_ndim=3)",
            f"*check_dtype({n}, dtype)",
            f"*check_finite({n})",
            f"*check_max_abs({n}, MAX_ABS)",
        ]

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [
            (f"4-D leaf in {n}", {"w": [[[[1.0]]]]}),
            (f"no leaf in {n}", {}),
            (f"string leaf in {n}", {"w": "1.0"}),
            (f"value past the bound in {n}", {"w": [1e20]}),
        ]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        top, bottom = (Code("-MAX_ABS"), Code("MAX_ABS")) if low else (Code("MAX_ABS"), Code("-MAX_ABS"))
        return [top] if low else {"w": [top, bottom]}

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return [{"w": [1.0, 2.0], "b": 0.5}, {"layers": [{"w": [0.5, -1.0]}, {"w": [2.0, 0.25]}]}][index]
