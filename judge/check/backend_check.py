"""Check ``backend``: the reference and the shipped value solutions hold on the backend of ``judge check
--backend`` (a TPU, a GPU, or the CPU itself), against the judge's expected outputs.

``judge.check.backend_run`` ran them there (the reference and ``solutions/accepted/`` and
``solutions/wrong_answer/``, under ``jax.jit`` on that platform, at the problem's ``[compare]
matmul_precision``); here each result is compared with the expected output (the reference on the CPU,
what every grading compares with) by the judge's comparison, at the problem's tolerances on that backend
(``[compare.backend.<name>]`` over the base, ``CompareSpec.tolerance_on``) and with the magnitudes the CPU's
grading uses (``[compare] magnitude``, ``judge.core.expected.expected_magnitudes``: rtol of the terms an
element cancelled). The rows join the margin table with the backend named:

- the reference there: outside the tolerance on any case is an error (a correct solution written like the
  reference would be rejected on that backend); its own error against the float64 evaluation is a note;
- every accepted solution: rejected on any case is an error, its worst error above the dtype's
  ``well_inside`` a warning;
- every wrong answer: accepted on every case is an error (a widening let it through), unless its
  rejection rests on ``inputs_unchanged`` (a mutation, which the sandbox catches on every backend, is
  invisible to a run outside it); fewer than ``STRONG_KILLS`` hidden cases at ``well_outside`` a warning.

What stays with the sandboxed grading: the other solution folders (trace, compile, runtime and time
failures are about the sandbox, not the numbers), the inputs-unchanged check, and the times.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.check.accuracy_check import measure
from judge.check.context import CheckContext, MarginRow
from judge.check.margins import STRONG_KILLS, targets
from judge.core.compare import Checker, CompareResult, bind
from judge.core.errors import ReferenceFailure
from judge.core.expected import expected_gradients, expected_magnitudes, expected_outputs
from judge.core.gradients import gradient_checker, split_scale
from judge.core.problems import Case
from judge.core.spec import Tolerance
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.shared.wire import ProtocolError, loads_tree

NAME = "backend"


@dataclass(frozen=True)
class CaseOutcome:
    """One case of one run on the backend, against the expected output."""

    case: Case
    ok: bool
    #: The largest error in tolerances (inf for a structure, shape or dtype failure, or a failed run).
    ratio: float
    reason: str | None


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    assert ctx.platform is not None and ctx.platform_run is not None  # the runner's condition
    platform = ctx.platform
    folder = ctx.platform_run.results(ctx.root)
    if not ctx.targets:
        ctx.targets = targets(ctx)
    skipped = folder / "skipped.txt"
    if skipped.is_file():
        ctx.diag.note(f"{platform}: not run: {skipped.read_text()}")
        return
    try:
        files = [str(name) for name in json.loads((folder / "files.json").read_text())]
    except (OSError, ValueError) as exc:
        ctx.diag.error(f"the run on {platform} left no results ({exc}); see its messages above")
        return
    expected = expected_outputs(problem, problem.cases)
    gradients = expected_gradients(problem, problem.cases)
    scales = expected_magnitudes(problem, problem.cases)
    checker = bind(problem.spec.compare.on(platform), problem.spec.output)
    tolerance = problem.spec.compare.tolerance_on(platform)
    runs = {"r": "reference", **{f"s{k}": name for k, name in enumerate(files)}}
    rows: list[MarginRow] = []
    for who, name in runs.items():
        outcomes = [
            _outcome(
                checker,
                case,
                expected[i],
                gradients[i] if gradients else None,
                scales[i] if scales else None,
                folder,
                who,
                i,
            )
            for i, case in enumerate(problem.cases)
        ]
        file = ctx.root / "solutions" / name if who != "r" else problem.reference_path
        if who == "r":
            rows.append(_reference_row(ctx, platform, outcomes, file))
            _accuracy_note(ctx, platform, folder)
        elif name.startswith("accepted/"):
            rows.append(_accepted_row(ctx, platform, name, outcomes, tolerance, file))
        else:
            rows.append(_wrong_row(ctx, platform, name, outcomes, tolerance, file, folder, who))
    ctx.margins = [*ctx.margins, *rows]


def _scales(scale: Any, gradient: bool) -> tuple[Any, Any]:
    """(output magnitudes, gradient magnitudes) of a case's magnitude tree: on a ``[gradient]`` problem the
    pair its magnitude function returns (``judge.core.gradients.split_scale``), else the tree and None."""
    return split_scale(scale) if gradient else (scale, None)


def _load(folder: Path, who: str, index: int) -> tuple[Any, Any] | str:
    error = folder / f"{who}.{index}.error"
    if error.is_file():
        return error.read_text()
    try:
        output, gradient = loads_tree((folder / f"{who}.{index}.frame").read_bytes())
    except (OSError, ProtocolError, ValueError, TypeError) as exc:
        return f"no result ({exc})"
    return output, gradient


def _outcome(
    checker: Checker,
    case: Case,
    expected: Any,
    expected_grad: Any,
    scale: Any,
    folder: Path,
    who: str,
    index: int,
) -> CaseOutcome:
    """One case of one run against the expected output, with the case's magnitudes ``scale`` (the CPU's
    grading's: ``judge.core.expected.expected_magnitudes``; None, the plain bound) as the grader compares."""
    got = _load(folder, who, index)
    if isinstance(got, str):
        return CaseOutcome(case, False, math.inf, f"failed: {got.splitlines()[0][:200] if got else ''}")
    if isinstance(expected, ReferenceFailure):
        return CaseOutcome(case, False, math.inf, "no expected output (the reference failed on the CPU)")
    if isinstance(scale, ReferenceFailure):
        return CaseOutcome(case, False, math.inf, "no magnitudes (the magnitude function failed on the CPU)")
    output_scale, gradient_scale = _scales(scale, expected_grad is not None)
    results: list[CompareResult] = [checker(expected, got[0], output_scale)]
    if expected_grad is not None and not isinstance(expected_grad, ReferenceFailure):
        results.append(gradient_checker(checker)(expected_grad, got[1], gradient_scale))
    ratio = max(r.max_error_ratio for r in results)
    failed = next((r for r in results if not r.ok), None)
    reason = None if failed is None else (failed.reason.value if failed.reason else "value")
    return CaseOutcome(case, failed is None, ratio, reason)


