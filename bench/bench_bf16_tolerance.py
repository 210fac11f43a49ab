"""How far honest bfloat16 formulations and systematic errors land from the reference, in tolerances.

    .venv/bin/python bench/bench_bf16_tolerance.py [--random 60] [--seed 11]

For each seed problem, every variant below runs under ``jax.jit`` (the sandbox's XLA flags) on the
problem's bfloat16 hidden cases plus ``--random`` random bfloat16 cases within its constraints, and is
compared with the reference by ``judge.core.compare`` with the problem's own tolerances. Printed per variant:
the worst error as a multiple of the tolerance on the worst case and on the mildest case (honest variants must
stay well inside on every case, below the bfloat16 ``well_inside``; the systematic errors should land
outside, at ``well_outside`` or more), and how many cases reject it. This is the measurement behind the
bfloat16 tolerance (docs/architecture.md, "Comparison").
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from sandbox.host.command import FAST_COMPILE_XLA_FLAGS

os.environ.setdefault("XLA_FLAGS", FAST_COMPILE_XLA_FLAGS)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np

from judge.casegen import bf16, num, random_tree
from judge.core.compare import bind
from judge.core.expected import reference_outputs
from judge.core.problems import Case, Problem, ProblemSet
from judge.core.spec import CaseDef
from judge.core.trusted_jax import to_host

F32 = jnp.float32
Variant = Callable[..., Any]


def _norm(grads: Any) -> Any:
    return jnp.sqrt(sum(jnp.sum(jnp.square(x.astype(F32))) for x in jax.tree.leaves(grads)))


def _off(factor: float) -> Callable[[Any], Any]:
    def scale(x: Any) -> Any:
        return (x.astype(F32) * factor).astype(x.dtype) if x.dtype == jnp.bfloat16 else x

    return scale


def gn_variants() -> dict[str, Variant]:
    def scale_f32(grads: Any, c: Any) -> Any:
        n = _norm(grads)
        s = jnp.minimum(1.0, c / n)
        return {
            "clipped": jax.tree.map(lambda g: (g.astype(F32) * s).astype(g.dtype), grads),
            "global_norm": n,
        }

    def scale_bf16(grads: Any, c: Any) -> Any:
        n = _norm(grads)
        s = jnp.minimum(1.0, c / n)
        return {"clipped": jax.tree.map(lambda g: g * s.astype(g.dtype), grads), "global_norm": n}

    def optax(grads: Any, c: Any) -> Any:
        n = _norm(grads)
        return {
            "clipped": jax.tree.map(lambda t: jnp.where(n < c, t, (t / n.astype(t.dtype)) * c), grads),
            "global_norm": n,
        }

    def divide_bf16(grads: Any, c: Any) -> Any:
        n = _norm(grads)
        shrink = jnp.maximum(n / c, 1.0)
        return {"clipped": jax.tree.map(lambda g: g / shrink.astype(g.dtype), grads), "global_norm": n}

    def reversed_sum(grads: Any, c: Any) -> Any:
        leaves = [x.astype(F32) for x in reversed(jax.tree.leaves(grads))]
        n = jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))
        s = c / jnp.maximum(n, c)
        return {
            "clipped": jax.tree.map(lambda g: (g.astype(F32) * s).astype(g.dtype), grads),
            "global_norm": n,
        }

    def off(factor: float) -> Variant:
        def wrong(grads: Any, c: Any) -> Any:
            out = scale_f32(grads, c)
            return {"clipped": jax.tree.map(_off(factor), out["clipped"]), "global_norm": out["global_norm"]}

        return wrong

    return {
        "honest: scale in float32, cast": scale_f32,
        "honest: scale cast to bf16": scale_bf16,
        "honest: optax divide+multiply in bf16": optax,
        "honest: divide by shrink in bf16": divide_bf16,
        "honest: reversed vdot sum": reversed_sum,
        "error: 1% high": off(1.01),
        "error: 2% high": off(1.02),
        "error: 2% low": off(0.98),
        "error: 3% high": off(1.03),
    }


def sgd_variants() -> dict[str, Variant]:
    def natural(p: Any, g: Any, v: Any, lr: Any, mu: Any) -> Any:
        nv = jax.tree.map(lambda g, v: mu * v + g, g, v)
        return jax.tree.map(lambda p, v: p - lr * v, p, nv), nv

    def f32_then_cast(p: Any, g: Any, v: Any, lr: Any, mu: Any) -> Any:
        v32 = jax.tree.map(lambda g, v: mu * v.astype(F32) + g.astype(F32), g, v)
        new_p = jax.tree.map(lambda p, v: (p.astype(F32) - lr * v).astype(p.dtype), p, v32)
        return new_p, jax.tree.map(lambda p, v: v.astype(p.dtype), p, v32)

    def optax_trace(p: Any, g: Any, v: Any, lr: Any, mu: Any) -> Any:
        tr = jax.tree.map(lambda g, t: g + mu * t, g, v)
        return jax.tree.map(lambda p, t: p + (-lr * t), p, tr), tr

    def v_bf16_p_f32(p: Any, g: Any, v: Any, lr: Any, mu: Any) -> Any:
        nv = jax.tree.map(lambda g, v: g + v * mu, g, v)
        return jax.tree.map(lambda p, v: (p.astype(F32) - lr * v.astype(F32)).astype(p.dtype), p, nv), nv

    def off(factor: float) -> Variant:
        def wrong(*args: Any) -> Any:
            new_p, new_v = natural(*args)
            return jax.tree.map(_off(factor), new_p), jax.tree.map(_off(factor), new_v)

        return wrong

    return {
        "honest: natural bf16 arithmetic": natural,
        "honest: float32 then cast": f32_then_cast,
        "honest: optax trace": optax_trace,
        "honest: velocity bf16, step float32": v_bf16_p_f32,
        "error: 1% high": off(1.01),
        "error: 2% high": off(1.02),
        "error: 2% low": off(0.98),
        "error: 3% high": off(1.03),
    }


SHAPES = {"a": (24, 16), "b": [{"w": (20,)}, {"w": ()}, {"w": (3,)}]}


def random_cases(problem: Problem, count: int, rng: np.random.Generator) -> list[Case]:
    """Random bfloat16 cases within the problem's constraints (realistic steps for sgd-momentum)."""
    from judge.core.problems import convert_args

    cases = []
    for i in range(count):
        scale = float(10 ** rng.uniform(-3, 2))
        if problem.slug == "global-norm-clipping":
            grads = random_tree(rng, SHAPES, scale, bf16)
            norm = float(
                np.sqrt(sum(np.sum(np.square(np.asarray(x, np.float64))) for x in jax.tree.leaves(grads)))
            )
            args: dict[str, Any] = {"grads": grads, "max_norm": num(max(norm * rng.uniform(0.05, 1.5), 1e-6))}
        else:
            args = {
                "params": random_tree(rng, SHAPES, scale, bf16),
                "grads": random_tree(rng, SHAPES, scale * rng.uniform(0.01, 1), bf16),
                "velocity": random_tree(rng, SHAPES, scale * rng.uniform(0.01, 1), bf16),
                "learning_rate": num(rng.uniform(0, 0.5)),
                "momentum": num(rng.uniform(0, 0.999)),
            }
        definition = CaseDef(name=f"random_{i}", visibility="hidden", dtype="bfloat16", args=args)
        cases.append(Case(definition, convert_args(problem.spec, args, "bfloat16")))
    return cases


