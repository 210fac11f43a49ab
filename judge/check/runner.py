"""Run the checks of ``judge check`` on problem packages, in order, and collect the report.

Each check is a plain function of a ``CheckContext`` (one module per check). Later checks use what earlier
ones computed (the loaded problem, the reference's outputs, the gradings), so a check whose inputs are
missing is skipped with the reason, never run on half a package.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judge.check import (
    accuracy_check,
    backend_check,
    cases_check,
    cost_check,
    coverage_check,
    examples_check,
    lookalikes_check,
    margins,
    mistakes_check,
    order_check,
    promises_check,
    reach_check,
    reference_check,
    requirements_check,
    rules_check,
    solutions_check,
    spec_check,
    starter_check,
    statement_check,
)
from judge.check.backend_run import PlatformRun
from judge.check.context import CheckContext, MarginRow, MarginTarget, SolutionGrade
from judge.check.diagnostics import Diagnostics, Finding, Severity, tally
from judge.core.problems import default_problems_dir
from sandbox.backends.base import Backend

Progress = Callable[[str], None]

#: ``judge check``'s exit code when the judge could not grade a solution even after retries (its own
#: failure: no worker, a sandbox unavailable, an internal error), whatever the package's findings.
EXIT_JUDGE_FAILED = 3


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[CheckContext], None]
    #: Why the check cannot run for this context (None: it can).
    blocked: Callable[[CheckContext], str | None]


def _needs_problem(ctx: CheckContext) -> str | None:
    return None if ctx.problem is not None else "the package did not load"


def _needs_public_outputs(ctx: CheckContext) -> str | None:
    if ctx.problem is None:
        return "the package did not load"
    return None if ctx.public_outputs() is not None else "the reference failed on a public case"


def _needs_reference_outputs(ctx: CheckContext) -> str | None:
    if ctx.problem is None:
        return "the package did not load"
    return None if ctx.reference_outputs is not None else "the reference did not run"


def _needs_working_reference(ctx: CheckContext) -> str | None:
    if ctx.problem is None:
        return "the package did not load"
    return None if ctx.reference_ok else "the reference failed (the reference check says where)"


def _needs_backend(ctx: CheckContext) -> str | None:
    if ctx.problem is None:
        return "the package did not load"
    if ctx.backend is None:
        return "solutions not graded (--skip-solutions, or no sandbox backend given)"
    if not ctx.reference_ok:
        return "the reference failed, so every solution would be graded internal_error"
    return None


def _needs_platform(ctx: CheckContext) -> str | None:
    if ctx.platform is None or ctx.platform_run is None:
        return "no --backend to run on (the CPU's figures are the solutions and margins checks')"
    if ctx.problem is None:
        return "the package did not load"
    return (
        None if ctx.reference_ok else "the reference failed on the CPU, so there is nothing to compare with"
    )


def _needs_grades(ctx: CheckContext) -> str | None:
    return None if any(g.result is not None for g in ctx.grades) else "no solution was graded"


STEPS: tuple[Step, ...] = (
    Step(spec_check.NAME, spec_check.check, lambda ctx: None),
    Step(rules_check.NAME, rules_check.check, _needs_problem),
    Step(statement_check.NAME, statement_check.check, _needs_problem),
    Step(starter_check.NAME, starter_check.check, _needs_problem),
    Step(requirements_check.NAME, requirements_check.check, _needs_problem),
    Step(cases_check.NAME, cases_check.check, _needs_problem),
    Step(reach_check.NAME, reach_check.check, _needs_problem),
    Step(promises_check.NAME, promises_check.check, _needs_problem),
    Step(reference_check.NAME, reference_check.check, _needs_problem),
    Step(accuracy_check.NAME, accuracy_check.check, _needs_reference_outputs),
    Step(order_check.NAME, order_check.check, _needs_working_reference),
    Step(examples_check.NAME, examples_check.check, _needs_public_outputs),
    Step(coverage_check.NAME, coverage_check.check, _needs_problem),
    Step(lookalikes_check.NAME, lookalikes_check.check, _needs_problem),
    Step(mistakes_check.NAME, mistakes_check.check, _needs_problem),
    Step(solutions_check.NAME, solutions_check.check, _needs_backend),
    Step(margins.NAME, margins.check, _needs_grades),
    Step(cost_check.NAME, cost_check.check, _needs_grades),
    Step(backend_check.NAME, backend_check.check, _needs_platform),
)
CHECK_NAMES = tuple(step.name for step in STEPS)


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    findings: tuple[Finding, ...]
    elapsed_s: float
    #: Why the check did not run (it may still carry findings another check made for it).
    skipped: str | None = None
    #: Facts the check reports (neither errors nor warnings).
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> int:
        return tally(self.findings, Severity.ERROR)

    @property
    def warnings(self) -> int:
        return tally(self.findings, Severity.WARNING)

    @property
    def status(self) -> str:
        if self.errors:
            return "failed"
        if self.skipped is not None:
            return "skipped"
        return "warned" if self.warnings else "passed"


@dataclass(frozen=True)
class ProblemReport:
    problem: str
    root: Path
    checks: tuple[CheckOutcome, ...]
    margins: tuple[MarginRow, ...]
    elapsed_s: float
    #: Every graded solution (and the starter), in the order graded.
    grades: tuple[SolutionGrade, ...] = ()
    #: What the margins check wanted, per dtype of the problem's cases.
    targets: tuple[MarginTarget, ...] = ()

    @property
    def findings(self) -> list[Finding]:
        return [f for c in self.checks for f in c.findings]

    @property
    def judge_failures(self) -> list[str]:
        """The judge's own failures: solutions it could not grade after retries, as "name: why"."""
        return [f"{self.problem}: {g.name}: {g.error}" for g in self.grades if g.judge_failed]

    def grade_of(self, file: Path) -> SolutionGrade:
        """The grading of one solution file."""
        return next(g for g in self.grades if g.file == file.resolve())

    def check(self, name: str) -> CheckOutcome:
        return next(c for c in self.checks if c.name == name)


