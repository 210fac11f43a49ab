"""Findings of ``judge check`` and the collector the checks report into.

A finding names the check that made it, the problem, where (the file, and the field or case in it) and
what is wrong. Errors fail the check; warnings fail it only with ``--werror`` (problemtools'
``diagnostics.py`` works the same way).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    severity: Severity
    #: The check that made the finding, e.g. ``"reference"``.
    check: str
    #: The problem's slug (its folder name).
    problem: str
    #: The file relative to the folder above ``problems/``, and the field or case in it:
    #: ``problems/sgd-momentum/cases/hidden.json: case bf16_large``.
    where: str
    message: str
    #: The file as an absolute path (for CI annotations), when the finding concerns one.
    file: str | None = None
    #: The 1-based line in ``file``, when known.
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.severity.value}[{self.check}] {self.where}: {self.message}"


def tally(findings: Iterable[Finding], severity: Severity) -> int:
    """How many of ``findings`` have ``severity``."""
    return sum(f.severity is severity for f in findings)


@dataclass
class Diagnostics:
    """Collects the findings of one problem; ``check`` is the check currently running."""

    problem: str
    #: Paths in findings are shown relative to this folder (the one holding ``problems/``).
    base: Path
    check: str = ""
    findings: list[Finding] = field(default_factory=list)
    #: (check, message): facts a check reports that are neither errors nor warnings, e.g. what the hidden
    #: cases cover.
    notes: list[tuple[str, str]] = field(default_factory=list)

    def note(self, message: str) -> None:
        self.notes.append((self.check, message))

    def notes_of(self, check: str) -> list[str]:
        return [message for owner, message in self.notes if owner == check]

    def where(self, file: Path | None, at: str = "") -> str:
        shown = "" if file is None else self.relative(file)
        if shown and at:
            return f"{shown}: {at}"
        return shown or at or self.problem

    def relative(self, file: Path) -> str:
        try:
            return Path(os.path.relpath(file, self.base)).as_posix()
        except ValueError:
            return str(file)

    def add(
        self,
        severity: Severity,
        message: str,
        *,
        file: Path | None = None,
        at: str = "",
        line: int | None = None,
        check: str | None = None,
    ) -> Finding:
        finding = Finding(
            severity=severity,
            check=check or self.check,
            problem=self.problem,
            where=self.where(file, at),
            message=message,
            file=None if file is None else str(file),
            line=line,
        )
        self.findings.append(finding)
        return finding

    def error(
        self,
        message: str,
        *,
        file: Path | None = None,
        at: str = "",
        line: int | None = None,
        check: str | None = None,
    ) -> Finding:
        return self.add(Severity.ERROR, message, file=file, at=at, line=line, check=check)

    def warning(
        self,
        message: str,
        *,
        file: Path | None = None,
        at: str = "",
        line: int | None = None,
        check: str | None = None,
    ) -> Finding:
        return self.add(Severity.WARNING, message, file=file, at=at, line=line, check=check)

    def of(self, check: str) -> list[Finding]:
        return [f for f in self.findings if f.check == check]
