"""What the checks of one problem share: the loaded package, results earlier checks computed, the findings."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from judge.check.diagnostics import Diagnostics
from judge.core.problems import Case, Problem, import_trusted_file
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict
from sandbox.backends.base import Backend

if TYPE_CHECKING:
    from judge.check.backend_run import PlatformRun


@dataclass(frozen=True)
class SolutionGrade:
    """One graded file of ``solutions/<folder>/`` (or the starter code, folder ``""``)."""

    folder: str
    file: Path
    #: None when the judge could not grade it (``error`` says why).
    result: GradeResult | None
    error: str | None = None
    elapsed_s: float = 0.0
    #: The judge could not grade it, after retries (a worker that would not start, a sandbox unavailable,
    #: the judge's internal error): the judge's failure, never a finding on the file (``judge check`` exits
    #: ``EXIT_JUDGE_FAILED``).
    judge_failed: bool = False

    @property
    def name(self) -> str:
        return f"{self.folder}/{self.file.name}" if self.folder else self.file.name


@dataclass(frozen=True)
class MarginRow:
    """How far one accepted solution sits inside the tolerance, or one wrong one outside it."""

    solution: str
    expected: Verdict
    verdict: Verdict
    #: Cases graded, and (wrong answers) cases that reject the solution.
    cases: int
    rejecting: int
    #: Accepted: the largest error / tolerance on any case. Wrong answer: the largest separation in
    #: tolerances on a rejecting case (infinite for a structure, shape, dtype or mutation failure).
    ratio: float | None
    #: The case of ``ratio`` (the first one when several tie).
    case: str | None
    #: Wrong answer: why that case rejects it (``value``, ``structure``, ``dtype``, ``mutation``...).
    reason: str | None
    #: Accepted: the slowest case (compile + run) as a share of the per-case time limit.
    time_share: float | None
    #: Empty when fine, else why the row warns.
    warning: str = ""
    #: Wrong answer: hidden cases that reject it by their dtype's ``well_outside`` margin or more.
    strong: int = 0
    #: The backend the figures come from: ``cpu`` (the sandboxed grading), or the platform of
    #: ``judge check --backend`` (the ``backend`` check's run of the shipped solutions there).
    backend: str = "cpu"


@dataclass(frozen=True)
class MarginTarget:
    """What the margins check wants on cases of one dtype (``judge.core.spec.Tolerance``)."""

    dtype: str
    well_inside: float
    well_outside: float


@dataclass
class CheckContext:
    root: Path
    diag: Diagnostics
    #: The sandbox backend for grading solutions; None skips the solutions and margins checks.
    backend: Backend | None = None
    #: Gradings run at once (each starts its own sandboxed worker).
    concurrency: int = 2
    #: The first sandbox slot (uid) the gradings use; grading ``i`` of those running at once uses
    #: ``slot_base + i`` (or a later one if another judge process holds it).
    slot_base: int = 0
    #: Also run the reference in two separate processes with different hash seeds (``reference`` check).
    separate_runs: bool = True
    #: Where progress lines go while the checks run (one per graded solution); None: nowhere.
    progress: Callable[[str], None] | None = None
    problem: Problem | None = None
    validator: ModuleType | None = None
    #: The validator's EDGE inputs as cases (label, case), once the cases check accepted them.
    edges: list[tuple[str, Case]] = field(default_factory=list)
    #: The reference's output per case, in ``problem.cases`` order; None where it failed.
    reference_outputs: list[Any] | None = None
    reference_ok: bool = False
    grades: list[SolutionGrade] = field(default_factory=list)
    #: The JAX platform of ``judge check --backend`` (None: the CPU's sandboxed grading alone), and the
    #: run of ``judge.check.backend_run`` that writes every checked problem's results on it.
    platform: str | None = None
    platform_run: PlatformRun | None = None
    #: The reference's float64 outputs per case (``accuracy`` check), for the backend's accuracy figure.
    float64_outputs: list[Any] | None = None
    margins: list[MarginRow] = field(default_factory=list)
    targets: list[MarginTarget] = field(default_factory=list)

    @property
    def loaded(self) -> Problem:
        assert self.problem is not None, "the runner only calls this check for a loaded problem"
        return self.problem

    @cached_property
    def _case_files(self) -> dict[str, Path]:
        files: dict[str, Path] = {}
        for rel in self.loaded.spec.case_files:
            path = self.root / rel
            try:
                data = json.loads(path.read_text())
                for case in data.get("cases", []):
                    files.setdefault(str(case.get("name")), path)
            except (OSError, ValueError, AttributeError):
                continue
        return files

    def case_file(self, case: Case) -> Path | None:
        """The case file that defines ``case``."""
        return self._case_files.get(case.name)

    def public_outputs(self) -> list[Any] | None:
        """Reference outputs of the public cases, or None if any of them is missing."""
        if self.reference_outputs is None:
            return None
        outputs = [
            out
            for case, out in zip(self.loaded.cases, self.reference_outputs, strict=True)
            if not case.hidden
        ]
        return None if any(out is None for out in outputs) else outputs


def import_file(path: Path, prefix: str) -> ModuleType:
    """Import a trusted repository file (a validator, a case generator) as a fresh module.

    Raises whatever the module raises while it runs; ``FileNotFoundError`` when it is missing.
    """
    return import_trusted_file(path, prefix)
