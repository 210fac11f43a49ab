"""Check ``margins``: how robust the case set and the tolerances are, from the solutions' gradings.

- Every accepted solution: the largest error on any leaf of any case, in tolerances. Well inside is below
  ``ACCEPTED_WARN`` (0.1): above it, a harmless reformulation (another summation order, another dtype for
  an intermediate) may fail. Also the slowest case's compile + run time as a share of the case time limit.
- Every wrong_answer solution: which cases reject it and by how many tolerances. Only one rejecting case,
  or a best separation under ``WRONG_WARN`` (10) tolerances, means a small edit of the cases or the
  tolerance would let it pass. Structure, shape, dtype and mutation failures count as infinitely separated.
"""

from __future__ import annotations

import math

from judge.check.context import CheckContext, MarginRow, SolutionGrade
from judge.results import GradeResult
from judge.verdicts import Verdict, WrongAnswerReason

NAME = "margins"

ACCEPTED_WARN = 0.1
WRONG_WARN = 10.0
TIME_WARN = 0.5


def check(ctx: CheckContext) -> None:
    rows = []
    for graded in ctx.grades:
        if graded.result is None or graded.folder not in (Verdict.ACCEPTED.value, Verdict.WRONG_ANSWER.value):
            continue
        row = margin_row(ctx, graded, graded.result)
        rows.append(row)
        if row.warning:
            ctx.diag.warning(row.warning, file=graded.file)
    ctx.margins = rows


def margin_row(ctx: CheckContext, graded: SolutionGrade, result: GradeResult) -> MarginRow:
    expected = Verdict(graded.folder)
    if expected is Verdict.ACCEPTED:
        return _accepted(ctx, graded, result)
    return _wrong(graded, result)


def _accepted(ctx: CheckContext, graded: SolutionGrade, result: GradeResult) -> MarginRow:
    measured = [(c.error_ratio, c.name) for c in result.cases if c.error_ratio is not None]
    ratio, case = max(measured, key=lambda m: m[0]) if measured else (None, None)
    if not ratio:
        case = None  # every case matched exactly: no case stands out
    times = [(c.compile_ms or 0.0) + (c.run_ms or 0.0) for c in result.cases if c.compile_ms or c.run_ms]
    limit_ms = ctx.loaded.spec.limits.case_time_s * 1000
    share = max(times) / limit_ms if times else None
    warning = ""
    if result.verdict is Verdict.ACCEPTED:
        if ratio is not None and ratio > ACCEPTED_WARN:
            warning = (
                f"accepted, but its error reaches {ratio:.3g}x the tolerance on case {case} (well inside "
                f"is below {ACCEPTED_WARN:g}x): an equally valid reformulation may fail there; check the "
                "tolerance for that dtype"
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
    if reason is WrongAnswerReason.VALUE and ratio is not None:
        return ratio
    return math.inf


def _wrong(graded: SolutionGrade, result: GradeResult) -> MarginRow:
    rejecting = [
        (_separation(c.reason, c.error_ratio), c.name, c.reason)
        for c in result.cases
        if c.verdict is Verdict.WRONG_ANSWER
    ]
    ratio, case, reason = max(rejecting, key=lambda r: r[0]) if rejecting else (None, None, None)
    warning = ""
    if result.verdict is Verdict.WRONG_ANSWER:
        if len(rejecting) == 1:
            warning = (
                f"only case {case} rejects this wrong answer: an edit of that one case would let it pass; "
                "add another case that catches the same mistake"
            )
        elif ratio is not None and ratio < WRONG_WARN:
            warning = (
                f"rejected by at most {ratio:.3g}x the tolerance (best on case {case}; want at least "
                f"{WRONG_WARN:g}x): a slightly looser tolerance would accept it; add a case that "
                "separates it more"
            )
    return MarginRow(
        graded.name,
        Verdict.WRONG_ANSWER,
        result.verdict,
        result.total,
        len(rejecting),
        ratio,
        case,
        reason.value if reason else None,
        None,
        warning,
    )
