"""``int``: a JSON integer passed as a Python ``int``; static."""

from __future__ import annotations

from typing import Any

from judge.core.pytree_json import json_to_int
from judge.kinds.base import Arg, Decl, Kind, Wire
from judge.kinds.template import INT_HIGH, INT_LOW


class IntKind(Kind):
    name = "int"
    api_text = "a static Python int"
    static = True
    traced_refusal = "a traced integer is kind 'array' with dtype 'int32' and ndim [0]"
    panel_dtype = "int"
    gives_steps = True

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("integer",)

    def describe(self, arg: Arg) -> str:
        return "a Python int (static)"

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        return json_to_int(value, root=root)

    def wire(self, arg: Arg, value: Any) -> Wire:
        return {"static": int(value)}, []

    def scaffold_description(self, decl: Decl) -> str:
        return f"A static Python int from {INT_LOW} to {INT_HIGH}."

    def scaffold_constraint(self, decl: Decl) -> str:
        return f"- `{decl.name}` is a Python int from {INT_LOW} to {INT_HIGH}."

    def scaffold_promise(self, decl: Decl) -> tuple[str, list[str]] | None:
        n = decl.name
        return f"a Python int from {INT_LOW} to {INT_HIGH}", [f"{n}: at most", f"{n}: at least"]

    def scaffold_checks(self, decl: Decl) -> list[str]:
        return [f'*check_int(args["{decl.name}"], "{decl.name}", ge={INT_LOW}, le={INT_HIGH})']

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [(f"{n} below {INT_LOW}", INT_LOW - 1), (f"{n} not an integer", 2.5)]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return INT_LOW if low else INT_HIGH

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return 2 + index
