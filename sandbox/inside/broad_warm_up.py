"""The broad warm-up: a small program of the op kinds jobs use most, which a forked executor compiles and runs
before it reports ready when the judge asks for it (``warm_up: "broad"`` in the fork request).

A forked executor is a fresh process: XLA sets up much of its code generation lazily, per op kind (the
kernels of reductions, transcendentals, dots, loops, sorts, conversions), and the pages of that code are
not yet mapped in it. The first programs of its one job paid that on their clock; an executor that served
many jobs (the design before issue 36) had paid it long before. Compiling this program first moves it off
the job's clock: measured side by side (``bench/bench_checkouts.py``), a Run of the examples went from
1.12x to 1.03x of a long-lived executor's, for ~35 ms more CPU per executor. That CPU is why the judge asks
for it only while the pool serves no job (``sandbox.session.pool.ExecutorPool``): on an idle host it is
free, on a busy one it would come out of throughput.

The program is lowered once, in the executor zygote, with ``lax`` alone (some ``jax.numpy`` functions make
a concrete array while they trace, which would start an XLA backend, and a zygote must not have one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.inside.lowering import Lowerer
from sandbox.shared.wire import DTYPES

#: The program's inputs: two float32 matrices, an int32 vector, a bfloat16 vector.
SHAPES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("float32", (4, 4)),
    ("float32", (4, 4)),
    ("int32", (4,)),
    ("bfloat16", (4,)),
)


def _program(x: Any, y: Any, i: Any, b: Any) -> list[Any]:
    import jax.numpy as jnp
    from jax import lax

    a = lax.exp(x) + lax.log1p(lax.abs(y)) + lax.sqrt(lax.abs(x)) * lax.rsqrt(1 + y * y) + lax.tanh(x)
    s = lax.reduce_sum(a, (0,)) + lax.reduce_max(a, (1,)) - lax.reduce_min(a, (1,))
    d = lax.dot_general(x, y, (((1,), (1,)), ((), ())))
    c = lax.select(d > 0, d, -d).astype(jnp.bfloat16).astype(jnp.float32)
    k = lax.rem(lax.shift_right_logical(i * 3 + 1, 1) ^ (i & 7), 4)
    g = lax.dynamic_slice_in_dim(x, k[0], 1, 0)
    ordered = lax.sort(s)
    w = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (i[0], s))[1]
    halves = b.astype(jnp.float16) * 2
    return [c, g, ordered, w, halves, lax.concatenate([s, ordered], 0), lax.transpose(x, (1, 0))]


def broad_module() -> bytes:
    """The program, lowered for one device (no backend needed)."""
    import jax

    specs = [jax.ShapeDtypeStruct(shape, DTYPES[dtype]) for dtype, shape in SHAPES]  # type: ignore[no-untyped-call]
    return Lowerer(1)(jax.jit(_program).trace(*specs).jaxpr)


def broad_inputs() -> list[np.ndarray]:
    """Inputs to run it on once compiled (ones: the values do not matter)."""
    return [np.ones(shape, DTYPES[dtype]) for dtype, shape in SHAPES]
