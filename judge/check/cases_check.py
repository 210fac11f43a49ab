"""Check ``cases``: every case satisfies the problem's constraints, and junk inputs are rejected.

The constraints live in ``problems/<slug>/validator.py`` (trusted repository code, like the reference):

- ``validate(args, dtype) -> list[str]``: ``args`` maps each argument name to its CONVERTED value (a tree
  of numpy arrays, or a Python float), ``dtype`` is the case dtype; each returned string is one violation
  naming its path, e.g. ``grads["w"]: 4 dimensions, at most 3 allowed``. ``judge.constraints`` has helpers.
- ``JUNK: list[dict]``: inputs that break the constraints, each ``{"args": <Run-panel JSON per argument>,
  "dtype": ..., "why": ...}``; the converter or ``validate`` must reject every one, which proves the
  validator is not vacuous.
- ``EDGE: list[dict]``: inputs at the limits of the constraints (largest values, tiny ones), in the same
  form; ``validate`` must accept every one, and the ``reference`` check runs the reference on them and
  requires finite outputs, which proves the statement, the validator and the reference agree.

When the problem has a ``generate_cases.py`` exposing ``build_cases()``, ``render(cases)`` and ``OUT``, the
check also runs it twice and requires the same text both times and the same text as the file it writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.check.context import CheckContext, import_file
from judge.core.errors import InputError, ProblemError
from judge.core.problems import Case, convert_args
from judge.core.spec import CaseDef

NAME = "cases"
VALIDATOR = "validator.py"
GENERATOR = "generate_cases.py"


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    for case in problem.cases:
        file = ctx.case_file(case)
        if not case.hidden and case.dtype != problem.spec.dtypes.run_panel:
            diag.warning(
                f"a public case in {case.dtype}: the Run panel shows its input as JSON, which cannot "
                f"say {case.dtype}, so learners re-running it get {problem.spec.dtypes.run_panel}",
                file=file,
                at=f"case {case.name}",
            )
        if case.hidden and case.definition.explanation:
            diag.warning(
                "a hidden case has an explanation, which is never shown", file=file, at=f"case {case.name}"
            )
    if not problem.public_cases:
        diag.warning("no public case: the statement has no example", file=problem.root)
    if not problem.hidden_cases:
        diag.warning("no hidden case: everything the judge tests is shown to learners", file=problem.root)
    _validate(ctx)
    _generator(ctx)


def _named_inputs(ctx: CheckContext, case: Case) -> dict[str, Any]:
    return {arg.name: value for arg, value in zip(ctx.loaded.spec.args, case.inputs, strict=True)}


def _validate(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    file = problem.root / VALIDATOR
    try:
        module = import_file(file, "validator")
    except FileNotFoundError:
        diag.error(
            f"missing: every problem needs a {VALIDATOR} with validate(args, dtype) and JUNK that "
            "encodes its Constraints section",
            file=file,
        )
        return
    except Exception as exc:
        diag.error(f"importing it failed: {type(exc).__name__}: {exc}", file=file)
        return
    validate = getattr(module, "validate", None)
    if not callable(validate):
        diag.error("does not define validate(args, dtype) -> list[str]", file=file)
        return
    ctx.validator = module
    for case in problem.cases:
        where = ctx.case_file(case)
        try:
            violations = validate(_named_inputs(ctx, case), case.dtype)
        except Exception as exc:
            diag.error(
                f"the validator crashed on this case: {type(exc).__name__}: {exc}",
                file=where,
                at=f"case {case.name}",
            )
            continue
        if not isinstance(violations, list) or not all(isinstance(v, str) for v in violations):
            diag.error("validate() must return a list of strings", file=file)
            return
        for violation in violations:
            diag.error(f"violates the constraints: {violation}", file=where, at=f"case {case.name}")
    _junk(ctx, file, getattr(module, "JUNK", None))
    _edge(ctx, file, getattr(module, "EDGE", None))


def _junk(ctx: CheckContext, file: Path, junk: Any) -> None:
    diag = ctx.diag
    if not isinstance(junk, list) or not junk:
        diag.error(
            "defines no JUNK list: give a few inputs that break the constraints, so the check can "
            "prove the validator rejects them",
            file=file,
            at="JUNK",
        )
        return
    problem = ctx.loaded
    assert ctx.validator is not None
    for i, item in enumerate(junk):
        why = item.get("why", "") if isinstance(item, dict) else ""
        at = f"JUNK[{i}]" + (f" ({why})" if why else "")
        if not isinstance(item, dict) or not isinstance(item.get("args"), dict):
            diag.error('expected {"args": {...}, "dtype": ..., "why": ...}', file=file, at=at)
            continue
        dtype = item.get("dtype", problem.spec.dtypes.run_panel)
        if dtype not in problem.spec.dtypes.allowed:
            continue  # the loader rejects a case in a dtype the spec does not allow
        try:
            inputs = convert_args(problem.spec, item["args"], dtype)
        except InputError:
            continue  # rejected by the converter
        named = {arg.name: value for arg, value in zip(problem.spec.args, inputs, strict=True)}
        try:
            violations = ctx.validator.validate(named, dtype)
        except Exception as exc:
            diag.error(
                f"the validator crashed instead of rejecting it: {type(exc).__name__}: {exc}",
                file=file,
                at=at,
            )
            continue
        if not violations:
            diag.error(
                "this junk input was accepted: neither the converter nor validate() rejects it",
                file=file,
                at=at,
            )


def _edge(ctx: CheckContext, file: Path, edge: Any) -> None:
    diag = ctx.diag
    if edge is None:
        diag.warning(
            "defines no EDGE list: give inputs at the limits of the constraints (the largest values allowed, "
            "tiny ones), so the check can prove the reference gives finite outputs wherever the statement "
            "allows inputs",
            file=file,
            at="EDGE",
        )
        return
    if not isinstance(edge, list):
        diag.error('expected a list of {"args": {...}, "dtype": ..., "why": ...}', file=file, at="EDGE")
        return
    problem = ctx.loaded
    for i, item in enumerate(edge):
        why = item.get("why", "") if isinstance(item, dict) else ""
        at = f"EDGE[{i}]" + (f" ({why})" if why else "")
        if not isinstance(item, dict) or not isinstance(item.get("args"), dict):
            diag.error('expected {"args": {...}, "dtype": ..., "why": ...}', file=file, at=at)
            continue
        dtype = item.get("dtype", problem.spec.dtypes.run_panel)
        if dtype not in problem.spec.dtypes.allowed:
            diag.error(f"dtype {dtype!r} is not in dtypes.allowed", file=file, at=at)
            continue
        try:
            inputs = convert_args(problem.spec, item["args"], dtype)
        except InputError as exc:
            diag.error(f"the converter rejects it: {exc}", file=file, at=at)
            continue
        definition = CaseDef.model_construct(
            name=f"EDGE[{i}]", visibility="hidden", dtype=dtype, args=item["args"], explanation=None
        )
        case = Case(definition, inputs)
        try:
            violations = problem.violations(case)
        except ProblemError as exc:
            diag.error(str(exc.message), file=file, at=at)
            continue
        if violations:
            diag.error(f"an EDGE input must satisfy the constraints, but: {violations[0]}", file=file, at=at)
            continue
        ctx.edges.append((at, case))


def _generator(ctx: CheckContext) -> None:
    diag = ctx.diag
    file = ctx.loaded.root / GENERATOR
    if not file.is_file():
        return
    try:
        module = import_file(file, "generator")
    except Exception as exc:
        diag.error(f"importing it failed: {type(exc).__name__}: {exc}", file=file)
        return
    build, render, out = (getattr(module, n, None) for n in ("build_cases", "render", "OUT"))
    if not callable(build) or not callable(render) or out is None:
        diag.warning(
            "does not expose build_cases(), render(cases) and OUT, so the check cannot tell whether "
            "the case file is what it generates",
            file=file,
        )
        return
    try:
        first, second = render(build()), render(build())
    except Exception as exc:
        diag.error(f"failed: {type(exc).__name__}: {exc}", file=file)
        return
    if first != second:
        diag.error(
            "is not deterministic: two runs give different cases (seed every random generator)", file=file
        )
        return
    target = Path(out)
    try:
        current = target.read_text()
    except OSError:
        current = None
    if current != first:
        diag.error(
            f"differs from what {GENERATOR} writes: edit the generator, not the file, and run "
            f"`python {diag.relative(file)}`",
            file=target,
        )
