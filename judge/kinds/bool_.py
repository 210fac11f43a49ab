"""``bool``: JSON ``true`` or ``false`` passed as a Python ``bool``; static."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.core.pytree_json import json_to_bool
from judge.kinds.base import Arg, Decl, Kind, Wire


class BoolKind(Kind):
    name = "bool"
    api_text = "a static Python bool (true or false)"
    static = True
    traced_refusal = "a traced bool is kind 'array' with dtype 'bool' and ndim [0]"
    panel_dtype = "bool"
    statement_order = 20

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("boolean",)

    def describe(self, arg: Arg) -> str:
        return "a Python bool (static)"

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        return json_to_bool(value, root=root)

    def wire(self, arg: Arg, value: Any) -> Wire:
        return {"static": value}, []  # JSON true/false: the tracer passes it as is

    def coverage_wanted(self, arg: Arg) -> list[Any]:
        return [True, False]

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        return [
            f"`{arg.name}` is a Python bool (`True` or `False`; the Run panel's JSON `true` or `false`): "
            f"`if {arg.name}:` chooses while tracing, and each value is its own program."
        ]

    def scaffold_description(self, decl: Decl) -> str:
        return "A static Python bool."

    def scaffold_constraint(self, decl: Decl) -> str:
        return f"- `{decl.name}` is a Python bool, `True` or `False`."

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [(f"{n} a number, not a boolean", 1), (f"{n} a string, not a boolean", "true")]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return not low

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return index % 2 == 0
