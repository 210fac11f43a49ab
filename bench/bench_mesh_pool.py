"""The warm pool's start cost for one-device problems, this checkout against another, side by side.

Issue 26 keeps executors per device count in the pool (``sandbox.session.pool.GradingPool.executor_pool``); a
problem of one device must start, wait and be served as before. Each round starts, in a child process per
checkout (its own ``judge`` and ``sandbox`` on ``sys.path``; the rounds interleave the checkouts, so machine
noise hits both alike), a ``GradingPool`` of ``--size`` pairs on one backend and measures:

  1. ``full``: seconds until every tracer and executor is ready (``wait_full``);
  2. ``first``: the first Run of a one-device problem's examples on that warm pool;
  3. ``close``: closing the pool.

It prints each measure's median and minimum per checkout and their ratios this/baseline (on a loaded host
the minimum, the round the machine disturbed least, is the steadier wall-clock figure), then, for this
checkout only, what the first 8-device job costs (its executors start on first use).

    git worktree add --detach /tmp/mesh-baseline 84c268f   # before the device-mesh work (c52cc5c); the
                                                           # commits between do not import (split commits)
    .venv/bin/python bench/bench_mesh_pool.py --baseline /tmp/mesh-baseline [--rounds 5] [--backend bwrap]
    git worktree remove /tmp/mesh-baseline

``--child ROOT`` is the child's entry point.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = "global-norm-clipping"
SOLUTION = "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py"
MESH_SOLUTION = "tests/fixtures/mesh/device-mesh-sharding/solutions/accepted/with_sharding_constraint.py"
sys.path.insert(0, str(ROOT / "bench"))

from children import before_rooms  # noqa: E402


def child(root: Path, backend_name: str, size: int, slot_base: int, mesh: bool) -> None:
    """One round in ``root``'s engine: start a pool, time it full, one Run, (the mesh job), close."""
    sys.path.insert(0, str(root))
    before_rooms(root)  # a baseline from before the rooms answers the new module names
    from judge.core.grader import grade
    from judge.core.problems import load_problem
    from sandbox.backends import get_backend
    from sandbox.host.resource_limits import SandboxLimits
    from sandbox.session.pool import GradingPool

    problem = load_problem(root / "problems" / PROBLEM)
    code = (root / SOLUTION).read_text()
    backend = get_backend(backend_name)
    out: dict[str, Any] = {}
    started = time.perf_counter()
    pool = GradingPool(backend, SandboxLimits(), size=size, slot_base=slot_base, slots=max(16, 4 * size))
    try:
        if not pool.wait_full(600):
            raise SystemExit("the pool did not fill")
        out["full"] = time.perf_counter() - started

        def source(limits: Any) -> Any:
            return pool.acquire(180, limits)

        begun = time.perf_counter()
        result = grade(problem, code, source, cases=problem.public_cases)
        out["first"] = time.perf_counter() - begun
        out["verdict"] = str(result.verdict)
        if mesh:
            sharded = load_problem(root / "tests" / "fixtures" / "mesh" / "device-mesh-sharding")
            begun = time.perf_counter()
            result = grade(sharded, (root / MESH_SOLUTION).read_text(), source, cases=sharded.public_cases)
            out["mesh_first"] = time.perf_counter() - begun
            begun = time.perf_counter()
            grade(sharded, (root / MESH_SOLUTION).read_text(), source, cases=sharded.public_cases)
            out["mesh_warm"] = time.perf_counter() - begun
            out["mesh_verdict"] = str(result.verdict)
    finally:
        begun = time.perf_counter()
        pool.close()
        backend.close()
        out["close"] = time.perf_counter() - begun
    print(json.dumps(out), flush=True)


def _round(root: Path, backend: str, size: int, slot_base: int, mesh: bool) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", str(root), "--backend", backend, "--size", str(size)]
    argv += ["--slot-base", str(slot_base)] + (["--mesh"] if mesh else [])
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=str(root))
    if done.returncode != 0:
        raise SystemExit(f"{root}: {done.stderr.strip()[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--child", type=Path)
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--size", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--slot-base", type=int, default=700)
    parser.add_argument("--mesh", action="store_true")
    opts = parser.parse_args()
    if opts.child is not None:
        child(opts.child, opts.backend, opts.size, opts.slot_base, opts.mesh)
        return
    if opts.baseline is None:
        parser.error("--baseline is required")
    runs: dict[str, list[dict[str, Any]]] = {"this": [], "baseline": []}
    for r in range(opts.rounds):
        order = [("this", ROOT), ("baseline", opts.baseline)]
        for name, root in order if r % 2 == 0 else order[::-1]:
            runs[name].append(_round(root, opts.backend, opts.size, opts.slot_base, False))
            print(f"round {r + 1} {name}: {runs[name][-1]}", flush=True)
    print(f"\n{opts.backend}, pool of {opts.size} pair(s), {opts.rounds} rounds (s):")
    print(
        f"{'measure':<8} {'median':>8} {'baseline':>9} {'ratio':>7}   {'min':>8} {'baseline':>9} {'ratio':>7}"
    )
    for measure in ("full", "first", "close"):
        this = [x[measure] for x in runs["this"]]
        base = [x[measure] for x in runs["baseline"]]
        med, med_base = statistics.median(this), statistics.median(base)
        low, low_base = min(this), min(base)
        print(
            f"{measure:<8} {med:>8.3f} {med_base:>9.3f} {med / med_base:>7.3f}   "
            f"{low:>8.3f} {low_base:>9.3f} {low / low_base:>7.3f}"
        )
    mesh = _round(ROOT, opts.backend, opts.size, opts.slot_base, True)
    print(
        f"\nthis checkout, an 8-device job on the same pool: first {mesh['mesh_first']:.2f} s "
        f"(its executors start then), next {mesh['mesh_warm']:.2f} s ({mesh['mesh_verdict']})"
    )


if __name__ == "__main__":
    main()
