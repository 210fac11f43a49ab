"""Check ``spec``: ``problem.toml`` validates (every pydantic error, with its field), then the package loads.

A defect found while loading the rest of the package (a missing statement, a case file that does not
validate, no reference module) is reported under the check that owns that file, and the checks that need a
loaded problem are skipped.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.authoring import positions
from judge.authoring.positions import toml_lines
from judge.check.context import CheckContext
from judge.core.errors import ProblemError
from judge.core.problems import SPEC_FILE, VALIDATOR_FILE, load_problem, toml_decode_line
from judge.core.spec import ProblemSpec, explain
from judge.core.verdicts import Verdict

NAME = "spec"


def _field(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


def check(ctx: CheckContext) -> None:
    diag = ctx.diag
    file = ctx.root / SPEC_FILE
    if not ctx.root.is_dir():
        diag.error("no such problem folder", file=ctx.root)
        return
    try:
        text = file.read_text()
    except FileNotFoundError:
        diag.error("missing: every problem folder needs a problem.toml", file=file)
        return
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        diag.error(f"not valid TOML: {exc}", file=file, line=toml_decode_line(exc))
        return
    lines = toml_lines(text)
    try:
        spec = ProblemSpec.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(error["loc"])
            diag.error(
                explain(error, ProblemSpec),
                file=file,
                at=_field(loc) or "(top level)",
                line=positions.line_of(lines, loc) or 1,
            )
        return
    diag.function = spec.function
    if spec.slug != ctx.root.name:
        diag.error(
            f"{spec.slug!r} differs from the folder name {ctx.root.name!r}",
            file=file,
            at="slug",
            line=positions.line_of(lines, ("slug",)),
        )
        return
    _sanity(ctx, spec, file, text)
    _links(ctx, spec, file, lines)
    try:
        ctx.problem = load_problem(ctx.root)
    except ProblemError as exc:
        _load_error(ctx, spec, exc)


def _sanity(ctx: CheckContext, spec: ProblemSpec, file: Path, text: str) -> None:
    """Spec values that validate but make a poor problem."""
    diag = ctx.diag
    limits = spec.limits
    if limits.case_time_s > limits.wall_time_s:
        diag.warning(
            f"case_time_s ({limits.case_time_s:g} s) exceeds wall_time_s ({limits.wall_time_s:g} s): "
            "the per-case limit can never be reached",
            file=file,
            at="limits.case_time_s",
        )
    for dtype in spec.dtypes.allowed:
        tol = spec.compare.tolerance[dtype]
        if tol.is_zero:
            diag.warning(
                f"the {dtype} tolerance is zero: any rounding difference between equally valid solutions "
                "fails",
                file=file,
                at=f"compare.tolerance.{dtype}",
            )
    folders = (
        {p.name for p in (ctx.root / "solutions").iterdir() if p.is_dir()}
        if (ctx.root / "solutions").is_dir()
        else set()
    )
    for verdict, also in spec.solutions.also_allow.items():
        if verdict.value not in folders:
            diag.warning(
                f"no solutions/{verdict.value}/ folder to apply it to",
                file=file,
                at=f"solutions.also_allow.{verdict.value}",
            )
        if Verdict.ACCEPTED in also or verdict is Verdict.ACCEPTED:
            diag.error(
                "a folder may not accept other verdicts in place of accepted, or accepted in place of "
                "a failure: that would hide a wrong solution",
                file=file,
                at=f"solutions.also_allow.{verdict.value}",
            )


def _links(ctx: CheckContext, spec: ProblemSpec, file: Path, lines: Mapping[positions.Path, int]) -> None:
    """``similar`` names problems of the catalog (the folders beside this one). A slug not there yet links
    nothing (the list ignores it) and is only noted, so links to problems being written break nothing;
    one within a typo of an existing slug warns with the slug it probably means."""
    catalog = sorted(p.name for p in ctx.root.parent.iterdir() if (p / "problem.toml").is_file())
    for index, slug in enumerate(spec.similar):
        if slug in catalog:
            continue
        close = difflib.get_close_matches(slug, catalog, n=1, cutoff=0.8)
        if close:
            ctx.diag.warning(
                f"{slug!r} is not in the catalog: did you mean {close[0]!r}?",
                file=file,
                at=f"similar.{index}",
                line=positions.line_of(lines, ("similar",)),
            )
        else:
            ctx.diag.note(f"similar: {slug!r} is not in the catalog yet; it links nothing until it is")


def owner(root: Path, spec: ProblemSpec, path: str) -> str:
    """The check that owns a file named in a load error."""
    if path == str(root / "statement.md"):
        return "statement"
    if path == str(root / "starter.py"):
        return "starter"
    if any(path == str(root / rel) for rel in spec.case_files) or path == str(root / VALIDATOR_FILE):
        return "cases"
    return NAME


def _load_error(ctx: CheckContext, spec: ProblemSpec, exc: ProblemError) -> None:
    path, _, at = exc.where.partition(": ")
    check = "reference" if at == "reference" else owner(ctx.root, spec, path)
    ctx.diag.error(exc.message, file=Path(path), at=at, check=check, line=exc.line)
