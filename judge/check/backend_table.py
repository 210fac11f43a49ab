"""The per-backend summary of a ``judge check --backend PLATFORM --format json`` report, as the Markdown
table docs/accelerators.md holds: ``python -m judge.check.backend_table REPORT.json [PROBLEMS_DIR]``.

One row per problem: how many cases put the reference on the platform outside the tolerance of the
expected output, how many accepted solutions pass every case there, how many wrong answers are still
rejected there (by values, or by the sandbox's other checks, which hold on every backend), the worst
accepted error in tolerances, and what the problem's spec declares for accelerators
(``spec_settings``).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.core.spec import ProblemSpec

HEADER = (
    "| problem | reference outside tolerance | accepted passing | wrong answers rejected | worst accepted "
    "| spec settings |"
)


@dataclass(frozen=True)
class BackendSummary:
    problem: str
    platform: str
    #: Cases where the reference on the platform is outside the tolerance, of all cases.
    reference_outside: int
    cases: int
    accepted_passing: int
    accepted: int
    #: Wrong answers rejected there by values, plus those whose values pass but which the sandbox's other
    #: checks reject on every backend (``sandbox_rejected``).
    wrong_rejected: int
    wrong: int
    sandbox_rejected: int
    #: The largest error of an accepted solution there, in tolerances (None: none measured).
    worst_accepted: float | None
    #: Why the problem has no figures there (several devices), else None.
    skipped: str | None = None
    #: Wrong answers accepted there whose values are the reference's own there, bit for bit, as the spec
    #: declares (``[compare.backend.<name>] same_as_reference``): not counted as rejected.
    same_as_reference: int = 0


def summaries(report: dict[str, Any]) -> list[BackendSummary]:
    """Every problem's summary on the platform of the report's ``backend`` rows (none: no such rows)."""
    out = []
    for problem in report["problems"]:
        margins = problem["margins"]
        # The backend check's rows come last, its reference row first (the sandboxed grading has none).
        start = next((i for i, r in enumerate(margins) if r["solution"] == "reference"), len(margins))
        rows = margins[start:]
        check = next((c for c in problem["checks"] if c["name"] == "backend"), None)
        skipped = next((n for n in (check or {}).get("notes", []) if ": not run: " in n), None)
        if not rows:
            out.append(
                BackendSummary(problem["problem"], "-", 0, 0, 0, 0, 0, 0, 0, None, skipped or "no run")
            )
            continue
        platform = rows[0].get("backend", "cpu")
        notes = (check or {}).get("notes", [])
        ref = next(r for r in rows if r["solution"] == "reference")
        accepted = [r for r in rows if r["expected"] == "accepted" and r["solution"] != "reference"]
        wrong = [r for r in rows if r["expected"] == "wrong_answer"]
        by_sandbox = [r for r in wrong if r["verdict"] == "accepted" and _noted(notes, r, SANDBOX_NOTE)]
        same = [r for r in wrong if r["verdict"] == "accepted" and _noted(notes, r, SAME_NOTE)]
        ratios = [_ratio(r["ratio"]) for r in accepted if r["ratio"] is not None]
        out.append(
            BackendSummary(
                problem["problem"],
                platform,
                ref["rejecting"] if ref["verdict"] != "accepted" else 0,
                ref["cases"],
                sum(r["verdict"] == "accepted" for r in accepted),
                len(accepted),
                sum(r["verdict"] == "wrong_answer" for r in wrong) + len(by_sandbox),
                len(wrong),
                len(by_sandbox),
                max(ratios, default=None),
                same_as_reference=len(same),
            )
        )
    return out


#: What the backend check's note says of a wrong answer the sandbox's other checks reject, and of one
#: whose values are the reference's own on the backend (``judge.check.backend_check._wrong_row``).
SANDBOX_NOTE = "the sandboxed grading's other checks"
SAME_NOTE = "the reference's own there, bit for bit"


def _noted(notes: list[str], row: dict[str, Any], words: str) -> bool:
    return any(n.startswith(row["solution"] + ":") and words in n for n in notes)


def _ratio(value: Any) -> float:
    return math.inf if value == "inf" else float(value)


def spec_settings(spec: ProblemSpec) -> str:
    """What a spec declares for accelerators: ``matmul_precision highest``, ``tpu: float32 rtol 3e-05``,
    or ``none``."""
    parts = []
    if spec.compare.matmul_precision is not None:
        parts.append(f"matmul_precision {spec.compare.matmul_precision}")
    for name, over in sorted(spec.compare.backend.items()):
        for dtype, bounds in sorted(over.tolerance.items()):
            fields = ", ".join(f"{k} {v:g}" for k, v in bounds.model_dump(exclude_none=True).items())
            parts.append(f"{name}: {dtype} {fields}")
        parts += [f"{name}: same as the reference: {file}" for file in sorted(over.same_as_reference)]
    return "; ".join(parts) or "none"


def markdown(rows: list[BackendSummary], settings: dict[str, str]) -> str:
    lines = [HEADER, "| --- | --- | --- | --- | --- | --- |"]
    for s in rows:
        if s.skipped:
            lines.append(
                f"| {s.problem} | not run: {s.skipped} | - | - | - | {settings.get(s.problem, '-')} |"
            )
            continue
        worst = "-" if s.worst_accepted is None else f"{s.worst_accepted:.3g}x"
        notes = [f"{s.sandbox_rejected} by the sandbox"] if s.sandbox_rejected else []
        if s.same_as_reference:
            notes.append(f"{s.same_as_reference} the reference's own values there, declared")
        wrong = f"{s.wrong_rejected}/{s.wrong}" + (f" ({'; '.join(notes)})" if notes else "")
        accepted = f"{s.accepted_passing}/{s.accepted}"
        lines.append(
            f"| {s.problem} | {s.reference_outside} of {s.cases} | {accepted} | {wrong} | {worst} "
            f"| {settings.get(s.problem, '-')} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python -m judge.check.backend_table REPORT.json [PROBLEMS_DIR]", file=sys.stderr)
        return 2
    from judge.core.problems import default_problems_dir, load_problem

    report = json.loads(Path(argv[0]).read_text())
    base = Path(argv[1]) if len(argv) == 2 else default_problems_dir()
    rows = summaries(report)
    settings = {}
    for s in rows:
        try:
            settings[s.problem] = spec_settings(load_problem(base / s.problem).spec)
        except Exception:
            settings[s.problem] = "-"
    print(markdown(rows, settings))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
