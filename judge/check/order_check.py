"""Check ``order``: no grade is left to one order of additions, no transformation rule that never fires.

    sums            the reference's program adds terms whose order a correct solution may change: a sum
                    or other reduction (``reduce_sum``), a contraction (``dot_general``, a convolution), a
                    cumulative op (``cumsum``, ``reduce_window``), or a loop (``scan``, ``while``) whose
                    body adds floats. Such a problem must declare ``[compare] magnitude``: a magnitude
                    function (``judge.core.compare``: the bound that any order of the additions meets), or
                    ``"none"`` with a ``magnitude_reason``. A problem that declares neither is an error,
                    named with the first operation found; one whose reference does none of these needs
                    nothing.
    batched-pairs   a ``require_batched`` rule (``judge.grading.transform_rules``) compares a program only
    with the
                    programs of cases that differ from it in the batch size alone (``held_key``): without
                    two hidden cases of the same key and different batch sizes the rule can never fire,
                    an error.

The reference is traced (``jax.make_jaxpr``, every nested program walked: ``jit``, ``custom_jvp`` and
``custom_vjp`` bodies, loop and branch bodies) with each case's arguments until a sum is found, so a
static argument that picks the operation (a ``mode``) is seen with every value the cases give it; a
``[gradient]`` problem's gradient program is traced too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from judge.check.context import CheckContext
from judge.core.errors import ProblemError, ReferenceFailure
from judge.core.expected import call_arguments, gradient_function
from judge.core.problems import SPEC_FILE, Problem
from judge.core.trusted_jax import import_jax, load_reference
from judge.grading.transform_rules import batch_size, batched_rule, held_key

NAME = "order"

#: Primitives that add terms in an order the program chooses (sums, contractions, cumulative ops).
SUMMING = frozenset(
    {
        "reduce_sum",
        "dot_general",
        "conv_general_dilated",
        "cumsum",
        "cumlogsumexp",
        "reduce_window_sum",
        "reduce_window",
        "psum",
        "segment_sum",
        "scatter_add",
        "scatter-add",
    }
)
#: Loop primitives: their body accumulates when it adds floats.
LOOPS = frozenset({"scan", "while"})
#: Float additions inside a loop body.
ADDING = frozenset({"add", "sub", "add_any"})


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    _sums(ctx, problem)
    _batched_pairs(ctx, problem)


# ---------------------------------------------------------------------------------------------- sums


def _sums(ctx: CheckContext, problem: Problem) -> None:
    compare = problem.spec.compare
    if compare.magnitude is not None:
        how = (
            f"magnitude function `{compare.magnitude}`"
            if compare.magnitude_function is not None
            else f'"none" ({compare.magnitude_reason})'
        )
        ctx.diag.note(f"the order of additions is declared: {how}")
        return
    found = summing_operation(problem)
    if isinstance(found, ReferenceFailure):
        ctx.diag.error(f"cannot trace the reference to look for sums: {found}", file=ctx.root / SPEC_FILE)
        return
    if found is None:
        ctx.diag.note("the reference adds nothing whose order a solution could change")
        return
    ctx.diag.error(
        f"the reference's program adds terms in an order a correct solution may change ({found}), and the "
        "problem declares no [compare] magnitude: name a function of the reference module that returns, "
        "per output element, the sum of the absolute values of the terms that make it (problems/README.md, "
        '"Order-proof tolerances"), or declare magnitude = "none" with a one-line magnitude_reason when '
        "no order can move the result",
        file=ctx.root / SPEC_FILE,
        at="[compare]",
    )


def summing_operation(problem: Problem) -> str | ReferenceFailure | None:
    """The first operation of the reference's program (or its gradient's, on a ``[gradient]`` problem)
    that adds terms in an order a solution may change, as ``"<primitive> on case <name>"``; None when there
    is none on any case; a ReferenceFailure when the reference cannot be traced."""
    jax = import_jax()
    try:
        functions = [load_reference(problem)]
        if problem.spec.gradient is not None:
            functions.append(gradient_function(problem))
        menu = problem.menu()
    except ReferenceFailure as exc:
        return exc
    except ProblemError as exc:
        return ReferenceFailure(f"the problem's menu module failed: {exc}")
    static = tuple(i for i, a in enumerate(problem.spec.args) if not a.traced)
    for case in problem.cases:
        args = call_arguments(jax, problem, case, menu)
        for fn in functions:
            try:
                closed = jax.make_jaxpr(fn, static_argnums=static)(*args)
            except Exception as exc:
                return ReferenceFailure(f"on case {case.name}: {type(exc).__name__}: {exc}")
            found = first_summing(closed.jaxpr)
            if found is not None:
                return f"{found} on case {case.name}"
    return None


def first_summing(jaxpr: Any, in_loop: bool = False) -> str | None:
    """The name of the first summing primitive in ``jaxpr`` or a program nested in it (``SUMMING``), or
    of a loop whose body adds floats (``"scan adding floats"``); None when there is none."""
    for eqn in jaxpr.eqns:
        name = str(eqn.primitive.name)
        if name in SUMMING:
            return name
        if in_loop and name in ADDING and any(_is_float(v) for v in eqn.outvars):
            return "add"
        for sub in _nested(eqn.params):
            found = first_summing(sub, in_loop or name in LOOPS)
            if found is not None:
                return f"{name} adding floats" if name in LOOPS and found == "add" else found
    return None


def _nested(params: dict[str, Any]) -> Iterator[Any]:
    """The programs nested in an equation's parameters (jaxprs, closed jaxprs, tuples of them)."""

    def walk(value: Any) -> Iterator[Any]:
        if hasattr(value, "eqns"):
            yield value
        elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
            yield value.jaxpr
        elif isinstance(value, tuple | list):
            for item in value:
                yield from walk(item)

    for value in params.values():
        yield from walk(value)


def _is_float(var: Any) -> bool:
    dtype = getattr(getattr(var, "aval", None), "dtype", None)
    return dtype is not None and (getattr(dtype, "kind", "") == "f" or str(dtype) == "bfloat16")


# -------------------------------------------------------------------------------------- batched pairs


def _batched_pairs(ctx: CheckContext, problem: Problem) -> None:
    rule = batched_rule(problem.spec)
    if rule is None:
        return
    sizes: dict[str, dict[int, str]] = {}
    for case in problem.cases:
        if not case.hidden:
            continue
        size, held = batch_size(rule, problem.spec, case.inputs), held_key(rule, problem.spec, case.inputs)
        if size is not None and held is not None:
            sizes.setdefault(held, {}).setdefault(size, case.name)
    pairs = [names for names in sizes.values() if len(names) > 1]
    if not pairs:
        ctx.diag.error(
            f"require_batched on `{rule.arg}` can never fire: it compares a program only with those of "
            "cases that differ from it in the batch size alone, and no two hidden cases do (same shapes, "
            "dtypes and static values otherwise, another size of the batched axis); add such a pair",
            file=ctx.root / SPEC_FILE,
            at="[[rules]]",
        )
        return
    shown = ", ".join(" / ".join(sorted(names.values())) for names in pairs[:4])
    ctx.diag.note(
        f"require_batched compares {len(pairs)} groups of hidden cases that differ in the batch size "
        f"alone: {shown}"
    )
