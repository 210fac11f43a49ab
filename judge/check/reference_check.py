"""Check ``reference``: the reference runs under ``jax.jit`` with traced arguments on every case, returns the
declared output structure and dtypes, and is deterministic; and it gives finite outputs on the validator's
EDGE inputs (the limits of the constraints).

It runs twice, with JAX's caches cleared in between (so the second run traces and compiles again), and the
two outputs of every case must be bitwise equal. Outputs are kept for the ``examples`` check.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from judge.check.context import CheckContext
from judge.errors import ReferenceFailure
from judge.expected import clear_jax_caches, load_reference, reference_outputs
from judge.problems import Case
from judge.pytree_json import describe_leaves, path_str
from sandbox.tree import OtherNode

NAME = "reference"

_MAX_MESSAGE = 600
#: ``reference_outputs`` names the case; the finding names it already.
_PREFIX = re.compile(r"^the reference \S+ failed on case \S+: ")


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    file = problem.reference_path
    try:
        load_reference(problem)
    except ReferenceFailure as exc:
        diag.error(str(exc), file=file, line=_line_in(exc, file))
        return
    first = _run_all(ctx)
    clear_jax_caches()
    second = _run_all(ctx)
    outputs: list[Any] = []
    failures: dict[str, list[tuple[Case, ReferenceFailure]]] = {}
    for case, out, again in zip(problem.cases, first, second, strict=True):
        at = f"case {case.name}"
        if isinstance(out, ReferenceFailure):
            # Group by the first line: the rest names the case's own argument paths.
            failures.setdefault(_failure_text(out).split("\n")[0], []).append((case, out))
            outputs.append(None)
            continue
        outputs.append(out)
        if isinstance(again, ReferenceFailure):
            diag.error(f"not deterministic: the second run failed: {_failure_text(again)}", file=file, at=at)
        else:
            difference = _bitwise_difference(out, again, "output")
            if difference:
                diag.error(f"not deterministic: two runs differ at {difference}", file=file, at=at)
        _check_output(ctx, case, out, file)
    for failed in failures.values():  # one finding per distinct failure, naming every case it hit
        names = [case.name for case, _ in failed]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        at = f"case{'s' * (len(names) > 1)} {shown}"
        diag.error(_failure_text(failed[0][1]), file=file, at=at, line=_line_in(failed[0][1], file))
    ctx.reference_outputs = outputs
    ctx.reference_ok = all(out is not None for out in outputs)
    _gradients(ctx, file)
    _edges(ctx, file)


def _gradients(ctx: CheckContext, file: Path) -> None:
    """For a problem with ``[gradient]``: the reference's gradient runs on every case, is finite, and each
    ``wrt`` argument's gradient has that argument's structure, leaf shapes and dtypes."""
    problem = ctx.loaded
    spec = problem.spec.gradient
    if spec is None:
        return
    names = [a.name for a in problem.spec.args]
    for case, grads in zip(problem.cases, reference_outputs(problem, problem.cases, "gradient"), strict=True):
        at = f"case {case.name}"
        if isinstance(grads, ReferenceFailure):
            ctx.diag.error(f"the gradient failed: {_failure_text(grads)}", file=file, at=at)
            continue
        for name in spec.wrt:
            got, arg = grads.get(name) if isinstance(grads, dict) else None, case.inputs[names.index(name)]
            if describe_leaves(got) != describe_leaves(arg):
                ctx.diag.error(
                    f"the gradient w.r.t. {name} differs from {name} in structure, leaf shapes or dtypes",
                    file=file,
                    at=at,
                )
        bad = _non_finite(grads, "gradient")
        if bad:
            ctx.diag.error(f"non-finite gradient at {', '.join(bad[:3])}", file=file, at=at)


def _edges(ctx: CheckContext, file: Path) -> None:
    """The reference gives finite outputs on the validator's EDGE inputs (the limits of the constraints)."""
    if not ctx.edges:
        return
    validator = ctx.loaded.root / "validator.py"
    outputs = reference_outputs(ctx.loaded, [case for _, case in ctx.edges])
    for (at, _), out in zip(ctx.edges, outputs, strict=True):
        if isinstance(out, ReferenceFailure):
            ctx.diag.error(
                f"the reference fails on an input the constraints allow ({validator.name} {at}): "
                f"{_failure_text(out)}",
                file=file,
                line=_line_in(out, file),
            )
            continue
        bad = [path for root, tree in _named_outputs(ctx, out) for path in _non_finite(tree, root)]
        if bad:
            ctx.diag.error(
                f"the reference returns non-finite values at {', '.join(bad[:3])} on an input the "
                f"constraints allow ({validator.name} {at}): tighten the constraints (statement and "
                "validator) or make the reference robust, so the three agree",
                file=file,
            )


