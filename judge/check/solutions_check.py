"""Check ``solutions``: every file in ``solutions/<verdict>/`` gets the verdict its folder names.

A folder may also allow the verdicts ``solutions.also_allow`` declares for it (a fork bomb under
``runtime_error/`` may instead hit the memory limit). The starter code is graded too: it must not be
accepted, and it should at least run. Gradings run ``ctx.concurrency`` at a time through one warm pool of
sandboxed tracer + executor pairs (tracers in slots from ``ctx.slot_base``); the pool starts a worker again
when one fails to start, and a grading waits for a pair as long as the pool progresses (it fails only after
``_ACQUIRE_STALL_S`` without progress). A grading the judge could not finish (no pair, a sandbox failure, an
``internal_error`` verdict, a grading past its budget) says nothing about the solution: it is tried again
(``_GRADE_ATTEMPTS`` in all), and if the judge still fails it is reported as the judge's failure
(``SolutionGrade.judge_failed``: ``judge check`` then exits with its judge-failure code), never as a finding
on the file.
"""

from __future__ import annotations

import time
from pathlib import Path

from judge.check.bounded import run_bounded
from judge.check.context import CheckContext, SolutionGrade
from judge.core.errors import JudgeError
from judge.core.grader import MAX_CODE_BYTES, grade
from judge.core.problems import SPEC_FILE
from judge.core.results import GradeResult
from judge.core.source import SourceError, decode_source
from judge.core.spec import Tolerance, default_tolerances
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.backends.base import Backend, GradingProcesses
from sandbox.errors import SandboxError
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import GradingPool

NAME = "solutions"

#: Seconds without progress after which a grading stops waiting for a warm tracer + executor pair.
_ACQUIRE_STALL_S = 120.0
#: Seconds a grading may take in all before it is given up as the judge's failure (its wait for a pair,
#: its run on a busy host, and the monitor's own wall limit several times over).
_GRADING_BUDGET_S = 900.0
#: Times a grading the judge could not finish is tried in all, and the pause before the second try (doubled
#: before each later one).
_GRADE_ATTEMPTS = 3
_RETRY_PAUSE_S = 2.0


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    # Folders that are not a verdict, and too few solutions, are the ``rules`` check's findings.
    verdicts = {v.value for v in Verdict if v is not Verdict.NOT_RUN}
    jobs = [(folder, file) for folder, file in problem.solutions() if folder in verdicts]
    jobs.append(("", problem.root / "starter.py"))
    assert ctx.backend is not None, "the runner skips this check without a backend"
    ctx.grades = grade_files(ctx, ctx.backend, jobs)
    for graded in ctx.grades:
        _judge(ctx, graded)


def grade_files(ctx: CheckContext, backend: Backend, jobs: list[tuple[str, Path]]) -> list[SolutionGrade]:
    """Grade every (folder, file), ``ctx.concurrency`` at a time through one warm pool of sandboxed
    tracer + executor pairs; results in the order of ``jobs``."""
    workers = max(1, min(ctx.concurrency, len(jobs)))
    with GradingPool(backend, SandboxLimits(), size=workers, slot_base=ctx.slot_base) as pool:

        def run(job: tuple[str, Path]) -> SolutionGrade:
            return _grade_one(ctx, pool, job[0], job[1])

        def lost(job: tuple[str, Path], waited: float) -> SolutionGrade:
            why = f"the grading did not finish within {waited:.0f} s (a lost tracer or executor)"
            return SolutionGrade(job[0], job[1], None, why, waited, judge_failed=True)

        def done(index: int, graded: SolutionGrade) -> None:
            if ctx.progress is not None:
                ctx.progress(f"{ctx.root.name}: solutions {index + 1}/{len(jobs)} {_progress_line(graded)}")

        # Every grading ends: one past its budget is reported as the judge's failure and the pool is closed
        # (which ends its stuck wait); a hang cannot stop judge check.
        return run_bounded(jobs, run, workers=workers, budget_s=_GRADING_BUDGET_S, lost=lost, done=done)


def _progress_line(graded: SolutionGrade) -> str:
    if graded.result is None:
        whose = "the judge failed" if graded.judge_failed else "not graded"
        return f"{graded.name}: {whose} ({graded.error}) in {graded.elapsed_s:.1f} s"
    return f"{graded.name}: {graded.result.verdict.value} in {graded.elapsed_s:.1f} s"


