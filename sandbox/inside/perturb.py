"""The loop check's variant of a program: every loop's results perturbed, built by the executor from the
module it parsed (never by the tracer, which runs user code).

A problem whose rule says "the result comes from a loop" (``require_loop``) asks what the program
computes, not only which ops it holds: a loop that does some work of the right kind while a closed form
outside it computes the answer has the ops and none of the substance. So the executor also compiles this
variant, in which every result of every ``stablehlo.while`` (in ``main``, in private functions, nested
in other loops) is replaced, for all its uses, by a perturbed value (floats ``x + 0.25 |x| + 0.5``,
integers ``x + 1``), runs it on the same inputs as the program, and reports whether any output bit changed. If
none did, what the loops compute does not reach the output
(``judge.grading.compiled_rules.idle_loops_message``).

The float perturbation moves every finite value (by at least 0.5 and by a quarter of its magnitude, so
no rounding undoes it: it has no fixed point, where ``x * 1.25 + 0.5`` would leave -2 as it is), and it is
not a scaling (positives grow by 1.25, negatives shrink by 0.75, both shift), so a result normalized after
the loop (``u / |u|``) still changes. Its limits are in docs/architecture.md ("Program rules").
"""

from __future__ import annotations

from typing import Any

#: The perturbation of a float loop result: ``x + SCALE * |x| + SHIFT``.
SCALE = 0.25
SHIFT = 0.5


def _element_kind(ir: Any, element: Any) -> str | None:
    """``float``, ``int`` or None (bool, complex, tokens) for a tensor's element type."""
    for kind, types in (
        ("float", (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)),
        ("int", (ir.IntegerType,)),
    ):
        for cls in types:
            try:
                typed = cls(element)
            except (ValueError, TypeError):
                continue
            if kind == "int" and typed.width == 1:
                return None  # i1 is bool
            return kind
    return None


def _splat(ir: Any, hlo: Any, tensor: Any, attr: Any) -> Any:
    """A ``stablehlo.constant`` of ``tensor``'s type, every element ``attr``."""
    return hlo.ConstantOp(ir.DenseElementsAttr.get_splat(tensor, attr)).result


def perturb_loops(ir: Any, hlo: Any, module: Any) -> int:
    """Rewrite ``module`` in place (inside its context): every use of a float or integer result of every
    ``stablehlo.while`` gets the perturbed value instead. Returns how many results were perturbed."""
    loops: list[Any] = []

    def visit(op: Any) -> Any:
        if op.name == "stablehlo.while":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    perturbed = 0
    for loop in loops:
        for result in loop.results:
            try:
                tensor = ir.RankedTensorType(result.type)
            except (ValueError, TypeError):
                continue
            kind = _element_kind(ir, tensor.element_type)
            uses = [(use.owner, use.operand_number) for use in result.uses]
            if kind is None or not uses:
                continue
            with ir.Location.unknown(), ir.InsertionPoint.after(loop):
                if kind == "float":
                    scale = _splat(ir, hlo, tensor, ir.FloatAttr.get(tensor.element_type, SCALE))
                    shift = _splat(ir, hlo, tensor, ir.FloatAttr.get(tensor.element_type, SHIFT))
                    grown = hlo.MulOp(hlo.AbsOp(result).result, scale).result
                    new = hlo.AddOp(hlo.AddOp(result, grown).result, shift).result
                else:
                    one = _splat(ir, hlo, tensor, ir.IntegerAttr.get(tensor.element_type, 1))
                    new = hlo.AddOp(result, one).result
            for owner, index in uses:
                owner.operands[index] = new
            perturbed += 1
    return perturbed
