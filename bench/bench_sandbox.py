"""Latency of grading one example case, from code in to result decoded, three ways in one run:

  floor   in this process, no sandbox: the solution under a fresh jax.jit (trace, lower, compile, run)
  warm    the bwrap GradingPool: a forked tracer + a warm executor, ready before the submission
  cold    a bwrap tracer and executor started for the submission: start + import JAX + the session

plus what a warm pool pays to refill: a tracer forked from the zygote until it is ready, against a tracer
started on its own (a fresh ``import jax``). Variants are interleaved so machine noise hits them alike.
Prints p50/p95 per variant and the ratios.

    .venv/bin/python bench/bench_sandbox.py [-n 20] [--problem sgd-momentum]

Runs as root (the bwrap backend drops sandboxed code to its own uids).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.host.command import EXECUTOR, program_env  # noqa: E402

# The floor must compile with the same XLA flags as the sandboxed programs: set them before JAX loads.
for key in ("XLA_FLAGS", "JAX_PLATFORMS", "JAX_ENABLE_X64", "TF_CPP_MIN_LOG_LEVEL"):
    os.environ[key] = program_env(str(ROOT), module=EXECUTOR)[key]

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

from judge.core.expected import expected_outputs  # noqa: E402
from judge.core.grader import grade  # noqa: E402
from judge.core.problems import Problem, ProblemSet  # noqa: E402
from judge.core.trusted_jax import import_jax  # noqa: E402
from sandbox.backends.bwrap import BwrapBackend  # noqa: E402
from sandbox.host.resource_limits import SandboxLimits  # noqa: E402
from sandbox.session.pool import GradingPool  # noqa: E402

LIMITS = SandboxLimits(case_time_s=10.0, wall_time_s=60.0, startup_time_s=120.0)
SOLUTIONS = {
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=20, help="submissions per variant")
    parser.add_argument("--problem", default="sgd-momentum", choices=sorted(SOLUTIONS))
    opts = parser.parse_args()
    backend = BwrapBackend()
    why = backend.available()
    if why is not None:
        raise SystemExit(f"bwrap is not available here: {why}")
    problem: Problem = ProblemSet(ROOT / "problems").get(opts.problem)
    code = (ROOT / SOLUTIONS[opts.problem]).read_text()
    cases = problem.cases[:1]
    expected_outputs(problem, cases)
    jax = import_jax()
    print(f"problem {opts.problem}, one example case, n={opts.n}, cpus={os.cpu_count()}")
    print(f"XLA_FLAGS={os.environ['XLA_FLAGS']!r} (floor and sandbox alike)")

    def floor() -> bool:
        scope: dict[str, Any] = {}
        exec(compile(code, "solution.py", "exec"), scope)
        fn = jax.jit(lambda *a: scope[problem.spec.function](*a))
        args = [a if isinstance(a, float) else jax.device_put(a) for a in cases[0].inputs]
        jax.block_until_ready(fn(*args))
        return True

    pool = GradingPool(backend, LIMITS, size=2, slot_base=720, slots=16)

    def warm() -> bool:
        return grade(problem, code, lambda limits, **kw: pool.acquire(60, limits, **kw), cases=cases).accepted

    def cold() -> bool:
        return grade(problem, code, lambda limits, **_: backend.start_pair(limits, 740), cases=cases).accepted

    def fork_ready() -> bool:
        tracer = backend.fork_tracer(LIMITS, 760)
        tracer.wait_ready(120)
        tracer.close()
        return True

    def start_ready() -> bool:
        tracer = backend.start_tracer(LIMITS, 760)
        tracer.wait_ready(120)
        tracer.close()
        return True

    variants: dict[str, Callable[[], bool]] = {
        "floor": floor,
        "warm": warm,
        "cold": cold,
        "fork tracer": fork_ready,
        "start tracer": start_ready,
    }
    for fn in variants.values():  # one untimed round: first-use costs of this process
        pool.wait_full(300)
        fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(opts.n):
        for name, fn in variants.items():
            pool.wait_full(300)
            started = time.perf_counter()
            if not fn():
                raise SystemExit(f"{name}: a correct solution was not accepted")
            times[name].append((time.perf_counter() - started) * 1000)
    pool.close()
    backend.close()
    print(f"\n{'variant':14s} {'p50 ms':>9s} {'p95 ms':>9s}")
    for name, values in times.items():
        print(f"{name:14s} {pct(values, 0.5):9.1f} {pct(values, 0.95):9.1f}")
    p50 = {name: pct(values, 0.5) for name, values in times.items()}
    print(
        f"\nwarm/floor {p50['warm'] / p50['floor']:5.2f}x   cold/warm {p50['cold'] / p50['warm']:5.1f}x   "
        f"start/fork (refilling a pool) {p50['start tracer'] / p50['fork tracer']:5.1f}x"
    )


if __name__ == "__main__":
    main()
