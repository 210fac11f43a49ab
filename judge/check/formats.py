"""Print a ``CheckReport``: text for people, JSON, JUnit XML (each check a test case) and GitHub Actions
workflow commands (each finding an annotation on its file and line), plus a Markdown job summary."""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from judge.check.context import MarginRow, MarginTarget
from judge.check.diagnostics import Finding, Severity
from judge.check.margins import STRONG_KILLS
from judge.check.runner import CheckOutcome, CheckReport, ProblemReport
from judge.core.verdicts import Verdict
from judge.feedback.display import escape_text, strict_json

FORMATS = ("text", "json", "junit", "github")

_STATUS = {"passed": "ok", "warned": "warn", "failed": "FAIL", "skipped": "skip"}


def render(report: CheckReport, fmt: str) -> str:
    if fmt == "text":
        return text(report)
    if fmt == "json":
        return strict_json(to_json(report), indent=2)
    if fmt == "junit":
        return junit(report)
    if fmt == "github":
        return github(report)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


# ------------------------------------------------------------------------------------------------ text


def _ratio(value: float | None) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value:.2g}x" if value < 100 else f"{value:.1e}x"


def margin_cells(row: MarginRow) -> list[str]:
    """backend, solution, verdict, cases, margin, at case, time, note."""
    if row.expected is Verdict.ACCEPTED:
        cases = f"{row.cases}"
        margin = f"max err {_ratio(row.ratio)} tol"
    else:
        cases = f"{row.rejecting}/{row.cases} reject, {row.strong} strong"
        if row.ratio is not None and math.isinf(row.ratio):
            margin = f"{row.reason or 'failure'} (inf)"
        else:
            margin = f"best {_ratio(row.ratio)} tol"
    time = "-" if row.time_share is None else f"{row.time_share:.0%}"
    note = "WARN" if row.warning else ("" if row.verdict is row.expected else f"got {row.verdict.value}")
    return [row.backend, row.solution, row.verdict.value, cases, margin, row.case or "-", time, note]


MARGIN_HEADER = ["backend", "solution", "verdict", "cases", "margin", "at case", "time", "note"]


def margin_targets(targets: Sequence[MarginTarget]) -> str:
    """``accepted want max err < 0.1x tol (float32), 0.7x (bfloat16); wrong_answer want 2+ hidden ...``."""
    inside = ", ".join(f"{t.well_inside:g}x ({t.dtype})" for t in targets) or "-"
    outside = ", ".join(f"{t.well_outside:g}x ({t.dtype})" for t in targets) or "-"
    return (
        f"accepted want max err < {inside} tol; wrong_answer want {STRONG_KILLS}+ hidden cases (strong) at "
        f">= {outside} tol; time = slowest case / case limit"
    )


def margin_table(
    rows: Sequence[MarginRow], indent: str = "  ", targets: Sequence[MarginTarget] = ()
) -> list[str]:
    if not rows:
        return []
    table = [MARGIN_HEADER, *(margin_cells(r) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(MARGIN_HEADER))]
    lines = [f"{indent}margins: {margin_targets(targets)}"]
    for row in table:
        lines.append(indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return lines


def _finding_line(finding: Finding) -> str:
    return f"{finding.severity.value}: {finding.location}: {finding.message}"


def _outcome_line(outcome: CheckOutcome) -> str:
    counts = []
    if outcome.errors:
        counts.append(f"{outcome.errors} error{'s' * (outcome.errors > 1)}")
    if outcome.warnings:
        counts.append(f"{outcome.warnings} warning{'s' * (outcome.warnings > 1)}")
    detail = ", ".join(counts)
    if outcome.skipped is not None:
        detail = f"{detail + '; ' if detail else ''}skipped: {outcome.skipped}"
    elapsed = f"{outcome.elapsed_s:6.1f} s" if outcome.skipped is None else " " * 8
    return f"  {_STATUS[outcome.status]:<5} {outcome.name:<10} {elapsed}  {detail}".rstrip()


def text(report: CheckReport) -> str:
    lines: list[str] = []
    for problem in report.problems:
        lines.append(f"{problem.problem}  ({problem.elapsed_s:.1f} s)")
        for outcome in problem.checks:
            lines.append(_outcome_line(outcome))
            lines += [f"          note: {note}" for note in outcome.notes]
            for finding in outcome.findings:
                first, *rest = _finding_line(finding).split("\n")
                lines += [f"          {first}", *(f"            {line}" for line in rest)]
        table = margin_table(problem.margins, targets=problem.targets)
        if table:
            lines += ["", *table]
        lines.append("")
    lines.append(summary(report))
    return escape_text("\n".join(lines))


def summary(report: CheckReport) -> str:
    n = len(report.problems)
    verdict = "OK" if report.ok else "FAILED"
    werror = " (--werror: warnings count as errors)" if report.werror and report.warnings else ""
    line = (
        f"{n} problem{'s' * (n != 1)} checked: {report.errors} error{'s' * (report.errors != 1)}, "
        f"{report.warnings} warning{'s' * (report.warnings != 1)}{werror} -> {verdict}"
    )
    failures = report.judge_failures
    if not failures:
        return line
    told = [
        f"the judge failed: it could not grade {len(failures)} solution{'s' * (len(failures) != 1)} even "
        "after retries (its own failure, not the package's; run the check again):",
        *(f"  {failure}" for failure in failures),
    ]
    return "\n".join([*told, line])


# ------------------------------------------------------------------------------------------------ json


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "severity": finding.severity.value,
        "check": finding.check,
        "problem": finding.problem,
        "where": finding.where,
        "location": finding.location,
        "message": finding.message,
        "file": finding.file,
        "path": finding.path or None,
        "line": finding.line,
    }


