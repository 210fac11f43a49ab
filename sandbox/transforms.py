"""Transformation checks: the gradient a problem checks beside the value, computed the same way on both sides.

A problem that declares ``[gradient]`` (``judge.spec.GradientSpec``) is judged on its function's output AND
on the vector-Jacobian product of that function with respect to some of its traced arguments, for a fixed
cotangent. The tracer exports ONE program per signature that returns both, ``(output, {arg: gradient})``
(``with_gradient``, with JAX references it captured before user code loaded), so the gradient is computed by
the program the executor runs, like the output; the judge computes the reference's the same way (the same
function, the reference in place of the user's) and compares the two parts separately.

The cotangent is built inside the program from each output leaf's shape and dtype (``cotangent``):
``ones``, or ``pattern``: ``1, 1.25, 1.5, 1.75, -1, -1.25, -1.5, -1.75, 1, ...`` in flattened order, exact
in bfloat16, so a backward pass that ignores the incoming cotangent, or gets its sign or scale wrong, is
caught. This module imports nothing from JAX itself: callers pass the modules and functions they trust.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

#: Cotangent kinds a problem may declare.
COTANGENTS = ("ones", "pattern")


def cotangent(jnp: Any, shape: tuple[int, ...], dtype: Any, kind: str) -> Any:
    """The cotangent for one output leaf (see the module docstring)."""
    if kind == "ones":
        return jnp.ones(shape, dtype)
    count = 1
    for dim in shape:
        count *= int(dim)
    k = jnp.arange(count, dtype=jnp.float32)
    sign = jnp.where((k // 4) % 2 == 0, 1.0, -1.0)
    return ((1.0 + (k % 4) * 0.25) * sign).astype(dtype).reshape(shape)


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
    grads = pullback(tree_map(lambda leaf: cotangent(jnp, leaf.shape, leaf.dtype, kind), out))
    return out, dict(zip(names, grads, strict=True))