@dataclass(frozen=True)
class CheckReport:
    problems: tuple[ProblemReport, ...]
    werror: bool = False

    @property
    def findings(self) -> list[Finding]:
        return [f for p in self.problems for f in p.findings]

    @property
    def errors(self) -> int:
        return tally(self.findings, Severity.ERROR)

    @property
    def warnings(self) -> int:
        return tally(self.findings, Severity.WARNING)

    @property
    def judge_failures(self) -> list[str]:
        return [f for p in self.problems for f in p.judge_failures]

    @property
    def ok(self) -> bool:
        return self.errors == 0 and not (self.werror and self.warnings) and not self.judge_failures

    @property
    def exit_code(self) -> int:
        """0 clean, 1 findings, ``EXIT_JUDGE_FAILED`` when the judge itself failed to grade a solution (the
        package is then not known to be at fault: run the check again)."""
        if self.judge_failures:
            return EXIT_JUDGE_FAILED
        return 0 if self.ok else 1


def problem_dirs(paths: Sequence[Path], problems_dir: Path | None = None) -> list[Path]:
    """The folders to check: the given ones (a bare slug names a folder of the problems folder), or every
    folder of the problems folder (those without a problem.toml too, so a forgotten one is reported)."""
    roots, unknown = resolve_problem_dirs(paths, problems_dir)
    return roots + [Path(name).resolve() for name in unknown]


def resolve_problem_dirs(
    paths: Sequence[Path], problems_dir: Path | None = None
) -> tuple[list[Path], list[str]]:
    """(folders to check, names given that are neither a folder nor a slug of the problems folder).

    No names: every folder of the problems folder that does not start with ``.`` or ``_``."""
    base = (problems_dir or default_problems_dir()).resolve()
    if not paths:
        if not base.is_dir():
            return [], []
        return [p for p in sorted(base.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))], []
    found: list[Path] = []
    unknown: list[str] = []
    for path in paths:
        if (base / path).is_dir() and not path.is_absolute() and len(path.parts) == 1:
            found.append((base / path).resolve())
        elif path.is_dir():
            found.append(path.resolve())
        else:
            unknown.append(str(path))
    return found, unknown