def measure(problem: Problem, variants: dict[str, Variant], cases: list[Case]) -> None:
    checker = bind(problem.spec.compare, problem.spec.output)
    expected = reference_outputs(problem, cases)
    tol = problem.spec.compare.tolerance["bfloat16"]
    print(f"\n{problem.slug}: {len(cases)} bfloat16 cases; tolerance {tol.describe()}")
    print(f"  want honest < {tol.well_inside:g}x, errors >= {tol.well_outside:g}x")
    print(f"  {'variant':<40} {'worst case':>10} {'mildest case':>12} {'rejected by':>12}")
    for name, fn in variants.items():
        jitted = jax.jit(fn)
        ratios = []
        for case, exp in zip(cases, expected, strict=True):
            args = [a if isinstance(a, float) else jax.device_put(a) for a in case.inputs]
            ratios.append(checker(exp, to_host(jitted(*args))).max_error_ratio)
        rejecting = sum(r > 1 for r in ratios)
        print(f"  {name:<40} {max(ratios):>9.2f}x {min(ratios):>11.2f}x {rejecting:>7}/{len(cases)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--random", type=int, default=60, help="random cases per problem (default 60)")
    parser.add_argument("--seed", type=int, default=11)
    opts = parser.parse_args()
    problems = ProblemSet()
    for slug, variants in (("global-norm-clipping", gn_variants()), ("sgd-momentum", sgd_variants())):
        problem = problems.get(slug)
        rng = np.random.default_rng(opts.seed)
        cases = [c for c in problem.hidden_cases if c.dtype == "bfloat16"] + random_cases(
            problem, opts.random, rng
        )
        measure(problem, variants, cases)


if __name__ == "__main__":
    main()
