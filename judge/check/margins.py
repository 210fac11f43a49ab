"""Check ``margins``: how robust the case set and the tolerances are, from the solutions' gradings.

What "well inside" and "well outside" mean depends on the dtype of a case (``judge.spec.Tolerance``:
``well_inside`` and ``well_outside``): float32 leaves room for 0.1x and 10x, while bfloat16 keeps so few
bits that an honest rounding and a 2% error are only a few ulps apart (0.7x and 1.5x by default).

- Every accepted solution: the largest error on any leaf of any case, in tolerances. Above the case
  dtype's ``well_inside``, a harmless reformulation (another summation order, another dtype for an
  intermediate) may fail. Also the slowest case's compile + run time as a share of the case time limit,
  and, on its own, its slowest compile (``judge.check.compile_share``).
- Every wrong_answer solution: which cases reject it and by how many tolerances. Fewer than
  ``STRONG_KILLS`` (2) hidden cases rejecting it by the case dtype's ``well_outside`` or more means an edit
  of one case, or a slightly looser tolerance, would let it pass (public cases do not count: a submission
  can recognise them). Structure, shape, dtype and mutation failures count as infinitely separated.
"""

from __future__ import annotations

import math

from judge.check.compile_share import compile_warning
from judge.check.context import CheckContext, MarginRow, MarginTarget, SolutionGrade
from judge.results import CaseResult, GradeResult
from judge.spec import Tolerance
from judge.verdicts import Verdict, WrongAnswerReason

NAME = "margins"

#: Hidden cases that must reject every wrong answer by the case dtype's ``well_outside`` or more.
STRONG_KILLS = 2
TIME_WARN = 0.5


def check(ctx: CheckContext) -> None:
    ctx.targets = targets(ctx)
    rows = []
    for graded in ctx.grades:
        if graded.result is None or graded.folder not in (Verdict.ACCEPTED.value, Verdict.WRONG_ANSWER.value):
            continue
        row = margin_row(ctx, graded, graded.result)
        rows.append(row)
        if row.warning:
            ctx.diag.warning(row.warning, file=graded.file)
        if graded.folder == Verdict.ACCEPTED.value and graded.result.verdict is Verdict.ACCEPTED:
            compiling = compile_warning(graded.result, ctx.loaded.spec.limits.case_time_s)
            if compiling:
                ctx.diag.warning(compiling, file=graded.file)
    ctx.margins = rows


def targets(ctx: CheckContext) -> list[MarginTarget]:
    """The margin targets of every dtype the problem's cases use, in the spec's order."""
    spec = ctx.loaded.spec
    used = {case.dtype for case in ctx.loaded.cases}
    return [
        MarginTarget(
            dtype, spec.compare.tolerance[dtype].well_inside, spec.compare.tolerance[dtype].well_outside
        )
        for dtype in spec.dtypes.allowed
        if dtype in used
    ]


def margin_row(ctx: CheckContext, graded: SolutionGrade, result: GradeResult) -> MarginRow:
    expected = Verdict(graded.folder)
    if expected is Verdict.ACCEPTED:
        return _accepted(ctx, graded, result)
    return _wrong(ctx, graded, result)


def _tolerance(ctx: CheckContext, case: CaseResult) -> Tolerance:
    """The tolerance of the case's dtype (custom cases and unknown names: the Run panel's dtype)."""
    spec = ctx.loaded.spec
    dtype = next((c.dtype for c in ctx.loaded.cases if c.name == case.name), spec.dtypes.run_panel)
    return spec.compare.tolerance[dtype]


def _accepted(ctx: CheckContext, graded: SolutionGrade, result: GradeResult) -> MarginRow:
    measured = [(c.error_ratio, c) for c in result.cases if c.error_ratio is not None]
    worst = max(measured, key=lambda m: m[0], default=None)
    ratio = worst[0] if worst else None
    case = worst[1].name if worst and ratio else None  # every case matched exactly: none stands out
    over = [(r, c) for r, c in measured if r > _tolerance(ctx, c).well_inside]
    times = [(c.compile_ms or 0.0) + (c.run_ms or 0.0) for c in result.cases if c.compile_ms or c.run_ms]
    limit_ms = ctx.loaded.spec.limits.case_time_s * 1000
    share = max(times) / limit_ms if times else None
    warning = ""
    if result.verdict is Verdict.ACCEPTED:
        if over:
            r, c = max(over, key=lambda m: m[0])
            warning = (
                f"accepted, but its error reaches {r:.3g}x the tolerance on case {c.name} (well inside is "
                f"below {_tolerance(ctx, c).well_inside:g}x for its dtype): an equally valid reformulation "
                "may fail there; check the tolerance for that dtype"
            )
        elif share is not None and share > TIME_WARN:
            warning = (
                f"accepted, but its slowest case takes {share:.0%} of the {limit_ms / 1000:g} s case limit "
                "(compile included): a slower machine may time out"
            )
    return MarginRow(
        graded.name, Verdict.ACCEPTED, result.verdict, result.total, 0, ratio, case, None, share, warning
    )


def _separation(reason: WrongAnswerReason | None, ratio: float | None) -> float:
    """How far outside the tolerance a rejecting case is: a value's ratio, else infinitely far (a structure,
    shape, dtype or mutation failure; also a value no tolerance covers, whose ratio is None)."""
    if reason is WrongAnswerReason.VALUE and ratio is not None:
        return ratio
    return math.inf


def _wrong(ctx: CheckContext, graded: SolutionGrade, result: GradeResult) -> MarginRow:
    rejecting = [
        (_separation(c.reason, c.error_ratio), c) for c in result.cases if c.verdict is Verdict.WRONG_ANSWER
    ]
    best = max(rejecting, key=lambda r: r[0], default=None)
    strong = [
        c.name for sep, c in rejecting if c.visibility == "hidden" and sep >= _tolerance(ctx, c).well_outside
    ]
    warning = ""
    if result.verdict is Verdict.WRONG_ANSWER and len(strong) < STRONG_KILLS:
        hidden = [(sep, c) for sep, c in rejecting if c.visibility == "hidden"]
        detail = (
            ", ".join(f"{c.name} at {_ratio_text(sep)}" for sep, c in sorted(hidden, key=lambda h: -h[0])[:4])
            or "none"
        )
        warning = (
            f"killed by {len(strong)} hidden case{'s' * (len(strong) != 1)} at its dtype's 'well outside' "
            f"margin or more (want {STRONG_KILLS}; hidden cases rejecting it: {detail}): an edit of one case "
            "or a slightly looser tolerance would let it pass; add hidden cases that catch the same mistake "
            "by a wide margin"
        )
    return MarginRow(
        graded.name,
        Verdict.WRONG_ANSWER,
        result.verdict,
        result.total,
        len(rejecting),
        best[0] if best else None,
        best[1].name if best else None,
        best[1].reason.value if best and best[1].reason else None,
        None,
        warning,
        strong=len(strong),
    )


def _ratio_text(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.3g}x"
