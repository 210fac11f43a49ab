"""Check ``solutions``: every file in ``solutions/<verdict>/`` gets the verdict its folder names.

A folder may also allow the verdicts ``solutions.also_allow`` declares for it (a fork bomb under
``runtime_error/`` may instead hit the memory limit). The starter code is graded too: it must not be
accepted, and it should at least run. Gradings run ``ctx.concurrency`` at a time through one warm pool of
sandboxed tracer + executor pairs (tracers in slots from ``ctx.slot_base``); a grading whose pair fails to
start is tried again (``START_TRIES``).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from judge.check.context import CheckContext, SolutionGrade
from judge.errors import JudgeError
from judge.grader import MAX_CODE_BYTES, grade
from judge.source import SourceError, decode_source
from judge.verdicts import Verdict
from sandbox.base import Backend, Pair
from sandbox.errors import SandboxError, WorkerStartError
from sandbox.limits import SandboxLimits
from sandbox.pool import GradingPool

NAME = "solutions"

#: Seconds a grading waits for a warm tracer + executor pair.
_ACQUIRE_TIMEOUT_S = 120.0
#: Gradings per file when the sandboxed pair fails to start (on a host too busy to import JAX within the
#: start-up limit, say): a pair that never started says nothing about the solution.
START_TRIES = 3


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    jobs: list[tuple[str, Path]] = []
    for folder, file in problem.solutions():
        try:
            verdict = Verdict(folder)
        except ValueError:
            verdict = None
        if verdict is None or verdict is Verdict.NOT_RUN:
            known = ", ".join(v.value for v in Verdict if v is not Verdict.NOT_RUN)
            diag.error(f"solutions/{folder}/ is not a verdict (one of: {known})", file=file)
            continue
        jobs.append((folder, file))
    folders = {folder for folder, _ in jobs}
    if Verdict.ACCEPTED.value not in folders:
        diag.error(
            "no solutions/accepted/ file: the reference needs at least one independent accepted "
            "solution, and the tolerance margins cannot be measured",
            file=problem.root / "solutions",
        )
    if Verdict.WRONG_ANSWER.value not in folders:
        diag.warning(
            "no solutions/wrong_answer/ file: nothing shows that the cases catch a wrong answer",
            file=problem.root / "solutions",
        )
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

        if workers == 1:
            return [run(job) for job in jobs]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge-check") as threads:
            return list(threads.map(run, jobs))


def _grade_one(ctx: CheckContext, pool: GradingPool, folder: str, file: Path) -> SolutionGrade:
    started = time.monotonic()
    try:
        code = decode_source(file.read_bytes(), max_bytes=MAX_CODE_BYTES)
    except (OSError, SourceError) as exc:
        return SolutionGrade(folder, file, None, f"cannot read it: {exc}")

    def start(limits: SandboxLimits) -> Pair:
        return pool.acquire(_ACQUIRE_TIMEOUT_S, limits)

    for attempt in range(1, START_TRIES + 1):
        try:
            # author=True: the margins need every case's error ratio and time, hidden ones included.
            result = grade(ctx.loaded, code, start, author=True)
        except WorkerStartError as exc:
            if attempt < START_TRIES:
                continue
            error = f"{type(exc).__name__} (after {START_TRIES} tries): {exc}"
        except (JudgeError, SandboxError, OSError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        else:
            return SolutionGrade(folder, file, result, None, time.monotonic() - started)
        break
    return SolutionGrade(folder, file, None, error, time.monotonic() - started)


def _judge(ctx: CheckContext, graded: SolutionGrade) -> None:
    diag = ctx.diag
    file = graded.file
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
        also = f" (or {', '.join(sorted(v.value for v in allowed - {expected}))})" if len(allowed) > 1 else ""
        diag.error(f"expected {expected.value}{also}, got {detail}", file=file)
