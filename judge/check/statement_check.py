"""Check ``statement``: ``statement.md`` exists, renders to HTML, and has what a learner needs.

The examples inside it are the ``examples`` check's concern.
"""

from __future__ import annotations

import re

from judge.check.context import CheckContext
from judge.statement import EXAMPLES_PLACEHOLDER, markdown_to_html

NAME = "statement"

_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    file = problem.root / "statement.md"
    source = problem.statement_source
    if not source.strip():
        diag.error("the statement is empty", file=file)
        return
    try:
        markdown_to_html(source)
    except Exception as exc:
        diag.error(f"does not render to HTML: {type(exc).__name__}: {exc}", file=file)
    lines = source.splitlines()
    for number, line in enumerate(lines, start=1):
        for match in _PLACEHOLDER.finditer(line):
            if match.group(0) != EXAMPLES_PLACEHOLDER:
                diag.error(
                    f"unknown placeholder {match.group(0)!r} (the only one is {EXAMPLES_PLACEHOLDER})",
                    file=file,
                    at=f"line {number}",
                    line=number,
                )
    fences = [n for n, line in enumerate(lines, start=1) if line.strip() == "$$"]
    if len(fences) % 2:
        diag.error("a $$ math block is never closed", file=file, at=f"line {fences[-1]}", line=fences[-1])
    if f"`{problem.spec.function}" not in source:
        diag.warning(f"the statement never names the function `{problem.spec.function}` in code", file=file)
    if not any(line.strip().lower() == "## constraints" for line in lines):
        diag.warning(
            "no '## Constraints' section: learners cannot see what inputs to expect, and the "
            "validator has nothing to follow",
            file=file,
        )
