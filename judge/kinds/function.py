"""``function``: a JSON string naming one of ``choices``, a function of the problem's menu module, passed
as the function itself; static."""

from __future__ import annotations

import json
from typing import Any

from judge.core.menu import MenuError, to_choice
from judge.core.pytree_json import ConversionError
from judge.kinds.base import Arg, Decl, Kind, Wire
from judge.kinds.template import MENU


class FunctionKind(Kind):
    name = "function"
    api_text = "the name of one of `choices`, passed as that function"
    static = True
    fields = frozenset({"choices"})
    choice_noun = "functions"
    needs_menu = True

    def check_traced(self, arg: Arg) -> None:
        """A traced function is refused after its choices are checked (``check``)."""

    def check(self, arg: Arg) -> None:
        if not arg.choices:
            raise ValueError(f"function argument {arg.name!r} needs choices (menu function names)")
        if arg.traced:
            raise ValueError(
                f"function argument {arg.name!r} must have traced = false (it is static: a function is "
                "passed with static_argnames, never traced)"
            )

    def accepts(self, arg: Arg) -> tuple[str, ...]:
        return ("string",)

    def describe(self, arg: Arg) -> str:
        return "a Python function from the problem's menu (static)"

    def from_json(self, arg: Arg, value: Any, dtype: str, root: str) -> Any:
        try:
            return to_choice(arg.choices, value)
        except MenuError as exc:
            raise ConversionError(root, str(exc)) from None

    def wire(self, arg: Arg, value: Any) -> Wire:
        return {"function": str(value)}, []

    def scaffold_spec(self, decl: Decl) -> dict[str, Any]:
        return {"choices": list(MENU)}

    def scaffold_toml(self, decl: Decl) -> list[str]:
        return [f"choices = {json.dumps(list(MENU))}"]

    def scaffold_description(self, decl: Decl) -> str:
        return f"One of the functions of functions.py ({', '.join(MENU)}), passed as a Python function."

    def scaffold_constraint(self, decl: Decl) -> str:
        return f"- `{decl.name}` is one of the functions of the menu: {', '.join(f'`{m}`' for m in MENU)}."

    def scaffold_junk(self, decl: Decl) -> list[tuple[str, object]]:
        n = decl.name
        return [(f"{n} not in the menu", "cube"), (f"{n} not a name", 3.0)]

    def scaffold_edge(self, decl: Decl, low: bool) -> object:
        return MENU[-1]

    def scaffold_example(self, decl: Decl, index: int) -> object:
        return MENU[index % len(MENU)]
