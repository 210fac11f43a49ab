"""The problem's cost rule (``[cost]``): a program's cost (the executor's figures) beside the reference's,
and whether it breaks the rule. The comparison is also what the feedback step shows (``feedback_step``)."""

from __future__ import annotations

from dataclasses import dataclass

from judge.core.problems import Case, Problem
from judge.feedback.cost import CostComparison, compare_cost
from judge.feedback.reference_cost import reference_cost
from sandbox.session.reports import ProgramReport


def comparison(
    problem: Problem, case: Case, program: ProgramReport, run_ms: float | None = None
) -> CostComparison | None:
    """The program's cost beside the reference's on ``case``, or None (no figures on either side).
    ``run_ms``: the case's run time, when it may be shown. The reference is compiled here (cached)."""
    compiled = program.compiled
    if compiled is None or not compiled.cost.figures():
        return None
    reference = reference_cost(problem, case)
    if reference is None:
        return None
    loops = compiled.summary.loops
    # A program the executor had compiled before (its cache) took no compile time worth comparing.
    compile_ms = None if compiled.cached else compiled.compile_ms
    return compare_cost(compiled.cost.figures(), loops, reference, compile_ms=compile_ms, run_ms=run_ms)


@dataclass(frozen=True)
class CostBroken:
    """The cost rule broken on one figure: the message, the figure's name and the most the rule allows
    (a ratio to the reference's)."""

    message: str
    figure: str
    bound: float


def over_cost(problem: Problem, compared: CostComparison) -> CostBroken | None:
    """The first figure over the problem's cost rule, or None when kept or absent. Figures the judge
    cannot get (no cost analysis) break nothing."""
    rule = problem.spec.cost
    if rule is None:
        return None
    for what, figure, got, bound in (
        ("FLOPs", "flops", compared.flops_ratio, rule.max_flops_ratio),
        ("bytes accessed", "bytes_accessed", compared.bytes_ratio, rule.max_bytes_ratio),
    ):
        if got is not None and bound is not None and got > bound:
            text = (
                f"the compiled program costs {got:.3g} times the reference solution's {what}; this "
                f"problem allows at most {bound:g} times (do the work once: no repeated or wasted "
                "computation)"
            )
            return CostBroken(text, figure, bound)
    return None
