"""What the executor's loop walk (``sandbox.inside.program_checks.loop_ops``) adds to summarizing a program.

Programs the seed problems and the new ones produce are exported once; then, interleaved in one run,
each is summarized by the op-histogram walk alone (what the executor did before program rules) and by the
histogram walk plus the loop walk, and the p50 times and their ratio are printed, next to the program's
compile time for scale.

    .venv/bin/python bench/bench_program_summary.py [--repeats 200]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

from sandbox.inside.lowering import Lowerer, parse
from sandbox.inside.program_checks import loop_ops


def _clip(tree: Any) -> Any:  # global-norm-clipping's shape of program
    leaves = jax.tree.leaves(tree)
    norm = jnp.sqrt(sum(jnp.sum(x.astype(jnp.float32) ** 2) for x in leaves))
    scale = jnp.minimum(1.0, 1.0 / jnp.maximum(norm, 1e-30))
    return {"clipped": jax.tree.map(lambda g: (g * scale).astype(g.dtype), tree), "global_norm": norm}


def _scan(tree: Any) -> Any:  # grad-accumulation-scan's shape of program
    def step(carry: Any, xs: Any) -> Any:
        return carry + sum(jnp.sum(x * x) for x in jax.tree.leaves(xs)), None

    return jax.lax.scan(step, jnp.float32(0.0), tree)[0]


def _ste(tree: Any) -> Any:  # straight-through-estimator's program with its gradient
    def fn(t: Any) -> Any:
        return jax.tree.map(lambda v: v + jax.lax.stop_gradient(jnp.round(v) - v), t)

    out, pullback = jax.vjp(fn, tree)
    return out, pullback(jax.tree.map(jnp.ones_like, out))


PROGRAMS: dict[str, Callable[[Any], Any]] = {"clip": _clip, "scan": _scan, "ste+vjp": _ste}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=200)
    opts = parser.parse_args()
    tree = {"layers": [{"w": jnp.zeros((8, 16, 4)), "b": jnp.zeros((8, 4))} for _ in range(6)]}
    struct: Any = jax.ShapeDtypeStruct
    specs = jax.tree.map(lambda x: struct(x.shape, x.dtype), tree)
    print(f"{'program':10} {'ops':>6} {'histogram p50':>14} {'+ loop walk p50':>16} {'ratio':>6}")
    for name, fn in PROGRAMS.items():
        data = Lowerer()(jax.jit(fn).trace(specs).jaxpr)
        with mlir.make_ir_context():
            module = parse(ir, data)
            base: list[float] = []
            full: list[float] = []
            count = 0
            for _ in range(opts.repeats):
                for variant in (base, full):
                    ops: collections.Counter[str] = collections.Counter()

                    def visit(op: Any, ops: collections.Counter[str] = ops) -> Any:
                        ops[op.name] += 1
                        return ir.WalkResult.ADVANCE

                    started = time.perf_counter()
                    module.operation.walk(visit)
                    if variant is full:
                        loop_ops(ir, module)
                    variant.append((time.perf_counter() - started) * 1000)
                    count = sum(ops.values())
            b, f = statistics.median(base), statistics.median(full)
            print(f"{name:10} {count:>6} {b:>12.3f}ms {f:>14.3f}ms {f / b:>6.2f}")


if __name__ == "__main__":
    main()
