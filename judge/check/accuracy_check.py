"""Check ``accuracy``: the reference is about as accurate as a correct solution can be.

The reference's outputs (float32 or bfloat16, what the judge compares with) are measured against the same
reference evaluated in float64 (``judge.check.float64_run``: x64 in a process of its own, float inputs
widened, its float32 casts mapped to float64), element by element, in units of the case dtype's tolerance
at the float64 value (``judge.core.compare.element_bounds``). The largest such share over a case is the
reference's own error there: a correct solution more accurate than the reference is that far from the
expected output before it makes any error of its own. A share above the problem's limit (``[accuracy]``
in problem.toml, 0.25 of the tolerance unless set, per dtype) is an error naming the case, the leaf and
what to do; the worst share per dtype is a note. The gradient a problem checks is measured the same way.

What float64 cannot see: an error the float64 path makes too (a wrong formula is still wrong), and a
subnormal that the CPU flushes in float32 but float64 keeps is seen (that is the point: it shows as a share
when the tolerance is ulp-based), but a constraint that keeps such inputs out is the author's fix.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judge.check.context import CheckContext
from judge.core.compare import element_bounds, scale_leaves
from judge.core.errors import InputError, ProblemError, ReferenceFailure
from judge.core.expected import expected_gradients, reference_outputs
from judge.core.gradients import split_scale
from judge.core.problems import REPO_ROOT, Case, convert_args
from judge.core.pytree_json import path_str
from judge.kinds.registry import kind_of
from sandbox.shared.tree import OtherNode
from sandbox.shared.wire import ProtocolError, loads_tree

NAME = "accuracy"


@dataclass(frozen=True)
class Share:
    """The reference's largest error on one case, in tolerances of the case dtype at the float64 value."""

    #: ``case NAME`` or ``validator.py EDGE[i] (...)``.
    case: str
    dtype: str
    share: float
    #: The leaf path of the largest share (``output["w"]``, ``gradient of w``).
    where: str
    #: The reference's value and the float64 one there (None for a structure or dtype difference).
    got: float | None = None
    exact: float | None = None


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    assert ctx.reference_outputs is not None  # the runner only calls this check after the reference's
    file = problem.reference_path
    keys = [a.name for a in problem.spec.args if kind_of(a.kind).random_source]
    if keys:
        # jax.random draws other numbers in float64 (a float64 normal is made of 64 random bits, not 32),
        # so a float64 run of a reference that draws from a key argument measures nothing.
        ctx.diag.note(
            f"not measured: the reference draws random numbers from {', '.join(keys)}, and in float64 "
            "jax.random draws other numbers than in float32"
        )
        return
    edges = edge_inputs(ctx)
    cases = [*problem.cases, *(case for _, case in edges)]
    runs = float64_outputs(problem.root, cases[len(problem.cases) :], len(cases), timeout_s=_timeout_s(ctx))
    if isinstance(runs, str):
        ctx.diag.error(f"the float64 evaluation of the reference failed: {runs}", file=file)
        return
    outputs, gradients = runs
    ctx.float64_outputs = outputs[: len(problem.cases)]
    references = list(ctx.reference_outputs) + list(reference_outputs(problem, cases[len(problem.cases) :]))
    expected_grads = None
    if problem.spec.gradient is not None:
        expected_grads = list(expected_gradients(problem, problem.cases) or [])
        expected_grads += reference_outputs(problem, cases[len(problem.cases) :], "gradient")
    scales: list[Any] | None = None
    if problem.spec.compare.magnitude_function is not None:
        scales = reference_outputs(problem, cases, "magnitude")
    labels = [f"case {case.name}" for case in problem.cases] + [label for label, _ in edges]
    shares: list[Share] = []
    failures: list[str] = []
    for index, case in enumerate(cases):
        ref, exact = references[index], outputs[index]
        if ref is None or isinstance(ref, ReferenceFailure):
            continue  # the reference check reported it
        if isinstance(exact, ReferenceFailure):
            failures.append(f"{labels[index]}: {str(exact).splitlines()[0][:300]}")
            continue
        scale = scales[index] if scales is not None else None
        if isinstance(scale, ReferenceFailure):
            failures.append(
                f"{labels[index]}: the magnitude function failed: {str(scale).splitlines()[0][:300]}"
            )
            continue
        gradient_scale = None
        if problem.spec.gradient is not None:  # the pair a program returns (judge.core.gradients.split_scale)
            scale, gradient_scale = split_scale(scale)
        measured = [measure(ctx, case, ref, exact, "output", labels[index], scale)]
        if expected_grads is not None and gradients is not None:
            grad, exact_grad = expected_grads[index], gradients[index]
            if not isinstance(grad, ReferenceFailure) and exact_grad is not None:
                measured.append(
                    measure(ctx, case, grad, exact_grad, "gradient", labels[index], gradient_scale)
                )
        shares.append(max(measured, key=lambda s: s.share))
    if failures:
        ctx.diag.error(
            "the reference fails in float64 (judge.check.float64_run states the float64 path): "
            + "; ".join(failures[:3]),
            file=file,
        )
    _report(ctx, shares, file)