def _grade_one(ctx: CheckContext, pool: GradingPool, folder: str, file: Path) -> SolutionGrade:
    started = time.monotonic()
    try:
        code = decode_source(file.read_bytes(), max_bytes=MAX_CODE_BYTES)
    except (OSError, SourceError) as exc:
        return SolutionGrade(folder, file, None, f"cannot read it: {exc}")

    def start(limits: SandboxLimits) -> GradingProcesses:
        return pool.acquire(_ACQUIRE_STALL_S, limits)

    failures: list[str] = []
    for attempt in range(_GRADE_ATTEMPTS):
        if attempt:
            time.sleep(_RETRY_PAUSE_S * 2 ** (attempt - 1))
        try:
            # author=True: the margins need every case's error ratio and time, hidden ones included.
            result = grade(ctx.loaded, code, start, author=True)
        except (JudgeError, SandboxError, OSError) as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
            continue
        if result.verdict is Verdict.INTERNAL_ERROR:
            failures.append(f"internal_error ({result.message})" if result.message else "internal_error")
            continue
        return SolutionGrade(folder, file, result, None, time.monotonic() - started)
    tries = f"{len(failures)} tries" if len(failures) > 1 else "1 try"
    why = f"{failures[-1]} ({tries})"
    return SolutionGrade(folder, file, None, why, time.monotonic() - started, judge_failed=True)


def _judge(ctx: CheckContext, graded: SolutionGrade) -> None:
    diag = ctx.diag
    file = graded.file
    if graded.judge_failed:  # the judge's failure, reported by the run's exit code and summary
        return
    if graded.result is None:
        diag.error(f"could not be graded: {graded.error}", file=file)
        return
    result = graded.result
    detail = f"{result.verdict.value}" + (f" ({result.message})" if result.message else "")
    if result.verdict is Verdict.INTERNAL_ERROR:
        diag.error(f"the judge failed while grading it: {detail}", file=file)
        return
    if not graded.folder:  # the starter code
        if result.verdict is Verdict.ACCEPTED:
            diag.error(
                "the starter code is accepted: learners would pass without writing anything", file=file
            )
        elif result.verdict is not Verdict.WRONG_ANSWER:
            diag.warning(
                f"the starter code does not run cleanly: {detail}; give learners code that runs and "
                "returns the right structure",
                file=file,
            )
        return
    expected = Verdict(graded.folder)
    allowed = {expected, *ctx.loaded.spec.solutions.also_allow.get(expected, [])}
    if result.verdict not in allowed:
        if expected is Verdict.ACCEPTED and _tolerance_finding(ctx, graded, result):
            return
        also = f" (or {', '.join(sorted(v.value for v in allowed - {expected}))})" if len(allowed) > 1 else ""
        diag.error(f"expected {expected.value}{also}, got {detail}", file=file)


def _tolerance_finding(ctx: CheckContext, graded: SolutionGrade, result: GradeResult) -> bool:
    """An accepted solution rejected only by values, where the spec declares a tolerance tighter than the
    judge's default for that dtype: report it once, at the tolerance's line in the spec (the tolerance is
    what to fix, or the solution is not as correct as its folder says). False when it is not that case."""
    spec = ctx.loaded.spec
    failing = [c for c in result.cases if c.verdict is Verdict.WRONG_ANSWER]
    if not failing or any(c.reason is not WrongAnswerReason.VALUE or c.error_ratio is None for c in failing):
        return False
    worst = max(failing, key=lambda c: c.error_ratio or 0.0)
    dtype = next((c.dtype for c in ctx.loaded.cases if c.name == worst.name), spec.dtypes.run_panel)
    declared = spec.compare.tolerance[dtype]
    default = default_tolerances().get(dtype)
    if default is None or not _tighter(declared, default):
        return False
    ctx.diag.error(
        f"{graded.name} is rejected on {len(failing)} case{'s' * (len(failing) != 1)} only by this "
        f"{dtype} tolerance ({declared.describe()}): its error reaches {worst.error_ratio:.3g}x the "
        f"tolerance on case {worst.name}, where the default ({default.describe()}) is made for equally valid "
        "formulations; loosen it, or move the solution out of accepted/ if it is wrong",
        file=ctx.root / SPEC_FILE,
        at=f"compare.tolerance.{dtype}",
    )
    return True


def _tighter(declared: Tolerance, default: Tolerance) -> bool:
    """Whether any bound of ``declared`` is below the default's and none is above it."""
    pairs = [
        (declared.rtol, default.rtol),
        (declared.atol, default.atol),
        (declared.ulps, default.ulps),
        (declared.floor_ulps, default.floor_ulps),
    ]
    return any(d < base for d, base in pairs) and all(d <= base for d, base in pairs)
