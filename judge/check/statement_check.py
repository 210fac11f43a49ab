"""Check ``statement``: ``statement.md`` exists, renders to HTML, and has what a learner needs: the function
named, a Constraints section, the ``{{rules}}`` line, where the rules the judge enforces are generated from
the spec (``judge.authoring.statement.render_rules``), and math that renders with no TeX left raw
(``judge.authoring.markdown.formulas_left_raw``: an unknown command, an escape the renderer keeps).

The examples inside it are the ``examples`` check's concern.
"""

from __future__ import annotations

import re

from judge.authoring.markdown import formulas_left_raw
from judge.authoring.statement import PLACEHOLDERS, RULES_HEADING, RULES_PLACEHOLDER, markdown_to_html
from judge.check.context import CheckContext

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
            if match.group(0) not in PLACEHOLDERS:
                diag.error(
                    f"unknown placeholder {match.group(0)!r} (known: {', '.join(PLACEHOLDERS)})",
                    file=file,
                    at=f"line {number}",
                    line=number,
                )
    _rules(ctx, lines)
    for number, formula, left in formulas_left_raw(source):
        diag.error(
            f"the formula ${formula}$ renders with raw TeX ({', '.join(dict.fromkeys(left))}): learners "
            "would read it as written; use TeX the page's renderer knows (judge preview shows it)",
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


def _rules(ctx: CheckContext, lines: list[str]) -> None:
    """The ``{{rules}}`` line appears once, on its own line, and no hand-written copy of its heading."""
    file = ctx.loaded.root / "statement.md"
    found = [n for n, line in enumerate(lines, start=1) if line.strip() == RULES_PLACEHOLDER]
    if not found:
        ctx.diag.error(
            f"no {RULES_PLACEHOLDER} line: the rules the judge enforces (jax.jit, traced arguments, host "
            "callbacks, inputs left unchanged, dtypes and tolerances, containers) are generated from the "
            "spec there, so learners see every rule they are graded by",
            file=file,
        )
    elif len(found) > 1:
        ctx.diag.error(
            f"{RULES_PLACEHOLDER} appears {len(found)} times (lines {', '.join(map(str, found))}); it must "
            "appear once",
            file=file,
            line=found[1],
        )
    for number, line in enumerate(lines, start=1):
        if line.strip().lower() == RULES_HEADING.lower():
            ctx.diag.error(
                f"a hand-written '{RULES_HEADING}' section; the {RULES_PLACEHOLDER} line generates it",
                file=file,
                at=f"line {number}",
                line=number,
            )
