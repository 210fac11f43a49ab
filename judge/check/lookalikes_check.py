"""Check ``lookalikes``: every public example's input structure reappears in a hidden case, with other values.

A traced function sees the structure of its inputs (containers, dict keys, list lengths), the shapes and
dtypes of their leaves and the values of static arguments, never a traced value. So a submission can
recognise an example by its structure and return the published output. That cheat fails only on a hidden
case with the same structure, shapes and dtype whose expected output differs from the example's. This
check requires one for every public case (comparing the reference's outputs with the problem's own
tolerance; the inputs alone when the reference failed).
"""

from __future__ import annotations

from typing import Any

from judge.check.context import CheckContext
from judge.check.coverage_check import signature
from judge.core.compare import bind
from judge.core.problems import Case
from judge.core.pytree_json import format_value

NAME = "lookalikes"


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    spec = problem.spec
    outputs = _outputs(ctx)
    for case in problem.public_cases:
        key = signature(spec.args, case.inputs, case.dtype)
        twins = [h for h in problem.hidden_cases if signature(spec.args, h.inputs, h.dtype) == key]
        at = f"case {case.name}"
        file = ctx.case_file(case)
        if not twins:
            ctx.diag.error(
                "no hidden case has this example's input structure, shapes and dtype: a submission that "
                "returns the published output whenever it sees this structure would pass every hidden case; "
                "add a hidden case with the same structure and shapes and other values",
                file=file,
                at=at,
            )
            continue
        if not any(_differs(ctx, outputs, case, twin) for twin in twins):
            names = ", ".join(t.name for t in twins)
            ctx.diag.error(
                f"the hidden cases with this example's structure ({names}) expect the same output: returning "
                "the published output for this structure would pass them; give one of them other values",
                file=file,
                at=at,
            )


def _outputs(ctx: CheckContext) -> dict[str, Any]:
    """Reference output by case name, where the reference check computed it."""
    if ctx.reference_outputs is None:
        return {}
    return {
        case.name: out
        for case, out in zip(ctx.loaded.cases, ctx.reference_outputs, strict=True)
        if out is not None
    }


def _differs(ctx: CheckContext, outputs: dict[str, Any], public: Case, hidden: Case) -> bool:
    """The example's published output would be wrong on ``hidden``."""
    if public.name in outputs and hidden.name in outputs:
        checker = bind(ctx.loaded.spec.compare, ctx.loaded.spec.output)
        return not checker(outputs[hidden.name], outputs[public.name]).ok
    return [format_value(v) for v in public.inputs] != [format_value(v) for v in hidden.inputs]