def _dtype_tolerance(tolerance: dict[str, Tolerance], case: Case) -> Tolerance:
    return tolerance[case.dtype]


def _worst(outcomes: list[CaseOutcome]) -> CaseOutcome | None:
    return max(outcomes, key=lambda o: o.ratio, default=None)


def _reference_row(ctx: CheckContext, platform: str, outcomes: list[CaseOutcome], file: Path) -> MarginRow:
    worst = _worst(outcomes)
    failing = [o for o in outcomes if not o.ok]
    if failing and worst is not None:
        ctx.diag.error(
            f"on {platform}, the reference itself is outside the tolerance of the CPU's expected output on "
            f"{len(failing)} of {len(outcomes)} cases (worst {_x(worst.ratio)} on case {worst.case.name}"
            f"{', ' + worst.reason if worst.reason and worst.reason != 'value' else ''}): a correct solution "
            "written like it is rejected there; set the precision the problem grades at ([compare] "
            f"matmul_precision), or state a tolerance for {platform} ([compare.backend.{platform}]) that "
            "still rejects every wrong answer",
            file=file,
        )
    return MarginRow(
        "reference",
        Verdict.ACCEPTED,
        Verdict.ACCEPTED if not failing else Verdict.WRONG_ANSWER,
        len(outcomes),
        len(failing),
        worst.ratio if worst else None,
        worst.case.name if worst and worst.ratio else None,
        None,
        None,
        "",
        backend=platform,
    )