def edge_inputs(ctx: CheckContext) -> list[tuple[str, Case]]:
    """The validator's EDGE inputs (the limits of the constraints: tiny values, where the CPU flushes
    subnormals), each in its own dtype; a float32 one also in every other allowed dtype whose constraints
    it meets (an EDGE input written for another dtype is left in it: its values were chosen for it)."""
    problem = ctx.loaded
    found: list[tuple[str, Case]] = []
    for at, case in ctx.edges:
        found.append((f"validator.py {at}", case))
        for dtype in problem.spec.dtypes.allowed:
            if dtype == case.dtype or case.dtype != "float32":
                continue
            try:
                inputs = convert_args(problem.spec, case.definition.args, dtype)
                other = Case(case.definition.model_copy(update={"dtype": dtype}), inputs)
                if problem.violations(other):
                    continue
            except (InputError, ProblemError):
                continue
            found.append((f"validator.py {at} in {dtype}", other))
    return found


def _report(ctx: CheckContext, shares: list[Share], file: Path) -> None:
    spec = ctx.loaded.spec
    for dtype in sorted({s.dtype for s in shares}):
        of_dtype = [s for s in shares if s.dtype == dtype]
        worst = max(of_dtype, key=lambda s: s.share)
        limit = spec.accuracy.limit(dtype)
        ctx.diag.note(
            f"{dtype}: the reference's own error is at most {_x(worst.share)} the tolerance "
            f"({worst.case}, {worst.where}; limit {limit:g}x)"
        )
        over = [s for s in of_dtype if s.share > limit]
        if not over:
            continue
        worst = max(over, key=lambda s: s.share)
        values = (
            f" (the reference gives {worst.got:.9g}, float64 gives {worst.exact:.9g})"
            if worst.got is not None and worst.exact is not None
            else ""
        )
        names = "; ".join(s.case for s in over[:5]) + (f" and {len(over) - 5} more" if len(over) > 5 else "")
        ctx.diag.error(
            f"the reference's own error uses {_x(worst.share)} the {dtype} tolerance on {worst.case} at "
            f"{worst.where}{values}; the limit is {limit:g}x ([accuracy] in problem.toml), exceeded on "
            f"{len(over)} input{'s' * (len(over) != 1)} ({names}). A correct solution more accurate than the "
            "reference would be rejected there: compute the reference more accurately (expm1/log1p for "
            "1 - b**t, a stable formula, float32 accumulation), or tighten the constraints (statement and "
            "validator) to keep such inputs out (e.g. subnormals, which the CPU flushes to zero), or, as a "
            "last resort, loosen the tolerance",
            file=file,
        )


def measure(
    ctx: CheckContext,
    case: Case,
    ref: Any,
    exact: Any,
    root: str,
    label: str,
    scale: Any = None,
    backend: str = "cpu",
) -> Share:
    """The largest error share of ``ref`` against the float64 ``exact`` over every float leaf (``label``
    names the case in the result), in tolerances of ``backend``, with the output's magnitudes ``scale``
    (``judge.core.compare``) if any."""
    scaled = scale_leaves(scale) if scale is not None else {}
    tolerance = ctx.loaded.spec.compare.tolerance_on(backend)
    names = ctx.loaded.spec.output.names if ctx.loaded.spec.output.kind == "tuple" else []
    pairs: list[tuple[tuple[Any, ...], Any, Any]] = []
    if not _pair_leaves(ref, exact, (), pairs):
        return Share(label, case.dtype, math.inf, f"{root}: the float64 run has another structure")
    magnitudes: dict[tuple[Any, str], float] = {}
    for keys, a, b in pairs:
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            group = (keys[0] if keys else None, a.dtype.name)
            finite = np.abs(b[np.isfinite(b)].astype(np.float64))
            magnitudes[group] = max(magnitudes.get(group, 0.0), float(finite.max()) if finite.size else 0.0)
    worst = Share(label, case.dtype, 0.0, root)
    for keys, a, b in pairs:
        where = _where(root, keys, names)
        if a.shape != b.shape:
            return Share(label, case.dtype, math.inf, f"{where}: the float64 run has another shape")
        if not (a.dtype.kind == "f" or a.dtype.name == "bfloat16"):
            if a.dtype != b.dtype or not np.array_equal(a, b):
                return Share(label, case.dtype, math.inf, f"{where}: the float64 run differs exactly")
            continue
        if b.dtype != np.float64:
            return Share(
                case.name,
                case.dtype,
                math.inf,
                f"{where}: the float64 run returned {b.dtype} (the reference casts by a path the float64 "
                "run does not map: write casts as x.astype(jnp.float32) with jnp = jax.numpy)",
            )
        if a.size == 0:
            continue
        got, want = a.astype(np.float64), b
        group = (keys[0] if keys else None, a.dtype.name)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            leaf_scale = scaled.get(keys)
            if leaf_scale is not None and leaf_scale.shape != want.shape:
                leaf_scale = None
            bound, _ = element_bounds(
                want, a.dtype, tolerance[a.dtype.name], magnitudes.get(group, 0.0), leaf_scale
            )
            same = (got == want) | (np.isnan(got) & np.isnan(want))
            finite = np.isfinite(got) & np.isfinite(want)
            ratio = np.where(same, 0.0, np.where(finite, np.abs(got - want) / bound, np.inf))
        at = int(np.argmax(ratio))
        share = float(ratio.ravel()[at])
        if share > worst.share:
            worst = Share(label, case.dtype, share, where, float(got.ravel()[at]), float(want.ravel()[at]))
    return worst


