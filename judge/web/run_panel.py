"""The Run panel of the problem page, as the server renders it: one box per argument, prefilled.

Pure functions of the ``ProblemDetail`` that ``GET /api/problems/{slug}`` returns, so the page needs no
script (and no second request) to show the panel: each argument's label, the JSON kinds it accepts, its
description, and a box holding the first example's value; the list of examples the "Fill" button offers,
each with the text it puts in every box; whether the list-of-objects rule applies (a pytree argument);
and the dtype typed leaves become. The page's script only wires these.

A box's text is the value as a learner would type it (``format_input``): JSON with a space after each
comma and colon, on one line when it fits in 60 characters, else dicts and lists of nodes opened up one
item per line with leaves kept on one line; numbers are written as JavaScript writes them (``3`` for 3.0,
``1e-7``), because the text is what the page sends back after ``JSON.parse``.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from judge.kinds.registry import kind_of
from judge.service.schemas import ArgumentPublic, ProblemDetail

#: A value whose one-line text (plus its indentation) is at most this long stays on one line.
LINE_WIDTH = 60
#: A box shows at least MIN_ROWS and at most MAX_ROWS lines without scrolling.
MIN_ROWS, MAX_ROWS = 2, 12


class ArgumentBox(BaseModel):
    """One argument's box: ``id`` is ``arg-NAME``; ``describedby`` lists the ids that explain it."""

    model_config = ConfigDict(frozen=True)

    name: str
    id: str
    accepts: str
    description: str
    text: str
    rows: int
    describedby: str
    #: A function or str argument's choices (the box is a list to pick from), the one selected first.
    choices: list[str] = []
    selected: str = ""
    #: The dtype of the leaves typed here: "case" (the dtype chosen for the Run), "int32", "bool", or ""
    #: for an argument that has no array leaves (a number, a static int, a function).
    leaf_dtype: str = ""


class ExampleChoice(BaseModel):
    """An entry of the "Fill the boxes with" list: its label and each box's text (``inputs_json``)."""

    model_config = ConfigDict(frozen=True)

    index: int
    label: str
    inputs_json: str


class RunPanel(BaseModel):
    model_config = ConfigDict(frozen=True)

    boxes: list[ArgumentBox]
    examples: list[ExampleChoice]
    pytree_rule: bool
    dtype: str
    #: What the page needs to show a case's input with its dtypes (``input_layout``), as JSON.
    input_layout: str = "{}"


def box_id(name: str) -> str:
    """The id of argument ``name``'s box (its error line is ``{id}-error``, its kinds ``{id}-kinds``)."""
    return f"arg-{name}"


def box_rows(text: str) -> int:
    """How many lines a box holding ``text`` shows."""
    return min(MAX_ROWS, max(MIN_ROWS, len(text.split("\n"))))


def js_number(value: int | float) -> str:
    """``value`` as JavaScript writes the number (``String(n)``, ``JSON.stringify(n)``) after parsing it
    from JSON: ``3`` for 3.0, ``1e-7``, ``1e+21``; NaN, infinities and ints beyond a double as ``null``."""
    try:
        number = float(value)
    except OverflowError:
        return "null"
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    # repr gives the shortest digits that round-trip, as JavaScript's algorithm does; only the layout
    # (where the point goes, when to use an exponent) differs between the two languages.
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    assert isinstance(exponent, int)  # finite
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + exponent  # the value is 0.DIGITS x 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        power = n - 1
        text = digits[0] + (f".{digits[1:]}" if k > 1 else "") + f"e{'+' if power >= 0 else '-'}{abs(power)}"
    return ("-" if number < 0 else "") + text


