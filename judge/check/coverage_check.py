"""Check ``coverage``: the hidden cases exercise everything the spec allows.

- Every dtype in ``dtypes.allowed`` needs hidden cases (a problem allowing bfloat16 must test bfloat16).
- Each ``pytree`` argument should arrive at least once as a bare array and at least once holding a list
  node, or a solution that assumes a dict of arrays passes; its list nodes should reach ``LONG_LIST``
  items and its nesting ``DEEP_NESTING`` levels, or code that only handles (or only mutates) short lists
  and shallow trees passes. The longest list node and the deepest nesting covered are reported as notes.
- The number of distinct compile signatures stays small, since each one costs a compile inside the time
  limit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.check.context import CheckContext
from judge.constraints import longest_list, nesting_depth, tree_signature
from judge.menu import MenuChoice
from judge.spec import ArgSpec

NAME = "coverage"

#: Distinct (structure, shapes, dtype) signatures a case set may have before each compile costs too much.
MAX_SIGNATURES = 16
#: Hidden cases should hold a list node of at least this many items in every pytree argument.
LONG_LIST = 3
#: ... and nest containers at least this deep (``{"a": [{"w": leaf}]}`` is 3 levels).
DEEP_NESTING = 4


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    spec = problem.spec
    hidden = problem.hidden_cases
    files = {ctx.case_file(c) for c in hidden} - {None}
    file = next(iter(files)) if len(files) == 1 else problem.root / "problem.toml"
    for dtype in spec.dtypes.allowed:
        if not any(c.dtype == dtype for c in hidden):
            diag.error(
                f"dtypes.allowed includes {dtype} but no hidden case uses it: add {dtype} cases, or drop "
                f"{dtype} from the spec",
                file=file,
                at=f"dtype {dtype}",
            )
    covered = []
    for index, arg in enumerate(spec.args):
        if arg.kind != "pytree":
            continue
        values = [c.inputs[index] for c in hidden]
        if not any(isinstance(v, np.ndarray) for v in values):
            diag.warning(
                f"no hidden case passes `{arg.name}` as a bare array: a solution that assumes a dict "
                "would pass",
                file=file,
                at=f"argument {arg.name}",
            )
        if not any(longest_list(v) for v in values):
            diag.warning(
                f"no hidden case has a list node in `{arg.name}`: a solution that only walks dicts "
                "would pass",
                file=file,
                at=f"argument {arg.name}",
            )
        covered.append(_covered(ctx, arg, values, file))
    if covered:
        diag.note("hidden cases cover " + "; ".join(covered))
    signatures = {signature(spec.args, c.inputs, c.dtype) for c in problem.cases}
    if len(signatures) > MAX_SIGNATURES:
        diag.warning(
            f"{len(signatures)} distinct input signatures (structure, shapes, dtype); each costs a "
            f"compile inside the time limit, keep at most {MAX_SIGNATURES}",
            file=file,
        )


def _covered(ctx: CheckContext, arg: ArgSpec, values: list[Any], file: Any) -> str:
    """Warn about short lists and shallow trees; the covered extent of ``arg`` as text."""
    longest = max((longest_list(v) for v in values), default=0)
    deepest = max((nesting_depth(v) for v in values), default=0)
    if 0 < longest < LONG_LIST:
        ctx.diag.warning(
            f"the longest list node any hidden case gives `{arg.name}` has {longest} items: code that "
            f"mishandles or mutates lists of {LONG_LIST} or more items would pass; add a case with a longer "
            "list node",
            file=file,
            at=f"argument {arg.name}",
        )
    if deepest < DEEP_NESTING:
        ctx.diag.warning(
            f"the hidden cases nest `{arg.name}` at most {deepest} containers deep: code that only handles "
            f"shallow trees would pass; add a case nested {DEEP_NESTING} or more levels deep",
            file=file,
            at=f"argument {arg.name}",
        )
    return f"`{arg.name}`: list nodes up to {longest} items, nesting up to {deepest} levels"


def signature(args: Any, inputs: tuple[Any, ...], dtype: str) -> tuple[Any, ...]:
    """What one compile is keyed on: the case dtype, and each argument's tree signature (numbers are
    traced, so their values do not count; a static argument's value does, a menu function's name too)."""
    parts: list[Any] = [dtype]
    for arg, value in zip(args, inputs, strict=True):
        if isinstance(value, MenuChoice):
            parts.append((arg.name, "function", value.name))
        elif isinstance(value, float):
            parts.append((arg.name, "number" if arg.traced else value))
        else:
            parts.append((arg.name, tree_signature(value)))
    return tuple(parts)