def known_problems(problems_dir: Path | None = None) -> list[str]:
    """The slugs of the problems folder: its folders that hold a problem.toml."""
    base = (problems_dir or default_problems_dir()).resolve()
    if not base.is_dir():
        return []
    return [p.name for p in sorted(base.iterdir()) if (p / "problem.toml").is_file()]


def check_problem(
    root: Path,
    *,
    backend: Backend | None = None,
    concurrency: int = 2,
    slot_base: int = 0,
    progress: Progress | None = None,
    separate_runs: bool = True,
    platform: str | None = None,
    platform_run: PlatformRun | None = None,
) -> ProblemReport:
    """Run every check on one problem folder (``separate_runs``: also run the reference in two processes
    with different hash seeds; only tests of other checks turn it off, to save the time)."""
    root = root.resolve()
    started = time.monotonic()
    diag = Diagnostics(problem=root.name, base=root.parent.parent)
    ctx = CheckContext(
        root=root,
        diag=diag,
        backend=backend,
        concurrency=concurrency,
        slot_base=slot_base,
        separate_runs=separate_runs,
        progress=progress,
        platform=platform,
        platform_run=platform_run,
    )
    timings: dict[str, float] = {}
    skipped: dict[str, str] = {}
    for step in STEPS:
        reason = step.blocked(ctx)
        if reason is not None:
            skipped[step.name] = reason
            continue
        diag.check = step.name
        began = time.monotonic()
        step.run(ctx)
        timings[step.name] = time.monotonic() - began
        if progress is not None:
            errors = tally(diag.of(step.name), Severity.ERROR)
            progress(
                f"{root.name}: {step.name} {'failed' if errors else 'done'} in {timings[step.name]:.1f} s"
            )
    outcomes = tuple(
        CheckOutcome(
            step.name,
            tuple(diag.of(step.name)),
            round(timings.get(step.name, 0.0), 3),
            skipped.get(step.name),
            tuple(diag.notes_of(step.name)),
        )
        for step in STEPS
    )
    return ProblemReport(
        root.name,
        root,
        outcomes,
        tuple(ctx.margins),
        round(time.monotonic() - started, 3),
        tuple(ctx.grades),
        tuple(ctx.targets),
    )


def run_checks(
    roots: Sequence[Path],
    *,
    backend: Backend | None = None,
    concurrency: int = 2,
    slot_base: int = 0,
    werror: bool = False,
    progress: Progress | None = None,
    separate_runs: bool = True,
    platform: str | None = None,
) -> CheckReport:
    """Check every problem folder in ``roots``, one after the other. ``platform``: also run the references
    and shipped value solutions on that JAX platform (``judge.check.backend_run``: one process for every
    problem, started first, running beside the CPU's checks) and report them per backend (the ``backend``
    check, which waits for it)."""
    # The platform run's folder only when there is one: a check killed by its caller (a time limit, a
    # session's end) removes nothing, and most checks run on the CPU alone.
    with contextlib.ExitStack() as stack:
        run = None
        if platform is not None:
            temp = stack.enter_context(tempfile.TemporaryDirectory(prefix="judge-backend-"))
            run = PlatformRun.start(platform, Path(temp), roots, progress)
        try:
            reports = tuple(
                check_problem(
                    root,
                    backend=backend,
                    concurrency=concurrency,
                    slot_base=slot_base,
                    progress=progress,
                    separate_runs=separate_runs,
                    platform=platform,
                    platform_run=run,
                )
                for root in roots
            )
        finally:
            if run is not None:
                run.stop()
    return CheckReport(reports, werror=werror)
