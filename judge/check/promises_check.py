"""Check ``promises``: every promise the statement makes about the inputs, and every bound it states, is
reached by a hidden case, and bounds that interact are reached by one case together.

A statement promises more than its validator bounds: "slices whose values lie thousands apart", "the new
value may be much smaller than the one it overwrites", "the fit may be perfect". A shortcut that breaks
only there (a log-sum-exp shifted by the mean, ``old + (new - old)``, an expanded square) passes every case
that never goes there. ``problem.toml`` declares each promise (``[[promises]]``,
``judge.core.spec.PromiseSpec``): the words of the statement, a predicate of ``validator.py`` over a case's
inputs, and the stated bounds (the ``reach`` check's keys) one case must approach at once. This check runs the
validator on each hidden case under its own bound recorder, so it knows which case approaches which bound, and
reports:

- per stated bound, the hidden case that comes closest to it (the ``reach`` check warns for a bound no
  case approaches, with how close they come);
- per promise, the hidden case that reaches it; an error when none does, when its words are not in the
  statement, or when it names a predicate or bound that does not exist;
- a warning when the problem declares no promise at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judge.authoring.positions import line_of, toml_lines
from judge.check.context import CheckContext
from judge.check.reach_check import approached, factor_for
from judge.constraints import Bound, recording_bounds
from judge.core.problems import Case
from judge.core.spec import PromiseSpec

NAME = "promises"


@dataclass(frozen=True)
class CaseReach:
    """What one hidden case reaches: the stated bounds it approaches (by key), and how close it comes to
    each bound it was checked against."""

    case: Case
    args: dict[str, Any]
    bounds: frozenset[str]
    closeness: dict[str, float]


def _fold(text: str) -> str:
    return " ".join(text.lower().replace("`", "").split())


def case_reaches(ctx: CheckContext) -> tuple[list[CaseReach], dict[str, Bound]]:
    """Each hidden case with the bounds it approaches, and every bound any case noted."""
    problem = ctx.loaded
    validator = problem.validator
    assert validator is not None
    reach = problem.spec.reach
    names = [arg.name for arg in problem.spec.args]
    found: list[CaseReach] = []
    every: dict[str, Bound] = {}
    for case in problem.hidden_cases:
        args = dict(zip(names, case.inputs, strict=True))
        with recording_bounds() as recorder:
            try:
                validator(dict(args), case.dtype)
            except Exception:  # the cases check reports a crashing validator
                continue
        near = frozenset(
            key
            for key, bound in recorder.bounds.items()
            if approached(bound, factor_for(reach, key), reach.zero_band)
        )
        for key, bound in recorder.bounds.items():
            every.setdefault(key, bound)
        closeness = {key: bound.closeness for key, bound in recorder.bounds.items()}
        found.append(CaseReach(case, args, near, closeness))
    return found, every


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    if problem.validator is None or ctx.validator is None:
        return  # the cases check asks for a validator
    spec_file = problem.root / "problem.toml"
    lines = toml_lines(spec_file.read_text()) if spec_file.is_file() else {}
    reaches, bounds = case_reaches(ctx)
    shown = []
    for key in bounds:
        near = [r for r in reaches if key in r.bounds]
        if near:  # the case that comes closest (the first of those that tie)
            closest = max(near, key=lambda r: r.closeness[key])
            shown.append(f"{key} by {closest.case.name}")
    if shown:
        ctx.diag.note("stated bounds reached: " + "; ".join(shown))
    promises = problem.spec.promises
    if not promises:
        ctx.diag.warning(
            "the spec declares no [[promises]]: quote each thing the statement promises about the inputs "
            '(values far apart, a length of zero, a perfect fit, ...) as says = "...", with reached_by = '
            '"<a predicate of validator.py>" and/or bounds = ["<stated bounds reached together>"], so this '
            "check can show a hidden case reaches it",
            file=spec_file,
        )
        return
    statement = _fold(problem.statement_source)
    for index, promise in enumerate(promises):
        at = f"promises.{index}"
        line = line_of(lines, ["promises", index])
        problems = _declaration_problems(ctx, promise, statement, bounds)
        for message in problems:
            ctx.diag.error(f'[[promises]] "{promise.says}": {message}', file=spec_file, at=at, line=line)
        if problems:
            continue
        predicate = _predicate(ctx, promise)
        reached: list[str] = []
        for item in reaches:
            if not set(promise.bounds) <= item.bounds:
                continue
            if predicate is not None:
                try:
                    hit = predicate(dict(item.args), item.case.dtype)
                except Exception as exc:
                    ctx.diag.error(
                        f'[[promises]] "{promise.says}": {promise.reached_by} failed on hidden case '
                        f"{item.case.name}: {type(exc).__name__}: {exc}",
                        file=problem.root / "validator.py",
                        at=f"def {promise.reached_by}",
                    )
                    break
                if not isinstance(hit, bool):
                    ctx.diag.error(
                        f'[[promises]] "{promise.says}": {promise.reached_by} returned '
                        f"{type(hit).__name__}, not a bool, on hidden case {item.case.name}",
                        file=problem.root / "validator.py",
                        at=f"def {promise.reached_by}",
                    )
                    break
                if not hit:
                    continue
            reached.append(item.case.name)
        else:
            if not reached:
                ctx.diag.error(
                    f'no hidden case reaches the promise "{promise.says}" ({_what(promise)}): a solution '
                    "that goes wrong only there passes; add a hidden case that reaches it",
                    file=spec_file,
                    at=at,
                    line=line,
                )
            else:
                more = f" (and {len(reached) - 1} more)" if len(reached) > 1 else ""
                ctx.diag.note(f'promise "{promise.says}": reached by {reached[0]}{more}')


def _what(promise: PromiseSpec) -> str:
    parts = []
    if promise.reached_by is not None:
        parts.append(f"{promise.reached_by} true")
    if promise.bounds:
        parts.append("approaching " + " and ".join(promise.bounds) + " together")
    return ", ".join(parts)


def _predicate(ctx: CheckContext, promise: PromiseSpec) -> Callable[[dict[str, Any], str], Any] | None:
    if promise.reached_by is None:
        return None
    found: Callable[[dict[str, Any], str], Any] = getattr(ctx.validator, promise.reached_by)
    return found


def _declaration_problems(
    ctx: CheckContext, promise: PromiseSpec, statement: str, bounds: dict[str, Bound]
) -> list[str]:
    """What is wrong with the promise's declaration itself."""
    found = []
    if _fold(promise.says) not in statement:
        found.append("these words are not in statement.md: quote the promise as the statement words it")
    if promise.reached_by is not None and not callable(getattr(ctx.validator, promise.reached_by, None)):
        found.append(
            f"reached_by names {promise.reached_by!r}, which validator.py does not define as a function "
            "(name(args, dtype) -> bool)"
        )
    unknown = [key for key in promise.bounds if key not in bounds]
    if unknown:
        found.append(
            f"bounds names {', '.join(map(repr, unknown))}, which no hidden case makes the validator check "
            f"(known: {', '.join(sorted(bounds)) or 'none'})"
        )
    return found
