"""Human-readable reports of a grade (the CLI's default output).

User code controls much of what a report shows (its prints, its exception messages, the keys of its
output), so the finished text goes through ``judge.feedback.display.escape_text``: no escape sequence,
carriage return or lone surrogate from a submission reaches the terminal.
"""

from __future__ import annotations

from judge.core.problems import Problem
from judge.core.results import CaseResult, GradeResult
from judge.core.verdicts import Verdict
from judge.feedback.display import escape_text

_MARK = {Verdict.ACCEPTED: "ok", Verdict.NOT_RUN: "--"}


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _indent(text: str, prefix: str) -> str:
    # Split on newlines only: str.splitlines() would also break at a carriage return or a form feed, which
    # the escaping must see to make visible.
    return "\n".join(prefix + line for line in text.rstrip("\n").split("\n"))


def format_inputs(problem: Problem, case: CaseResult) -> str:
    from judge.core.pytree_json import format_value

    if case.input is None:
        return ""
    parts = []
    for arg in problem.spec.args:
        if arg.name in case.input:
            value = case.input[arg.name]
            parts.append(
                f"{arg.name} = {format_value(value) if not isinstance(value, float | int) else value}"
            )
    return ", ".join(parts)


def format_output_label(problem: Problem) -> str:
    names = problem.spec.output.names
    return f"({', '.join(names)})" if problem.spec.output.kind == "tuple" and names else "output"


def _ratio(case: CaseResult) -> str:
    """The case's largest error in tolerances (``inf`` for a structure, shape or dtype mismatch)."""
    if case.error_ratio is None:
        return "-"
    return f"{case.error_ratio:.3g}x"


def text_report(problem: Problem, result: GradeResult, *, reveal: bool = False) -> str:
    """The report as terminal-safe text: only newlines and tabs act on the display. ``reveal`` (the author's
    ``judge grade --reveal``, on a result graded with ``author=True``) adds each case's error ratio, hidden
    cases included, so an author sees how far every case is from its tolerance."""
    lines = [
        f"{problem.slug}: {result.verdict.value.upper()}  ({result.passed}/{result.total} cases passed, "
        f"{result.elapsed_ms / 1000:.2f} s, sandbox {result.backend})",
    ]
    if result.message and result.verdict is not Verdict.ACCEPTED:
        lines += ["", _indent(result.message, "  ")]
    names = [f"{case.name} ({case.visibility})" for case in result.cases]
    # The case column is as wide as the longest name, so long case names keep the columns aligned.
    width = max([28, *map(len, names)])
    ratio_head = f" {'err/tol':>9}" if reveal else ""
    lines += ["", f"  {'case':<{width}} {'verdict':<22} {'compile':>9} {'run':>9}{ratio_head}"]
    for case, name in zip(result.cases, names, strict=True):
        ratio = f" {_ratio(case):>9}" if reveal else ""
        times = f"{_ms(case.compile_ms):>9} {_ms(case.run_ms):>9}"
        lines.append(f"  {name:<{width}} {case.verdict.value:<22} {times}{ratio}")
        if case.verdict not in (Verdict.ACCEPTED, Verdict.NOT_RUN) and case.message:
            lines.append(_indent(case.message, "      "))
        if case.input is not None and case.verdict is not Verdict.NOT_RUN:
            lines.append(f"      input:    {format_inputs(problem, case)}")
            label = format_output_label(problem)
            if case.output is not None:
                lines.append(f"      output:   {label} = {case.output.text}")
            if case.expected is not None:
                lines.append(f"      expected: {label} = {case.expected.text}")
    if result.stdout:
        lines += ["", "captured output:", _indent(result.stdout.rstrip("\n"), "  | ")]
    return escape_text("\n".join(lines))
