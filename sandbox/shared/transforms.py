"""Transformation checks: the gradient a problem checks beside the value, computed the same way on both sides.

A problem that declares ``[gradient]`` (``judge.core.spec.GradientSpec``) is judged on its function's output
AND on the vector-Jacobian product of that function with respect to some of its traced arguments, for a fixed
cotangent. The tracer exports ONE program per signature that returns both, ``(output, {arg: gradient})``
(``with_gradient``, with JAX references it captured before user code loaded), so the gradient is computed by
the program the executor runs, like the output; the judge computes the reference's the same way (the same
function, the reference in place of the user's) and compares the two parts separately.

The cotangent is built inside the program from each output leaf's shape and dtype (``cotangent``):
``ones``, or ``pattern``: element ``k`` of leaf ``j`` (flattened order, leaves in flatten order) is
``(1 + (i % 4) / 4) * SCALES[i % 5]``, negated when ``(i // 4)`` is odd, with ``i = k + 3 j``: magnitudes
from 1/64 to 112, exact in bfloat16. So a backward pass that ignores the incoming cotangent, gets its sign or
scale wrong, clips it at any bound up to 112, or swaps the gradients of two leaves of one shape, is
caught. This module imports nothing from JAX itself: callers pass the modules and functions they trust.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

#: Cotangent kinds a problem may declare.
COTANGENTS = ("ones", "pattern")


#: The pattern's powers of two, cycled with a period (5) prime to the mantissas' and signs' (4 and 8).
SCALES = (1.0, 8.0, 0.125, 64.0, 0.015625)
#: How far the pattern moves from one output leaf to the next.
LEAF_SHIFT = 3


def cotangent(jnp: Any, shape: tuple[int, ...], dtype: Any, kind: str, leaf: int = 0) -> Any:
    """The cotangent for output leaf number ``leaf`` (see the module docstring)."""
    if kind == "ones":
        return jnp.ones(shape, dtype)
    count = 1
    for dim in shape:
        count *= int(dim)
    i = jnp.arange(count, dtype=jnp.int32) + LEAF_SHIFT * leaf
    sign = jnp.where((i // 4) % 2 == 0, 1.0, -1.0)
    scale = jnp.asarray(SCALES, jnp.float32)[i % len(SCALES)]
    mantissa = 1.0 + (i % 4).astype(jnp.float32) * 0.25
    return (mantissa * scale * sign).astype(dtype).reshape(shape)


def with_gradient(
    fn: Callable[..., Any],
    args: Sequence[Any],
    wrt: Sequence[int],
    names: Sequence[str],
    kind: str,
    *,
    vjp: Callable[..., Any],
    tree_map: Callable[..., Any],
    jnp: Any,
) -> tuple[Any, dict[str, Any]]:
    """``(fn(*args), {names[i]: d<cotangent, fn(*args)>/d args[wrt[i]]})`` in one trace."""

    def partial(*chosen: Any) -> Any:
        full = list(args)
        for index, value in zip(wrt, chosen, strict=True):
            full[index] = value
        return fn(*full)

    out, pullback = vjp(partial, *(args[i] for i in wrt))
    numbered = itertools.count()  # tree_map visits the leaves in flatten order: each its own stretch
    grads = pullback(tree_map(lambda leaf: cotangent(jnp, leaf.shape, leaf.dtype, kind, next(numbered)), out))
    return out, dict(zip(names, grads, strict=True))
