"""``int_tuple``: a JSON array of integers passed as a Python ``tuple`` of ints; static."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.core.pytree_json import json_to_int_tuple
from judge.kinds.base import Arg, Decl, Kind, Wire, listed_names
from judge.kinds.template import INT_HIGH, INT_LOW, INT_TUPLES


class IntTupleKind(Kind):
    name = "int_tuple"
    panel_layout = "tuple"
    api_text = "a static tuple of ints"
    static = True
    traced_refusal = "a traced integer is kind 'array' with dtype 'int32' and ndim [0]"
    panel_dtype = "int"
    statement_order = 10

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("array",)

    def describe(self, arg: Arg) -> str:
        return "a tuple of Python ints (static)"

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        return json_to_int_tuple(value, root=root)

    def wire(self, arg: Arg, value: Any) -> Wire:
        # JSON has no tuple: the tracer rebuilds a tuple (hashable, as static_argnames needs).
        return {"static": [int(v) for v in value], "tuple": True}, []

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        if arg is not same_kind[0]:
            return []
        tuples = [a.name for a in same_kind]
        return [
            f"{listed_names(tuples)} {'is a tuple' if len(tuples) == 1 else 'are tuples'} of Python ints "
            "(the Run panel's JSON array of integers becomes a tuple, which is hashable as a static value "
            "must be)."
        ]

    def scaffold_description(self, decl: Decl) -> str:
        return f"A static tuple of 1 to 4 Python ints from {INT_LOW} to {INT_HIGH}."

    def scaffold_constraint(self, decl: Decl) -> str:
        return f"- `{decl.name}` is a tuple of 1 to 4 Python ints from {INT_LOW} to {INT_HIGH}."

    def scaffold_checks(self, decl: Decl) -> list[str]:
        n = f'args["{decl.name}"], "{decl.name}"'
        return [f"*check_int_tuple({n}, min_items=1, max_items=4, ge={INT_LOW}, le={INT_HIGH})"]

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [(f"{n} empty", []), (f"{n} past the bound", [INT_HIGH + 1])]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return [INT_LOW] if low else [5, 6, 7, INT_HIGH]

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return INT_TUPLES[index]
