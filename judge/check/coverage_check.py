"""Check ``coverage``: the hidden cases exercise everything the spec allows.

- Every dtype in ``dtypes.allowed`` needs hidden cases (a problem allowing bfloat16 must test bfloat16).
- Each ``pytree`` argument should arrive at least once as a bare array and at least once holding a list
  node, or a solution that assumes a dict of arrays passes; its list nodes should reach ``LONG_LIST``
  items and its nesting ``DEEP_NESTING`` levels, or code that only handles (or only mutates) short lists
  and shallow trees passes. The longest list node and the deepest nesting covered are reported as notes.
- Each ``array`` argument is one leaf, so it has no list nodes to cover: every rank its ``ndim`` allows
  should reach the hidden cases instead. Each static argument (``int``, ``int_tuple``, a static
  ``number``) should take at least two values, or a solution that hard-codes one passes; a ``bool`` both
  values and a ``str`` every one of its choices.
- The number of distinct compile signatures stays small, since each one costs a compile inside the time
  limit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judge.check.context import CheckContext
from judge.constraints import longest_list, nesting_depth, tree_signature
from judge.core.menu import MenuChoice
from judge.core.spec import ArgSpec
from judge.kinds.registry import kind_of
from sandbox.shared.tree import KeyArray

NAME = "coverage"

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
        values = [c.inputs[index] for c in hidden]
        rule = kind_of(arg.kind).coverage if arg.traced else "static"
        if rule == "array":
            covered.append(_array_coverage(ctx, arg, values, file))
            continue
        if rule == "key":
            covered.append(_key_coverage(ctx, arg, values, file))
            continue
        if rule == "static":
            covered.append(_static_coverage(ctx, arg, values, file))
            continue
        if rule != "tree":
            continue
        if arg.structure == "fixed":
            covered.append(_fixed_coverage(ctx, arg, [c.inputs[index] for c in problem.cases], file))
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


def skeleton(tree: Any) -> Any:
    """The containers of a tree (dict keys, list lengths), every leaf replaced by ``"leaf"``."""
    if isinstance(tree, dict):
        return ("dict", tuple((key, skeleton(tree[key])) for key in sorted(tree)))
    if isinstance(tree, list | tuple):
        return ("list", tuple(skeleton(item) for item in tree))
    return "leaf"


def _describe_skeleton(node: Any) -> str:
    if node == "leaf":
        return "an array"
    kind, items = node
    if kind == "dict":
        return "{" + ", ".join(f"{key!r}: {_describe_skeleton(item)}" for key, item in items) + "}"
    return "[" + ", ".join(_describe_skeleton(item) for item in items) + "]"


def _fixed_coverage(ctx: CheckContext, arg: ArgSpec, values: list[Any], file: Any) -> str:
    """A pytree argument declared ``structure = "fixed"``: every case (public and hidden) gives it the same
    containers, and the extent checks for free-form trees do not apply."""
    shapes: dict[Any, int] = {}
    for value in values:
        shapes[skeleton(value)] = shapes.get(skeleton(value), 0) + 1
    if len(shapes) > 1:
        first, *others = sorted(shapes, key=lambda s: -shapes[s])
        ctx.diag.warning(
            f"`{arg.name}` declares structure = 'fixed' but the cases give it {len(shapes)} container "
            f"structures: {shapes[first]} cases {_describe_skeleton(first)}, then "
            + "; ".join(f"{shapes[s]} {_describe_skeleton(s)}" for s in others)
            + ": make them one, or drop structure = 'fixed'",
            file=file,
            at=f"argument {arg.name}",
        )
    shown = _describe_skeleton(next(iter(shapes))) if shapes else "none"
    return f"`{arg.name}`: the fixed structure {shown}"


def _array_coverage(ctx: CheckContext, arg: ArgSpec, values: list[Any], file: Any) -> str:
    """An ``array`` argument is one leaf (no list nodes to cover): every declared rank should reach the
    hidden cases, and an array that may be empty should be empty in one of them."""
    ranks = sorted({int(v.ndim) for v in values if isinstance(v, np.ndarray)})
    for rank in sorted(set(arg.ndim) - set(ranks)):
        ctx.diag.warning(
            f"`{arg.name}` may have {rank} dimension{'' if rank == 1 else 's'} (ndim {arg.ndim}) but no "
            "hidden case gives it that rank: code that handles only the ranks tested would pass; add a case",
            file=file,
            at=f"argument {arg.name}",
        )
    listed = ", ".join(str(r) for r in ranks) or "none"
    return f"`{arg.name}`: {arg.describe_kind()}, ranks {listed}"


def _key_coverage(ctx: CheckContext, arg: ArgSpec, values: list[Any], file: Any) -> str:
    """A ``key`` argument: every declared key-array rank should reach the hidden cases, and the cases
    should hold several distinct keys, or a solution that ignores its key (one hard-coded key) passes."""
    ranks = sorted({len(v.shape) for v in values if isinstance(v, KeyArray)})
    for rank in sorted(set(arg.key_ranks) - set(ranks)):
        ctx.diag.warning(
            f"`{arg.name}` may be a key array with {rank} dimension{'' if rank == 1 else 's'} but no hidden "
            "case gives it that rank: code that handles only the ranks tested would pass; add a case",
            file=file,
            at=f"argument {arg.name}",
        )
    distinct = {v.data.tobytes() for v in values if isinstance(v, KeyArray)}
    if len(distinct) < 2:
        ctx.diag.warning(
            f"the hidden cases give `{arg.name}` fewer than two distinct keys: a solution that ignores its "
            "key and hard-codes one would pass; vary the seeds",
            file=file,
            at=f"argument {arg.name}",
        )
    return f"`{arg.name}`: {len(distinct)} distinct keys, ranks {', '.join(map(str, ranks)) or 'none'}"


def _static_coverage(ctx: CheckContext, arg: ArgSpec, values: list[Any], file: Any) -> str:
    """A static argument needs at least two distinct values in the hidden cases, or a solution that ignores
    it (a hard-coded constant) passes."""
    distinct = {repr(v) for v in values}
    wanted = kind_of(arg.kind).coverage_wanted(arg)
    missing = [w for w in wanted if w not in values]
    if missing:
        ctx.diag.warning(
            f"no hidden case gives the static argument `{arg.name}` the value "
            f"{' or '.join(repr(m) for m in missing)}: a solution that gets that value wrong would pass; "
            "add a case with it",
            file=file,
            at=f"argument {arg.name}",
        )
    elif len(distinct) < 2:
        ctx.diag.warning(
            f"every hidden case gives the static argument `{arg.name}` the same value: a solution that "
            "ignores it and hard-codes that value would pass; vary it",
            file=file,
            at=f"argument {arg.name}",
        )
    return f"`{arg.name}`: {len(distinct)} distinct static value{'' if len(distinct) == 1 else 's'}"


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
        elif not arg.traced:
            parts.append((arg.name, "static", value))
        elif isinstance(value, float):
            parts.append((arg.name, "number"))
        elif isinstance(value, KeyArray):
            parts.append((arg.name, "key", value.impl, value.shape))
        else:
            parts.append((arg.name, tree_signature(value)))
    return tuple(parts)