def _accuracy_note(ctx: CheckContext, platform: str, folder: Path) -> None:
    """The reference's own error on the backend against its float64 evaluation (accuracy check's)."""
    exact = ctx.float64_outputs
    if exact is None:
        return
    shares = []
    for index, case in enumerate(ctx.loaded.cases):
        got = _load(folder, "r", index)
        if isinstance(got, str) or isinstance(exact[index], ReferenceFailure):
            continue
        shares.append(
            measure(ctx, case, got[0], exact[index], "output", f"case {case.name}", backend=platform)
        )
    for dtype in sorted({s.dtype for s in shares}):
        worst = max((s for s in shares if s.dtype == dtype), key=lambda s: s.share)
        ctx.diag.note(
            f"{platform}, {dtype}: the reference's own error there is at most {_x(worst.share)} the "
            f"tolerance against float64 ({worst.case}, {worst.where}; the CPU's limit "
            f"{ctx.loaded.spec.accuracy.limit(dtype):g}x)"
        )


def _accepted_row(
    ctx: CheckContext,
    platform: str,
    name: str,
    outcomes: list[CaseOutcome],
    tolerance: dict[str, Tolerance],
    file: Path,
) -> MarginRow:
    worst = _worst(outcomes)
    failing = [o for o in outcomes if not o.ok]
    warning = ""
    if failing and worst is not None:
        ctx.diag.error(
            f"{name} is rejected on {platform} on {len(failing)} of {len(outcomes)} cases (worst "
            f"{_x(worst.ratio)} the tolerance on case {worst.case.name}"
            f"{', ' + worst.reason if worst.reason and worst.reason != 'value' else ''}): a correct solution "
            f"must be correct there too; set [compare] matmul_precision, or [compare.backend.{platform}]",
            file=file,
        )
    elif worst is not None and worst.ratio > _dtype_tolerance(tolerance, worst.case).well_inside:
        inside = _dtype_tolerance(tolerance, worst.case).well_inside
        warning = (
            f"accepted on {platform}, but its error there reaches {_x(worst.ratio)} the tolerance on case "
            f"{worst.case.name} (well inside is below {inside:g}x)"
        )
        ctx.diag.warning(warning, file=file)
    return MarginRow(
        name,
        Verdict.ACCEPTED,
        Verdict.ACCEPTED if not failing else Verdict.WRONG_ANSWER,
        len(outcomes),
        0,
        worst.ratio if worst else None,
        worst.case.name if worst and worst.ratio else None,
        None,
        None,
        warning,
        backend=platform,
    )