def _where(root: str, keys: tuple[Any, ...], names: list[str]) -> str:
    if root == "output" and keys and isinstance(keys[0], int) and keys[0] < len(names):
        return path_str(names[keys[0]], keys[1:])
    if root == "gradient" and keys and isinstance(keys[0], str):
        return path_str(f"gradient w.r.t. {keys[0]}", keys[1:])
    return path_str(root, keys)


def _pair_leaves(a: Any, b: Any, keys: tuple[Any, ...], out: list[tuple[tuple[Any, ...], Any, Any]]) -> bool:
    """Collect (path keys, reference leaf, float64 leaf); False when the two trees differ in structure."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        out.append((keys, a, b))
        return True
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_pair_leaves(a[k], b[k], (*keys, k), out) for k in sorted(a, key=str))
        )
    if isinstance(a, list | tuple):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(_pair_leaves(x, y, (*keys, i), out) for i, (x, y) in enumerate(zip(a, b, strict=True)))
        )
    if isinstance(a, OtherNode):
        return (
            isinstance(b, OtherNode)
            and len(a.children) == len(b.children)
            and all(
                _pair_leaves(x, y, (*keys, i), out)
                for i, (x, y) in enumerate(zip(a.children, b.children, strict=True))
            )
        )
    return bool(a == b)


def _x(share: float) -> str:
    return "inf" if math.isinf(share) else f"{share:.3g}x"


def _timeout_s(ctx: CheckContext) -> float:
    return 120.0 + ctx.loaded.spec.limits.case_time_s * (len(ctx.loaded.cases) + 2 * len(ctx.edges)) * 2


def float64_outputs(
    root: Path, extra: list[Case], count: int, *, timeout_s: float
) -> tuple[list[Any], list[Any] | None] | str:
    """(output or ReferenceFailure per input, gradient or None per input, or None without gradient files)
    from ``judge.check.float64_run`` in a process of its own, for the problem's cases and then ``extra``
    (``count`` in all), or a text saying why it failed."""
    with tempfile.TemporaryDirectory(prefix="judge-float64-") as temp:
        out = Path(temp) / "out"
        out.mkdir()
        inputs = Path(temp) / "extra.json"
        inputs.write_text(
            json.dumps([{"name": c.name, "dtype": c.dtype, "args": c.definition.args} for c in extra])
        )
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "1",
            "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
            "JAX_PLATFORMS": "cpu",
        }
        try:
            done = subprocess.run(
                [sys.executable, "-m", "judge.check.float64_run", str(root), str(out), str(inputs)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
                cwd=str(REPO_ROOT),
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"it took longer than {timeout_s:g} s"
        if done.returncode != 0:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
            return f"it exited {done.returncode}: {' / '.join(tail)}"
        outputs: list[Any] = []
        gradients: list[Any] = []
        for index in range(count):
            error = out / f"{index}.error"
            try:
                if error.is_file():
                    outputs.append(ReferenceFailure(error.read_text()))
                    gradients.append(None)
                    continue
                outputs.append(loads_tree((out / f"{index}.frame").read_bytes()))
                grad = out / f"{index}.gradient.frame"
                gradients.append(loads_tree(grad.read_bytes()) if grad.is_file() else None)
            except (OSError, ProtocolError) as exc:
                return f"it left no output for case {index}: {exc}"
        return outputs, (gradients if any(g is not None for g in gradients) else None)