def _run_all(ctx: CheckContext) -> list[Any]:
    return reference_outputs(ctx.loaded, ctx.loaded.cases)


def _failure_text(exc: ReferenceFailure) -> str:
    text = _PREFIX.sub("", str(exc).strip())
    lines = [line for line in text.splitlines() if line.strip()]
    short = "\n".join(lines[:4])
    return short if len(short) <= _MAX_MESSAGE else short[: _MAX_MESSAGE - 3] + "..."


def _line_in(exc: BaseException, file: Path) -> int | None:
    """The last line of ``file`` in the traceback of the exception behind ``exc``."""
    line = None
    for cause in (exc, exc.__cause__):
        if cause is None or cause.__traceback__ is None:
            continue
        for frame in traceback.extract_tb(cause.__traceback__):
            if Path(frame.filename) == file:
                line = frame.lineno
    return line


def _named_outputs(ctx: CheckContext, out: Any) -> list[tuple[str, Any]]:
    spec = ctx.loaded.spec.output
    if spec.kind == "tuple" and isinstance(out, tuple) and len(out) == len(spec.names):
        return list(zip(spec.names, out, strict=True))
    return [("output", out)]


def _check_output(ctx: CheckContext, case: Case, out: Any, file: Path) -> None:
    diag = ctx.diag
    spec = ctx.loaded.spec
    at = f"case {case.name}"
    if spec.output.kind == "dict" and not isinstance(out, dict):
        diag.error(f"returns {_kind(out)}, the spec declares output.kind = 'dict'", file=file, at=at)
        return
    if spec.output.kind == "tuple" and (type(out) is not tuple or len(out) != len(spec.output.names)):
        diag.error(
            f"returns {_kind(out)}, the spec declares a tuple of {len(spec.output.names)} "
            f"({', '.join(spec.output.names)})",
            file=file,
            at=at,
        )
        return
    allowed = {*spec.dtypes.allowed, "float32"}
    non_finite = []
    for root, tree in _named_outputs(ctx, out):
        for leaf in describe_leaves(tree, root=root):
            if leaf.dtype not in allowed:
                diag.error(
                    f"{leaf.path}: dtype {leaf.dtype}, expected one of {sorted(allowed)}", file=file, at=at
                )
        non_finite += _non_finite(tree, root)
    if non_finite:
        diag.warning(
            f"non-finite output at {', '.join(non_finite[:3])}: NaN and infinity only match "
            "themselves, so the case tests little",
            file=file,
            at=at,
        )


def _kind(out: Any) -> str:
    if type(out) is tuple:
        return f"a tuple of {len(out)}"
    if isinstance(out, list):
        return f"a list of {len(out)}"
    if isinstance(out, dict):
        return "a dict"
    if isinstance(out, np.ndarray):
        return f"an array of shape {out.shape}"
    return type(out).__name__


def _non_finite(tree: Any, root: str, keys: tuple[Any, ...] = ()) -> list[str]:
    if isinstance(tree, dict):
        return [p for k in sorted(tree, key=str) for p in _non_finite(tree[k], root, (*keys, str(k)))]
    if isinstance(tree, list | tuple):
        return [p for i, item in enumerate(tree) for p in _non_finite(item, root, (*keys, i))]
    if isinstance(tree, OtherNode):
        return [p for i, item in enumerate(tree.children) for p in _non_finite(item, root, (*keys, i))]
    if isinstance(tree, np.ndarray) and tree.dtype.kind in "fV" and tree.size:
        try:
            finite = np.isfinite(tree.astype(np.float64))
        except (TypeError, ValueError):
            return []
        if not finite.all():
            return [path_str(root, keys)]
    return []


def _bitwise_difference(a: Any, b: Any, root: str, keys: tuple[Any, ...] = ()) -> str | None:
    """Where two outputs differ in structure, shape, dtype or any bit; None when identical."""
    here = path_str(root, keys)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return here
        if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
            return here
        return None
    if type(a) is not type(b):
        return here
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return here
        pairs: list[tuple[Any, Any, Any]] = [
            (k if isinstance(k, str) else repr(k), a[k], b[k]) for k in sorted(a, key=str)
        ]
    elif isinstance(a, list | tuple):
        if len(a) != len(b):
            return here
        pairs = [(i, x, y) for i, (x, y) in enumerate(zip(a, b, strict=True))]
    elif isinstance(a, OtherNode):
        if a.type_name != b.type_name or len(a.children) != len(b.children):
            return here
        pairs = [(i, x, y) for i, (x, y) in enumerate(zip(a.children, b.children, strict=True))]
    else:
        return None if a == b else here
    for key, x, y in pairs:
        found = _bitwise_difference(x, y, root, (*keys, key))
        if found:
            return found
    return None