def compact_json(value: Any) -> str:
    """One-line JSON with a space after each comma and colon: ``{"w": [3, 0], "b": 4}``."""
    if isinstance(value, dict):
        items = ", ".join(
            f"{json.dumps(str(k), ensure_ascii=False)}: {compact_json(v)}" for k, v in value.items()
        )
        return "{" + items + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(compact_json(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    return json.dumps(value, ensure_ascii=False)


def format_input(value: Any, depth: int = 0) -> str:
    """A box's text for ``value`` (see the module docstring); ``json.loads`` of it gives ``value`` back."""
    compact = compact_json(value)
    if len(compact) + depth * 2 <= LINE_WIDTH:
        return compact
    pad, end = "  " * (depth + 1), "  " * depth
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {format_input(v, depth + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list | tuple) and any(isinstance(item, dict | list | tuple) for item in value):
        return "[\n" + ",\n".join(pad + format_input(item, depth + 1) for item in value) + "\n" + end + "]"
    return compact


def _leaf_dtype(kind: str, dtype: str | None) -> str:
    return (dtype or "case") if kind_of(kind).arrays else ""


def _accepts_text(arg: ArgumentPublic) -> str:
    """What a box takes, in words: the JSON kinds, a pick from the choices, or the forms of a key."""
    kind = kind_of(arg.kind)
    if arg.choices:
        return f"one of the listed {kind.choice_noun}"
    return kind.panel_hint(arg.ndim, arg.accepts)


def input_layout(problem: ProblemDetail) -> dict[str, Any]:
    """What a shown input's JSON cannot say, for the page to show it as the function gets it: each
    argument's kind, its layout (``Kind.panel_layout``: the page reads that, never a kind's name) and the
    dtype of its leaves ("case": the case's float dtype; "float", "int", "bool":
    the Python type of a static argument; null for a string or a function's name), and each example's
    dtype (a case of a Run on the examples is named as the example)."""
    arguments = {}
    for arg in problem.arguments:
        # The dtype a static argument's JSON value stands for (shown beside it, numbers written as that
        # type); an array's leaf dtype.
        dtype = (arg.dtype or "case") if kind_of(arg.kind).arrays else kind_of(arg.kind).panel_dtype
        arguments[arg.name] = {"kind": arg.kind, "dtype": dtype, "layout": kind_of(arg.kind).panel_layout}
    return {
        "arguments": arguments,
        "examples": {example.name: example.dtype for example in problem.examples},
        "dtype": problem.run_panel_dtype,
    }


def run_panel(problem: ProblemDetail) -> RunPanel:
    """The Run panel of ``problem``'s page: boxes prefilled with the first example, the examples to fill."""
    first = problem.examples[0].input if problem.examples else {}
    boxes = []
    for arg in problem.arguments:
        ident = box_id(arg.name)
        text = format_input(first[arg.name]) if arg.name in first else ""
        described = f"{ident}-kinds {ident}-description {ident}-error"
        value = first.get(arg.name)
        selected = value if isinstance(value, str) and value in arg.choices else ""
        boxes.append(
            ArgumentBox(
                name=arg.name,
                id=ident,
                accepts=_accepts_text(arg),
                description=arg.description,
                text=text,
                rows=box_rows(text),
                describedby=described + (" json-rule" if kind_of(arg.kind).tree else ""),
                choices=list(arg.choices),
                selected=selected or (arg.choices[0] if arg.choices else ""),
                leaf_dtype=_leaf_dtype(arg.kind, arg.dtype),
            )
        )
    examples = [
        ExampleChoice(
            index=index,
            label=f"Example {index + 1}",
            inputs_json=json.dumps(
                {
                    arg.name: format_input(example.input[arg.name]) if arg.name in example.input else ""
                    for arg in problem.arguments
                },
                ensure_ascii=False,
            ),
        )
        for index, example in enumerate(problem.examples)
    ]
    return RunPanel(
        boxes=boxes,
        examples=examples,
        pytree_rule=any(kind_of(arg.kind).tree for arg in problem.arguments),
        dtype=problem.run_panel_dtype,
        input_layout=json.dumps(input_layout(problem), ensure_ascii=False),
    )
