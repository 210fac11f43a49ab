"""What the op policy (``sandbox.inside.op_policy``) costs per program, and what the rejected alternative
for sorts (rewriting every sort to a stable one) would cost per run.

Part 1: the corpus programs the policy's table comes from (``sandbox.inside.op_corpus``, ~70 programs of
every kind, from a dozen ops to a few thousand) and programs shaped like the seed problems are lowered
once; then, interleaved in one run, each parsed program is checked by what the executor checked before
the policy (the op summary and the custom-call contracts: "off") and by that plus the policy ("on"). The
p50 per program, the sum over all programs and the ratio are printed, with the programs' op counts.

Part 2: a sort of ``--n`` float32 values with JAX's comparator, compiled unstable (what ``jnp.argsort``
with ``stable=False`` / ``lax.sort(is_stable=False)`` asks for) and stable (the rewrite), p50 run time.

    .venv/bin/python bench/bench_op_policy.py [--repeats 30] [--n 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

from sandbox.inside import op_corpus
from sandbox.inside.contracts import Contracts
from sandbox.inside.lowering import Lowerer, parse
from sandbox.inside.op_policy import COMMON_SORTS as COMMON
from sandbox.inside.op_policy import Policy
from sandbox.inside.program_checks import allowed_custom_calls, summarize


def _seed_like() -> list[tuple[str, Any, tuple[Any, ...]]]:
    struct: Any = jax.ShapeDtypeStruct
    tree = {
        "layers": [{"w": struct((8, 16, 4), jnp.float32), "b": struct((8, 4), jnp.float32)} for _ in range(6)]
    }

    def clip(t: Any) -> Any:
        leaves = jax.tree.leaves(t)
        norm = jnp.sqrt(sum(jnp.sum(x.astype(jnp.float32) ** 2) for x in leaves))
        scale = jnp.minimum(1.0, 1.0 / jnp.maximum(norm, 1e-30))
        return jax.tree.map(lambda g: g * scale, t), norm

    def scan(t: Any) -> Any:
        def step(carry: Any, xs: Any) -> Any:
            return carry + sum(jnp.sum(x * x) for x in jax.tree.leaves(xs)), None

        return jax.lax.scan(step, jnp.float32(0.0), t)[0]

    def attention(q: Any, k: Any) -> Any:
        s = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
        return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), k), jnp.argsort(s, axis=-1)

    qk = (struct((4, 16, 8), jnp.float32), struct((4, 16, 8), jnp.float32))
    return [("clip", clip, (tree,)), ("scan", scan, (tree,)), ("attention+argsort", attention, qk)]


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def policy_cost(repeats: int) -> None:
    programs: list[tuple[str, bytes]] = []
    lower = Lowerer()
    for name, function, specs in [*_seed_like(), *op_corpus.entries()]:
        programs.append((name, lower(jax.jit(function).trace(*specs).jaxpr)))
    contracts = Contracts(allowed_custom_calls(), lower)
    start = time.perf_counter()
    policy = Policy(op_corpus.load_table())
    made_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    policy.comparators.warm()
    warm_ms = (time.perf_counter() - start) * 1000
    rows = []
    for name, data in programs:
        with mlir.make_ir_context():
            module = parse(ir, data)
            ops = sum(summarize(ir, module)["ops"].values())
            contracts.check(module)  # derive the custom-call contracts once, as a warm executor has
            policy.check(module)  # derive a rare sort signature once (cached per process)
            off: list[float] = []
            on: list[float] = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                summarize(ir, module)
                contracts.check(module)
                t1 = time.perf_counter()
                summarize(ir, module)
                contracts.check(module)
                policy.check(module)
                t2 = time.perf_counter()
                off.append(t1 - t0)
                on.append(t2 - t1)
        rows.append((name, ops, _p50(off), _p50(on)))
    rows.sort(key=lambda r: r[1])
    print(
        f"policy: table loaded in {made_ms:.1f} ms, {len(COMMON)} common sort comparators derived in "
        f"{warm_ms:.0f} ms"
    )
    print(f"{'program':34} {'ops':>6} {'off ms':>8} {'on ms':>8} {'on/off':>7} {'policy ms':>10}")
    for name, ops, off_ms, on_ms in rows[:: max(1, len(rows) // 15)] + rows[-1:]:
        print(
            f"{name[:34]:34} {ops:6d} {off_ms:8.3f} {on_ms:8.3f} {on_ms / off_ms:7.2f} {on_ms - off_ms:10.3f}"
        )
    total_off = sum(r[2] for r in rows)
    total_on = sum(r[3] for r in rows)
    per_op = statistics.median((r[3] - r[2]) / r[1] * 1000 for r in rows)
    p50 = statistics.median(r[3] - r[2] for r in rows)
    print(
        f"all {len(rows)} programs: off {total_off:.1f} ms, on {total_on:.1f} ms, ratio "
        f"{total_on / total_off:.2f}; policy p50 {p50:.3f} ms per program, {per_op:.1f} us per op"
    )


def sort_rewrite_cost(n: int, repeats: int) -> None:
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    times = {}
    for stable in (False, True):
        fn = jax.jit(lambda v, s=stable: jax.lax.sort(v, is_stable=s))
        fn(x).block_until_ready()
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn(x).block_until_ready()
            samples.append(time.perf_counter() - t0)
        times[stable] = _p50(samples)
    print(
        f"sort of {n} f32, JAX's comparator: unstable {times[False]:.1f} ms, stable (the rewrite) "
        f"{times[True]:.1f} ms, ratio {times[True] / times[False]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--n", type=int, default=1_000_000)
    opts = parser.parse_args()
    policy_cost(opts.repeats)
    sort_rewrite_cost(opts.n, max(5, opts.repeats // 3))


if __name__ == "__main__":
    main()
