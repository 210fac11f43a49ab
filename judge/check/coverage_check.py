"""Check ``coverage``: the hidden cases exercise everything the spec allows.

Every dtype in ``dtypes.allowed`` needs hidden cases (a problem allowing bfloat16 must test bfloat16). Each
``pytree`` argument should arrive at least once as a bare array and at least once holding a list node, or a
solution that assumes a dict of arrays passes. The number of distinct compile signatures stays small, since
each one costs a compile inside the time limit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.check.context import CheckContext
from judge.constraints import leaves_with_paths

NAME = "coverage"

#: Distinct (structure, shapes, dtype) signatures a case set may have before each compile costs too much.
MAX_SIGNATURES = 16


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
        if not any(_has_list(v) for v in values):
            diag.warning(
                f"no hidden case has a list node in `{arg.name}`: a solution that only walks dicts "
                "would pass",
                file=file,
                at=f"argument {arg.name}",
            )
    signatures = {_signature(problem.spec.args, c.inputs, c.dtype) for c in problem.cases}
    if len(signatures) > MAX_SIGNATURES:
        diag.warning(
            f"{len(signatures)} distinct input signatures (structure, shapes, dtype); each costs a "
            f"compile inside the time limit, keep at most {MAX_SIGNATURES}",
            file=file,
        )


def _has_list(tree: Any) -> bool:
    if isinstance(tree, list):
        return True
    if isinstance(tree, dict):
        return any(_has_list(v) for v in tree.values())
    return False


def _signature(args: Any, inputs: tuple[Any, ...], dtype: str) -> tuple[Any, ...]:
    parts: list[Any] = [dtype]
    for arg, value in zip(args, inputs, strict=True):
        if isinstance(value, float):
            parts.append((arg.name, "number"))
            continue
        parts.append(
            (
                arg.name,
                tuple(
                    (path, leaf.shape if isinstance(leaf, np.ndarray) else None)
                    for path, leaf in leaves_with_paths(value, arg.name)
                ),
            )
        )
    return tuple(parts)
