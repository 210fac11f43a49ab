"""``float_tuple``: a JSON array of numbers passed as a Python ``tuple`` of floats; static. For settings
that come in a group, such as Adam's ``betas = (0.9, 0.999)`` or a schedule's boundaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.core.pytree_json import MAX_TUPLE_ITEMS, ConversionError, json_kind, json_to_number
from judge.kinds.base import Arg, Decl, Kind, Wire, listed_names

#: The tuples ``judge new`` gives its cases in turn (the first two are the public examples').
CYCLE: list[object] = [[0.9, 0.999], [0.5, 0.25], [0.8, 0.99, 0.5]]


class FloatTupleKind(Kind):
    name = "float_tuple"
    panel_layout = "tuple"
    api_text = "a static tuple of Python floats"
    static = True
    traced_refusal = "a traced vector is kind 'array' with ndim [1]"
    panel_dtype = "float"
    statement_order = 10

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("array",)

    def describe(self, arg: Arg) -> str:
        return "a tuple of Python floats (static)"

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        if not isinstance(value, list):
            raise ConversionError(root, f"expected an array of numbers, got {json_kind(value)}")
        if len(value) > MAX_TUPLE_ITEMS:
            raise ConversionError(root, f"too many items ({len(value)}, at most {MAX_TUPLE_ITEMS})")
        return tuple(json_to_number(item, root=f"{root}[{i}]") for i, item in enumerate(value))

    def wire(self, arg: Arg, value: Any) -> Wire:
        # JSON has no tuple: the tracer rebuilds one of the floats as sent.
        return {"static": [float(v) for v in value], "tuple": True}, []

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        if arg is not same_kind[0]:
            return []
        names = [a.name for a in same_kind]
        return [
            f"{listed_names(names)} {'is a tuple' if len(names) == 1 else 'are tuples'} of Python floats "
            "(the Run panel's JSON array of numbers becomes a tuple, which is hashable as a static value "
            "must be): use its items as plain Python numbers; each distinct tuple is its own program."
        ]

    def scaffold_description(self, decl: Decl) -> str:
        return "A static tuple of finite Python floats."

    def scaffold_constraint(self, decl: Decl) -> str:
        return f"- `{decl.name}` is a tuple of finite Python floats."

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [(f"{n} a number, not an array", 0.5), (f"string in {n}", [0.5, "0.9"])]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return [0.5] if low else [0.9, 0.999, 0.5, 0.25]

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return CYCLE[index]

    def scaffold_cycle(self, decl: Decl) -> list[object] | None:
        return CYCLE
