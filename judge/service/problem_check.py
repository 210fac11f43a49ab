"""``judge check`` of a pushed problem version, in a process of its own (never in the judge's process:
the package's reference, validator and generators are the uploader's code until the check passed).

The child is ``python -m judge check --problems <unpacked>/problems <slug> --format json``, with the
service's sandbox settings (it grades the package's solutions there, unless ``problem_check_solutions``
is off), bounded by ``problem_check_timeout_s``. Its JSON report gives the findings; a child that fails
in any other way (killed, timed out, no JSON) rejects the version with a finding that says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.core.settings import Settings

#: Most findings kept with a version (the rest are counted in a last one).
MAX_FINDINGS = 200


@dataclass(frozen=True)
class CheckOutcome:
    """Whether the version may go live, and what the check found (errors and warnings)."""

    passed: bool
    findings: list[dict[str, Any]]


def check_command(settings: Settings, problems_dir: Path, slug: str) -> list[str]:
    command = [
        sys.executable, "-m", "judge", "check", "--problems", str(problems_dir), slug,
        "--format", "json", "--quiet", "--backend", "none",
    ]  # fmt: skip
    if settings.problem_check_solutions:
        command += ["--sandbox", settings.sandbox] + (["--insecure"] if settings.insecure else [])
    else:
        command.append("--skip-solutions")
    return command


def run_check(
    settings: Settings,
    problems_dir: Path,
    slug: str,
    track: Callable[[subprocess.Popen[bytes] | None], None] | None = None,
) -> CheckOutcome:
    """Run ``judge check`` on ``problems_dir/slug`` in a child process; never raises. ``track(child)``
    when it starts and ``track(None)`` when it is over, so the service can kill it at shutdown."""
    try:
        child = subprocess.Popen(
            check_command(settings, problems_dir, slug),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=problems_dir.parent,
            env={**os.environ, "JUDGE_PROBLEMS_DIR": str(problems_dir)},
        )
    except OSError as exc:
        return _failed(f"judge check could not start ({type(exc).__name__})")
    if track is not None:
        track(child)
    try:
        stdout, _ = child.communicate(timeout=settings.problem_check_timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        limit = settings.problem_check_timeout_s
        return _failed(f"judge check took longer than problem_check_timeout_s ({limit:g} s)")
    finally:
        if track is not None:
            track(None)
    return outcome(child.returncode, stdout)


def outcome(returncode: int, stdout: bytes) -> CheckOutcome:
    """The outcome of a check from its exit status and JSON report (pure)."""
    try:
        report = json.loads(stdout)
    except ValueError:
        return _failed(f"judge check exited with status {returncode} without a report")
    if not isinstance(report, dict):
        return _failed(f"judge check exited with status {returncode} without a report")
    findings: list[dict[str, Any]] = []
    for problem in report.get("problems") or []:
        for check in problem.get("checks") or []:
            for finding in check.get("findings") or []:
                findings.append(
                    {
                        "check": str(finding.get("check") or check.get("name")),
                        "severity": str(finding.get("severity")),
                        "where": str(finding.get("where") or ""),
                        "message": str(finding.get("message") or "")[:2000],
                    }
                )
    error = report.get("error")
    if isinstance(error, dict):  # a usage error of the check itself: {"error": {"code", "message"}}
        findings.append(
            {"check": "check", "severity": "error", "where": "", "message": str(error.get("message"))}
        )
    for failure in report.get("judge_failures") or []:
        findings.append({"check": "judge", "severity": "error", "where": "", "message": str(failure)[:2000]})
    if len(findings) > MAX_FINDINGS:
        dropped = len(findings) - MAX_FINDINGS + 1
        note = {
            "check": "check",
            "severity": "note",
            "where": "",
            "message": f"{dropped} more findings not kept",
        }
        findings = [*findings[: MAX_FINDINGS - 1], note]
    passed = returncode == 0 and bool(report.get("ok"))
    if not passed and not findings:
        findings.append(
            {
                "check": "check",
                "severity": "error",
                "where": "",
                "message": f"judge check failed (status {returncode})",
            }
        )
    return CheckOutcome(passed, findings)


def _failed(message: str) -> CheckOutcome:
    return CheckOutcome(False, [{"check": "check", "severity": "error", "where": "", "message": message}])
