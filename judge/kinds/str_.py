"""``str``: a JSON string, one of ``choices``, passed as a Python ``str``; static."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from judge.core.pytree_json import json_to_choice
from judge.kinds.base import Arg, Decl, Kind, Wire
from judge.kinds.template import STRINGS


class StrKind(Kind):
    name = "str"
    api_text = "a static Python str, one of `choices`"
    static = True
    traced_refusal = "JAX has no string arrays"
    fields = frozenset({"choices"})
    statement_order = 20

    def check(self, arg: Arg) -> None:
        if not arg.choices:
            raise ValueError(f"str argument {arg.name!r} needs choices (the strings a case may pass)")
        if len(set(arg.choices)) != len(arg.choices):
            raise ValueError(f"str argument {arg.name!r}: choices repeat a string")

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("string",)

    def describe(self, arg: Arg) -> str:
        return "a Python str (static), one of " + ", ".join(repr(c) for c in arg.choices)

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        return json_to_choice(value, root=root, choices=arg.choices)

    def wire(self, arg: Arg, value: Any) -> Wire:
        return {"static": value}, []  # a JSON string: the tracer passes it as is

    def coverage_wanted(self, arg: Arg) -> list[Any]:
        return list(arg.choices)

    def statement_notes(self, arg: Arg, same_kind: Sequence[Arg]) -> list[str]:
        listed = ", ".join(f'`"{c}"`' for c in arg.choices)
        return [
            f"`{arg.name}` is a Python str, one of {listed} (any other string is refused before your "
            f"function runs): compare it with `==` in a Python `if`."
        ]

    def scaffold_spec(self, decl: Decl) -> dict[str, Any]:
        return {"choices": list(STRINGS)}

    def scaffold_toml(self, decl: Decl) -> list[str]:
        return [f"choices = {json.dumps(list(STRINGS))}"]

    def scaffold_description(self, decl: Decl) -> str:
        return f"A static Python str: {' or '.join(STRINGS)}."

    def scaffold_constraint(self, decl: Decl) -> str:
        return f"- `{decl.name}` is one of the strings {', '.join(f'`{c!r}`' for c in STRINGS)}."

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [(f"{n} not among the choices", "middle"), (f"{n} not a string", 1)]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return STRINGS[-1]

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return STRINGS[index % len(STRINGS)]