def _wrong_row(
    ctx: CheckContext,
    platform: str,
    name: str,
    outcomes: list[CaseOutcome],
    tolerance: dict[str, Tolerance],
    file: Path,
    folder: Path,
    who: str,
) -> MarginRow:
    """``folder``, ``who``: where the backend run left its results, and its name there."""
    rejecting = [o for o in outcomes if not o.ok]
    over = ctx.loaded.spec.compare.backend.get(platform)  # type: ignore[call-overload]
    declared = over.same_as_reference.get(name) if over is not None else None
    strong = [
        o for o in rejecting if o.case.hidden and o.ratio >= _dtype_tolerance(tolerance, o.case).well_outside
    ]
    best = _worst(rejecting)
    warning = ""
    if declared is not None and rejecting:
        ctx.diag.warning(
            f"{name} is declared to compute the reference's values on {platform} "
            f"([compare.backend.{platform}] same_as_reference), but it is rejected there on {len(rejecting)} "
            f"of {len(outcomes)} cases: remove the declaration and what the statement says of it",
            file=file,
        )
    if not rejecting:
        on_cpu = [] if platform == "cpu" else [i for i, r in enumerate(_rejected_on_cpu(ctx, file)) if r]
        # The cases its values fail on the CPU: on each, is it the reference's own result on the backend?
        same = _same_as_reference(folder, who, on_cpu)
        if not on_cpu:
            ctx.diag.note(
                f"{name}: its values pass on {platform} as on the CPU: the sandboxed grading's other checks "
                "(program rules, inputs unchanged) reject it, on every backend"
            )
        elif declared is not None and same:
            ctx.diag.note(
                f"{name}: its values on {platform} are the reference's own there, bit for bit, on every case "
                f"its values fail on the CPU ({len(on_cpu)} of {len(outcomes)}; declared in "
                f"[compare.backend.{platform}] same_as_reference, stated in the statement): no tolerance "
                "tells them apart there; the CPU's grading rejects it"
            )
        else:
            hint = (
                f" (its values there are the reference's own, bit for bit, on every case its values fail "
                f"on the CPU: {platform}'s compiler undoes the mistake; if no case can make them differ, "
                f"declare it in [compare.backend.{platform}] same_as_reference with why, which the statement "
                "states)"
                if same
                else ""
            )
            ctx.diag.error(
                f"{name} is accepted on {platform} on every case: a wrong answer must stay wrong there; "
                f"tighten [compare.backend.{platform}] or add hidden cases that catch it by a wide margin"
                + (
                    " (declared same_as_reference, but its values there differ from the reference's on a "
                    "case its values fail on the CPU)"
                    if declared is not None
                    else hint
                ),
                file=file,
            )
    elif len(strong) < STRONG_KILLS:
        warning = (
            f"on {platform}, killed by {len(strong)} hidden case{'s' * (len(strong) != 1)} at its dtype's "
            f"'well outside' margin or more (want {STRONG_KILLS})"
        )
        ctx.diag.warning(warning, file=file)
    verdict = Verdict.WRONG_ANSWER if rejecting else Verdict.ACCEPTED
    reason = best.reason if best else None
    return MarginRow(
        name,
        Verdict.WRONG_ANSWER,
        verdict,
        len(outcomes),
        len(rejecting),
        best.ratio if best else None,
        best.case.name if best else None,
        reason if reason in {r.value for r in WrongAnswerReason} else (reason and "failure"),
        None,
        warning,
        strong=len(strong),
        backend=platform,
    )


def _same_as_reference(folder: Path, who: str, cases: list[int]) -> bool:
    """Whether run ``who`` gave the reference's results on the backend, byte for byte, on each of ``cases``
    (at least one)."""
    try:
        return bool(cases) and all(
            (folder / f"{who}.{i}.frame").read_bytes() == (folder / f"r.{i}.frame").read_bytes()
            for i in cases
        )
    except OSError:
        return False


def _rejected_on_cpu(ctx: CheckContext, file: Path) -> list[bool]:
    """Per case, whether the solution's values are rejected when it runs on the CPU the same way (in this
    process, whose JAX is the CPU's), with the CPU's tolerance and magnitudes; a run that fails rejects
    every case. None rejected: what rejects it is no value, and no backend changes it."""
    from judge.check.backend_run import run_function, solution_function

    problem = ctx.loaded
    try:
        results = run_function(problem, solution_function(problem, file))
    except Exception:
        return [True] * len(problem.cases)
    expected = expected_outputs(problem, problem.cases)
    gradients = expected_gradients(problem, problem.cases)
    scales = expected_magnitudes(problem, problem.cases)
    checker = bind(problem.spec.compare, problem.spec.output)
    rejected = []
    for i, result in enumerate(results):
        scale = scales[i] if scales else None
        grad = gradients[i] if gradients else None
        if (
            isinstance(result, str)
            or isinstance(expected[i], ReferenceFailure)
            or isinstance(scale, ReferenceFailure)
        ):
            rejected.append(True)
            continue
        output_scale, gradient_scale = _scales(scale, grad is not None)
        rejected.append(
            not checker.accepts(expected[i], result[0], output_scale)
            or (
                grad is not None
                and not isinstance(grad, ReferenceFailure)
                and not gradient_checker(checker).accepts(grad, result[1], gradient_scale)
            )
        )
    return rejected


def _x(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.3g}x"
