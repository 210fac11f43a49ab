"""Check ``margins``: how robust the case set and the tolerances are, from the solutions' gradings.

What "well inside" and "well outside" mean depends on the dtype of a case (``judge.core.spec.Tolerance``:
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

Safety band. A margin measured a hair from its threshold (0.087x against 0.1x) is a coin toss on another
machine, whose numerics (vector width, summation order, XLA build) move every measured error a little.
So each value margin has a band on the passing side of its threshold T, a factor ``b`` wide
(``band_factor``): an accepted solution's error in ``(T / b, T]`` and a wrong answer whose strong kills
are fewer than ``STRONG_KILLS`` once kills under ``T * b`` are left out warn as findings of their own,
which say how far inside the band the measurement is. They fail ``--werror`` like the threshold's own
warnings: with ``b`` at least the spread ``s`` between two machines' measurements of one margin, a margin
past its threshold on any machine is at least in the band on every other one (red everywhere), and a
package green on one machine is on the right side of every threshold on all of them (problems/README.md,
step 6, "Margins that hold on every machine", says how to size ``b``). Time margins have no band:
charged times differ between machines by more than any useful band, so they stay warnings to judge.
"""

from __future__ import annotations

import math

from judge.check.compile_share import compile_warning
from judge.check.context import CheckContext, MarginRow, MarginTarget, SolutionGrade
from judge.core.results import CaseResult, GradeResult
from judge.core.spec import Tolerance
from judge.core.verdicts import Verdict, WrongAnswerReason

NAME = "margins"

#: Hidden cases that must reject every wrong answer by the case dtype's ``well_outside`` or more.
STRONG_KILLS = 2
TIME_WARN = 0.5
#: The safety band of a value margin under a tolerance without ulps (float32's rtol/atol): errors there
#: are a few float32 roundings, whose count another summation order or vector width changes by a few, so a
#: measurement moves by a factor; 1.4 holds the largest cross-machine spread reported (0.087x against 0.1x
#: is 1.15x) with room, and clears the catalog's closest margin (spectral-norm's 0.068x, 1.47x under 0.1x).
VALUE_BAND = 1.4
#: The safety band under a tolerance made of ulps alone (bfloat16's 3 ulps, floor 1.5 ulps). Errors there
#: are whole ulps of an element: an honest variant's 2 of 3 ulps is 0.667x and moves only by a whole ulp
#: (1/3 of the tolerance), which the thresholds (0.7x, 1.5x) already sit between; a measurement a fraction
#: of an ulp from them comes from the floor term (small elements of a larger result) and moves by that
#: fraction. A tolerance with an rtol or atol beside its ulps (float32's rtol/atol with a floor of 16 or
#: 32768 ulps of the largest magnitude) measures errors of many roundings, continuous like rtol/atol
#: alone: it takes ``VALUE_BAND``.
ULP_BAND = 1.04


def band_factor(tolerance: Tolerance) -> float:
    """How wide the safety band under the tolerance's margin thresholds is, as a factor (see above)."""
    only_ulps = tolerance.uses_ulps and tolerance.rtol == 0 and tolerance.atol == 0
    return ULP_BAND if only_ulps else VALUE_BAND


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
    banded = [(r, c) for r, c in measured if r > _band_edge(_tolerance(ctx, c))]
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
        elif banded:
            r, c = max(banded, key=lambda m: m[0] / _tolerance(ctx, m[1]).well_inside)
            tol = _tolerance(ctx, c)
            edge, threshold = _band_edge(tol), tol.well_inside
            warning = (
                f"accepted, but its error reaches {r:.3g}x the tolerance on case {c.name}, within the safety "
                f"band under its dtype's 'well inside' threshold ({edge:.3g}x to {threshold:g}x, band factor "
                f"{band_factor(tol):g}; {threshold / r:.3g}x below the threshold): another machine's "
                "numerics may cross it; bring the error below the band (a more accurate reference, or another"
                " tolerance for that dtype), so every machine gives the same verdict"
            )
        elif share is not None and share > TIME_WARN:
            warning = (
                f"accepted, but its slowest case takes {share:.0%} of the {limit_ms / 1000:g} s case limit "
                "(compile included): a slower machine may time out"
            )
    return MarginRow(
        graded.name, Verdict.ACCEPTED, result.verdict, result.total, 0, ratio, case, None, share, warning
    )


def _band_edge(tolerance: Tolerance) -> float:
    """The lower edge of the band under an accepted solution's threshold: errors above it warn."""
    return tolerance.well_inside / band_factor(tolerance)


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
    clear = [
        c.name
        for sep, c in rejecting
        if c.visibility == "hidden"
        and sep >= _tolerance(ctx, c).well_outside * band_factor(_tolerance(ctx, c))
    ]
    warning = ""
    if result.verdict is Verdict.WRONG_ANSWER and len(strong) >= STRONG_KILLS > len(clear):
        banded = [
            (sep, c)
            for sep, c in rejecting
            if c.visibility == "hidden" and c.name in strong and c.name not in clear
        ]
        detail = ", ".join(
            f"{c.name} at {sep:.3g}x, {sep / _tolerance(ctx, c).well_outside:.3g}x its threshold "
            f"{_tolerance(ctx, c).well_outside:g}x"
            for sep, c in sorted(banded, key=lambda h: -h[0])[:4]
        )
        warning = (
            f"killed by {len(strong)} hidden cases at its dtype's 'well outside' margin or more, but only "
            f"{len(clear)} beyond its safety band (the threshold times the band factor: "
            f"{_band_text(ctx)}); in the band: {detail}: another machine's numerics may take them under the "
            "threshold; add hidden cases that catch the same mistake by a wider margin, so every machine "
            "gives the same verdict"
        )
    elif result.verdict is Verdict.WRONG_ANSWER and len(strong) < STRONG_KILLS:
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


def _band_text(ctx: CheckContext) -> str:
    """``15x (float32), 1.56x (bfloat16)``: where each used dtype's band above 'well outside' ends."""
    return ", ".join(
        f"{t.well_outside * band_factor(ctx.loaded.spec.compare.tolerance[t.dtype]):.3g}x ({t.dtype})"
        for t in targets(ctx)
    )


def _ratio_text(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.3g}x"