def _margin_json(row: MarginRow) -> dict[str, Any]:
    ratio = None if row.ratio is None else ("inf" if math.isinf(row.ratio) else row.ratio)
    return {
        "solution": row.solution,
        "backend": row.backend,
        "expected": row.expected.value,
        "verdict": row.verdict.value,
        "cases": row.cases,
        "rejecting": row.rejecting,
        "strong": row.strong,
        "ratio": ratio,
        "case": row.case,
        "reason": row.reason,
        "time_share": row.time_share,
        "warning": row.warning or None,
    }


def to_json(report: CheckReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "errors": report.errors,
        "warnings": report.warnings,
        "werror": report.werror,
        "judge_failures": report.judge_failures,
        "problems": [
            {
                "problem": p.problem,
                "root": str(p.root),
                "elapsed_s": p.elapsed_s,
                "checks": [
                    {
                        "name": c.name,
                        "status": c.status,
                        "elapsed_s": c.elapsed_s,
                        "skipped": c.skipped,
                        "notes": list(c.notes),
                        "findings": [_finding_json(f) for f in c.findings],
                    }
                    for c in p.checks
                ],
                "margins": [_margin_json(r) for r in p.margins],
                "margin_targets": [
                    {"dtype": t.dtype, "well_inside": t.well_inside, "well_outside": t.well_outside}
                    for t in p.targets
                ],
            }
            for p in report.problems
        ],
    }


# ----------------------------------------------------------------------------------------------- junit


def _fails(finding: Finding, werror: bool) -> bool:
    return finding.severity is Severity.ERROR or werror


def _suite(problem: ProblemReport, werror: bool) -> ET.Element:
    suite = ET.Element("testsuite", name=f"judge check {problem.problem}", time=f"{problem.elapsed_s:.3f}")
    failures = skipped = 0
    for outcome in problem.checks:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"judge.check.{problem.problem}",
            name=outcome.name,
            time=f"{outcome.elapsed_s:.3f}",
        )
        failing = [f for f in outcome.findings if _fails(f, werror)]
        other = [f for f in outcome.findings if not _fails(f, werror)]
        if failing:
            failures += 1
            failure = ET.SubElement(
                case, "failure", message=_finding_line(failing[0])[:500], type=failing[0].severity.value
            )
            failure.text = "\n".join(_finding_line(f) for f in outcome.findings)
        elif outcome.skipped is not None:
            skipped += 1
            ET.SubElement(case, "skipped", message=outcome.skipped)
        shown = [*(f"note: {n}" for n in outcome.notes), *(_finding_line(f) for f in other if not failing)]
        if shown:
            ET.SubElement(case, "system-out").text = "\n".join(shown)
    table = margin_table(problem.margins, indent="", targets=problem.targets)
    if table:
        ET.SubElement(suite, "system-out").text = "\n".join(table)
    suite.set("tests", str(len(problem.checks)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    return suite


def junit(report: CheckReport) -> str:
    root = ET.Element("testsuites", name="judge check")
    suites = [_suite(p, report.werror) for p in report.problems]
    root.extend(suites)
    root.set("tests", str(sum(int(s.get("tests", "0")) for s in suites)))
    root.set("failures", str(sum(int(s.get("failures", "0")) for s in suites)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------------------------- github


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, werror: bool = False) -> str:
    """One workflow command: ``::error file=...,line=...,title=...::message``."""
    level = "error" if finding.severity is Severity.ERROR or werror else "warning"
    props = []
    if finding.file is not None:
        path = os.path.relpath(finding.file) if os.path.isabs(finding.file) else finding.file
        if path.startswith(".."):
            path = finding.file
        props.append(f"file={_escape_property(path)}")
        if finding.line is not None:
            props.append(f"line={finding.line}")
    props.append(f"title={_escape_property(f'judge check {finding.problem}: {finding.check}')}")
    return f"::{level} {','.join(props)}::{_escape_data(f'{finding.location}: {finding.message}')}"


def github(report: CheckReport) -> str:
    """Annotations for every finding, then the text report (the job log shows both)."""
    lines = [annotation(f, report.werror) for f in report.findings]
    return "\n".join([*lines, text(report)])


def markdown_summary(report: CheckReport) -> str:
    """A Markdown job summary (``$GITHUB_STEP_SUMMARY``): status per check and the margin tables."""
    out = [f"## judge check: {'passed' if report.ok else 'failed'}", "", summary(report), ""]
    for problem in report.problems:
        out += [f"### {problem.problem}", "", "| check | status | findings |", "| --- | --- | --- |"]
        for c in problem.checks:
            lines = [*(f"note: {n}" for n in c.notes), *(_finding_line(f) for f in c.findings)]
            found = "<br>".join(line.replace("|", "\\|") for line in lines) or (c.skipped or "")
            out.append(f"| {c.name} | {c.status} | {found} |")
        if problem.margins:
            out += ["", margin_targets(problem.targets)]
            out += ["", "| " + " | ".join(MARGIN_HEADER) + " |", "|" + " --- |" * len(MARGIN_HEADER)]
            out += [
                "| " + " | ".join(cell.replace("|", "\\|") for cell in margin_cells(r)) + " |"
                for r in problem.margins
            ]
        out.append("")
    return "\n".join(out)
