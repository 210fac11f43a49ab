"""Check ``spec``: ``problem.toml`` validates (every pydantic error, with its field), then the package loads.

A defect found while loading the rest of the package (a missing statement, a case file that does not
validate, no reference module) is reported under the check that owns that file, and the checks that need a
loaded problem are skipped.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.check.context import CheckContext
from judge.errors import ProblemError
from judge.problems import SPEC_FILE, VALIDATOR_FILE, load_problem
from judge.spec import ProblemSpec
from judge.verdicts import Verdict

NAME = "spec"


def line_of(text: str, key: str) -> int | None:
    """The first line that assigns ``key`` (``key = ...``) or opens a ``[key]`` table, 1-based."""
    pattern = re.compile(rf"^\s*(\[+\s*{re.escape(key)}\s*\]+|{re.escape(key)}\s*=)")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return None


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
        match = re.search(r"at line (\d+)", str(exc))
        diag.error(f"not valid TOML: {exc}", file=file, line=int(match.group(1)) if match else None)
        return
    try:
        spec = ProblemSpec.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(error["loc"])
            keys = [p for p in loc if isinstance(p, str)]
            line = line_of(text, keys[-1]) if keys else None
            diag.error(error["msg"], file=file, at=_field(loc) or "(top level)", line=line)
        return
    if spec.slug != ctx.root.name:
        diag.error(
            f"{spec.slug!r} differs from the folder name {ctx.root.name!r}",
            file=file,
            at="slug",
            line=line_of(text, "slug"),
        )
        return
    _sanity(ctx, spec, file, text)
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
            line=line_of(text, "case_time_s"),
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
    ctx.diag.error(exc.message, file=Path(path), at=at, check=check)
