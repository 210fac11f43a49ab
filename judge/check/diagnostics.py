"""Findings of ``judge check`` and the collector the checks report into.

A finding names the check that made it, the problem, where (the file, and the field or case in it) and
what is wrong. Errors fail the check; warnings fail it only with ``--werror`` (problemtools'
``diagnostics.py`` works the same way).
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from judge.authoring.positions import json_lines, line_of, toml_lines


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
    #: The 1-based line in ``file``, when known (always, for a finding on a file that exists).
    line: int | None = None
    #: ``file`` as shown (relative to the folder above ``problems/``), and the field or case in it.
    path: str = ""
    at: str = ""

    @property
    def location(self) -> str:
        """``problems/x/problem.toml:12: limits.case_time_s``: the file, its line and the field."""
        if not self.path:  # a finding made without Diagnostics: ``where`` is all there is
            return self.where
        shown = f"{self.path}:{self.line}" if self.line is not None else self.path
        if self.at and self.at != f"line {self.line}":
            return f"{shown}: {self.at}"
        return shown

    def __str__(self) -> str:
        return f"{self.severity.value}[{self.check}] {self.location}: {self.message}"


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

    #: The function the problem declares, so a finding on a Python file without a line of its own points
    #: at its ``def`` (set once the spec loads).
    function: str = ""

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
        if line is None and file is not None:
            line = locate(file, at, self.function)
        finding = Finding(
            severity=severity,
            check=check or self.check,
            problem=self.problem,
            where=self.where(file, at),
            message=message,
            file=None if file is None else str(file),
            line=line,
            path="" if file is None else self.relative(file),
            at=at,
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


# ------------------------------------------------------------------------------------------------ lines

_CASE = re.compile(r"^cases? (\S+)")
_LIST_ITEM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\[(\d+)\]")
_DEF = re.compile(r"^def ([A-Za-z_][A-Za-z0-9_]*)")
_LINE = re.compile(r"^line (\d+)")


def locate(file: Path, at: str, function: str = "") -> int | None:
    """The 1-based line of ``at`` in ``file``: a dotted field of a TOML file (``limits.case_time_s``), a
    case of a case file (``case NAME`` or ``case NAME.expected``), an item of a list in a Python file
    (``JUNK[2]``), a ``def NAME``, ``line N``; else the ``def`` of ``function`` in a Python file, else line
    1. None for a folder or a file that does not exist."""
    try:
        text = _read(str(file), file.stat().st_mtime_ns)
    except (OSError, UnicodeDecodeError):
        return None
    explicit = _LINE.match(at)
    if explicit:
        return int(explicit.group(1))
    found: int | None = None
    if file.suffix == ".toml" and at:
        found = _toml_line(text, at)
    elif file.suffix == ".json":
        found = _json_line(text, at)
    elif file.suffix == ".py":
        found = _python_line(text, at, function)
    return found or 1


@lru_cache(maxsize=64)
def _read(path: str, mtime_ns: int) -> str:
    del mtime_ns  # part of the cache key only
    return Path(path).read_text()


def _toml_line(text: str, at: str) -> int | None:
    field = at.split(" ")[0]
    path = tuple(int(p) if p.isdigit() else p for p in field.split("."))
    return line_of(toml_lines(text), path)


def _json_line(text: str, at: str) -> int | None:
    match = _CASE.match(at)
    if not match:
        return None
    try:
        cases = json.loads(text).get("cases", [])
    except (ValueError, AttributeError):
        return None
    named = match.group(1).rstrip(",")
    # the longest case name that starts the text names the case (names may hold dots)
    best: tuple[int, str] | None = None
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        name = str(case.get("name", "")) if isinstance(case, dict) else ""
        if (
            name
            and (named == name or named.startswith(name + "."))
            and (best is None or len(name) > len(best[1]))
        ):
            best = (index, name)
    if best is None:
        return None
    rest = named[len(best[1]) + 1 :]
    path: tuple[str | int, ...] = ("cases", best[0], *(p for p in rest.split(".") if p))
    return line_of(json_lines(text), path)


def _assignment(tree: ast.Module, name: str) -> ast.Assign | ast.AnnAssign | None:
    """The top-level statement that assigns ``name``."""
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node
    return None


def _python_line(text: str, at: str, function: str) -> int | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    item = _LIST_ITEM.match(at)
    name = item.group(1) if item else at.split(" ")[0]
    assigned = _assignment(tree, name) if name.isidentifier() else None
    if assigned is not None:
        index = int(item.group(2)) if item else None
        if index is not None and isinstance(assigned.value, ast.List) and index < len(assigned.value.elts):
            return assigned.value.elts[index].lineno
        return assigned.lineno
    named = _DEF.match(at)
    wanted = named.group(1) if named else function
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == wanted:
            return node.lineno
    return None
