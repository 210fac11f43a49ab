"""Check ``rules``: the catalog's rules every problem package meets, each finding named by its rule.

These are the rules a contributor must know before writing a problem (``problems/README.md``, "Package
rules"); the judge enforces them here, so no test of the judge's own suite has to know any problem:

    solution-folders    every folder under solutions/ is a verdict (not ``not_run``)
    accepted            at least ``MIN_ACCEPTED`` files in solutions/accepted/ (styles other than the
                        reference's: they prove the tolerance accepts equally valid code)
    wrong-answer        at least ``MIN_WRONG`` file in solutions/wrong_answer/ (a mistake the cases catch)
    trace-error         at least ``MIN_TRACE_ERROR`` file in solutions/trace_error/ (Python control flow
                        on a traced value: the mistake every jit problem invites)
    public-cases        between ``PUBLIC_CASES`` public cases (the statement's examples)
    hidden-cases        between ``HIDDEN_CASES`` hidden cases
    case-size           at most ``MAX_ELEMENTS`` array elements per case, all arguments together, and trees
                        at most ``MAX_DEPTH`` containers deep
    signature           at most ``MAX_ARGS`` arguments; at most ``MAX_SIGNATURES`` distinct compile
                        signatures (structure, shapes, dtype) over all cases: each costs a compile in the
                        time limit
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.check.context import CheckContext
from judge.check.coverage_check import signature
from judge.constraints import nesting_depth
from judge.core.problems import SPEC_FILE
from judge.core.verdicts import Verdict

NAME = "rules"

MIN_ACCEPTED = 2
MIN_WRONG = 1
MIN_TRACE_ERROR = 1
PUBLIC_CASES = (1, 5)
HIDDEN_CASES = (8, 64)
MAX_ELEMENTS = 4096
MAX_DEPTH = 12
MAX_ARGS = 8
MAX_SIGNATURES = 16

#: rule -> (folder, at least how many files, why)
_FOLDERS = {
    "accepted": (Verdict.ACCEPTED, MIN_ACCEPTED, "correct solutions in other styles than the reference"),
    "wrong-answer": (Verdict.WRONG_ANSWER, MIN_WRONG, "a mistake learners make, which the cases catch"),
    "trace-error": (
        Verdict.TRACE_ERROR,
        MIN_TRACE_ERROR,
        "Python control flow on a traced value, the mistake every jit problem invites",
    ),
}


def check(ctx: CheckContext) -> None:
    _solutions(ctx)
    _cases(ctx)
    _signature(ctx)


def _error(ctx: CheckContext, rule: str, message: str, **where: Any) -> None:
    ctx.diag.error(f"rule {rule}: {message}", **where)


def _solutions(ctx: CheckContext) -> None:
    base = ctx.root / "solutions"
    folders = sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
    known = ", ".join(v.value for v in Verdict if v is not Verdict.NOT_RUN)
    for folder in folders:
        if folder.name.startswith((".", "_")):
            continue
        if folder.name not in {v.value for v in Verdict} or folder.name == Verdict.NOT_RUN.value:
            message = f"solutions/{folder.name}/ is not a verdict (one of: {known})"
            _error(ctx, "solution-folders", message, file=folder)
    for rule, (verdict, least, why) in _FOLDERS.items():
        files = sorted((base / verdict.value).glob("*.py"))
        if len(files) < least:
            _error(
                ctx,
                rule,
                f"solutions/{verdict.value}/ holds {len(files)} file{'s' * (len(files) != 1)}, at least "
                f"{least} wanted: {why}",
                file=base / verdict.value,
            )


def _cases(ctx: CheckContext) -> None:
    problem = ctx.loaded
    spec_file = ctx.root / SPEC_FILE
    for rule, cases, (low, high) in (
        ("public-cases", problem.public_cases, PUBLIC_CASES),
        ("hidden-cases", problem.hidden_cases, HIDDEN_CASES),
    ):
        if not low <= len(cases) <= high:
            files = sorted({str(ctx.case_file(c)) for c in cases if ctx.case_file(c) is not None})
            _error(
                ctx,
                rule,
                f"{len(cases)} {rule.split('-')[0]} case{'s' * (len(cases) != 1)}, between {low} and {high} "
                "wanted",
                file=ctx.case_file(cases[0]) if len(files) == 1 else spec_file,
                at="" if len(files) == 1 else "case_files",
            )
    for case in problem.cases:
        elements = sum(_elements(value) for value in case.inputs)
        depth = max((nesting_depth(value) for value in case.inputs), default=0)
        where = {"file": ctx.case_file(case), "at": f"case {case.name}"}
        if elements > MAX_ELEMENTS:
            _error(ctx, "case-size", f"{elements} array elements, at most {MAX_ELEMENTS}", **where)
        if depth > MAX_DEPTH:
            _error(ctx, "case-size", f"nested {depth} containers deep, at most {MAX_DEPTH}", **where)


def _elements(tree: Any) -> int:
    if isinstance(tree, dict):
        return sum(_elements(v) for v in tree.values())
    if isinstance(tree, list | tuple):
        return sum(_elements(v) for v in tree)
    if isinstance(tree, np.ndarray):
        return int(tree.size)
    return 1


def _signature(ctx: CheckContext) -> None:
    problem = ctx.loaded
    spec_file = ctx.root / SPEC_FILE
    if len(problem.spec.args) > MAX_ARGS:
        _error(
            ctx,
            "signature",
            f"{len(problem.spec.args)} arguments, at most {MAX_ARGS}: pass related values as one pytree",
            file=spec_file,
            at=f"args.{MAX_ARGS}",
        )
    signatures = {signature(problem.spec.args, c.inputs, c.dtype) for c in problem.cases}
    if len(signatures) > MAX_SIGNATURES:
        _error(
            ctx,
            "signature",
            f"{len(signatures)} distinct input signatures (structure, shapes, dtype) over the cases, at most "
            f"{MAX_SIGNATURES}: each costs a compile inside the time limit; reuse shapes across cases",
            file=spec_file,
            at="case_files",
        )
