"""The tracer/executor split against today's single-process harness, side by side in one run (issue 13).

Both designs run in the bwrap sandbox behind a warm pool, interleaved so machine noise hits them alike:

  new      GradingPool: tracers forked from the zygote (one per submission) + long-lived executors
  today    bench/legacy_sandbox: the harness before the split, one warm worker (a fresh JAX import) per
           submission, driven by its own monitor and grading path, compiling with the XLA flags it
           shipped with (``--today-flags current``: with today's flags, which compile ~35% cheaper)
  floor    in this process, no sandbox: the solution under a fresh jax.jit on each public case

Prints (targets of issue 13 in brackets):
  1. Submit wall time, warm pools, new vs today                         [new <= 1.15x today]
  2. Run of the examples (public cases), new vs the in-process floor   [new <= 1.3x floor]
  3. Submits per second at concurrency 1 and 2, new vs today            [new >= 2x today at 2]
  4. the judge's peak RSS while a sandboxed process floods it with 100 near-1 MiB frames, new vs today
  5. a Run then a Submit of the same code, executors caching compiled programs per job vs per process

    .venv/bin/python bench/bench_integrity.py [--repeats 5] [--burst 8] [--blocks 3]
                                              [--problem global-norm-clipping]

Runs as root (bwrap drops sandboxed code to its own uids). ``--flood new|today`` is the subprocess of 4.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.command import EXECUTOR, program_env  # noqa: E402

# The floor must compile with the same XLA flags as the sandboxed programs: set them before JAX loads.
for key in ("XLA_FLAGS", "JAX_PLATFORMS", "JAX_ENABLE_X64", "TF_CPP_MIN_LOG_LEVEL"):
    os.environ[key] = program_env(str(ROOT), module=EXECUTOR)[key]

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import replace  # noqa: E402
from typing import Any  # noqa: E402

from bench.legacy_sandbox.grade import legacy_grade  # noqa: E402
from judge.expected import expected_outputs  # noqa: E402
from judge.grader import grade  # noqa: E402
from judge.problems import Problem, ProblemSet  # noqa: E402
from judge.trusted_jax import import_jax  # noqa: E402
from sandbox.base import PopenWorker  # noqa: E402
from sandbox.bwrap import BwrapBackend, BwrapSettings  # noqa: E402
from sandbox.limits import SandboxLimits  # noqa: E402
from sandbox.pool import GradingPool, WorkerPool  # noqa: E402

LIMITS = SandboxLimits()
SOLUTIONS = {
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
}


# ------------------------------------------------------------------------------------------ the designs


class New:
    def __init__(self, slot_base: int, cache_scope: str = "job") -> None:
        self.backend = BwrapBackend(BwrapSettings(executor_cache_scope=cache_scope))
        self.pool = GradingPool(self.backend, LIMITS, size=2, slot_base=slot_base, slots=32)

    def submit(self, problem: Problem, code: str, cases: Any = None) -> bool:
        result = grade(problem, code, lambda limits, **kw: self.pool.acquire(120, limits, **kw), cases=cases)
        return result.accepted

    def settle(self) -> None:
        self.pool.wait_full(300)

    def close(self) -> None:
        self.pool.close()
        self.backend.close()


#: The XLA flags today's design shipped with (before ``--xla_cpu_parallel_codegen_split_count=1``).
SHIPPED_XLA_FLAGS = (
    "--xla_cpu_use_fusion_emitters=false --xla_backend_optimization_level=0 "
    "--xla_llvm_disable_expensive_passes=true"
)


class Today:
    def __init__(self, slot_base: int, xla_flags: str = SHIPPED_XLA_FLAGS) -> None:
        settings = BwrapSettings(code_dir=ROOT / "bench" / "legacy_sandbox", xla_flags=xla_flags)
        self.backend = BwrapBackend(settings)
        backend = self.backend

        def start(limits: SandboxLimits, slot: int) -> Any:
            return backend._start_in(limits, slot, "sandbox.harness", backend.uid(slot))

        self.pool = WorkerPool(backend, LIMITS, size=2, slot_base=slot_base, slots=32, start=start)

    def submit(self, problem: Problem, code: str, cases: Any = None) -> bool:
        return legacy_grade(problem, code, self.pool.acquire(120), cases)

    def settle(self) -> None:
        self.pool.wait_full(300)

    def close(self) -> None:
        self.pool.close()


class Floor:
    """No sandbox: a fresh jax.jit of the solution on each case (trace, lower, compile, run)."""

    def __init__(self) -> None:
        self.jax = import_jax()

    def run(self, problem: Problem, code: str, cases: Any) -> bool:
        scope: dict[str, Any] = {}
        exec(compile(code, "solution.py", "exec"), scope)
        for case in cases:
            fn = self.jax.jit(lambda *a, f=scope[problem.spec.function]: f(*a))
            args = [a if isinstance(a, float) else self.jax.device_put(a) for a in case.inputs]
            self.jax.block_until_ready(fn(*args))
        return True


# ------------------------------------------------------------------------------------------ measuring


def timed(fn: Callable[[], bool]) -> float:
    started = time.perf_counter()
    if not fn():
        raise SystemExit("a correct solution was not accepted")
    return time.perf_counter() - started


def p50(values: list[float]) -> float:
    return statistics.median(values)


def throughput(design: New | Today, problem: Problem, code: str, burst: int, concurrency: int) -> float:
    """Submissions per second: ``burst`` submissions by ``concurrency`` threads, pools refilling meanwhile."""
    design.settle()
    remaining = [burst]
    lock = threading.Lock()
    failures: list[str] = []

    def worker() -> None:
        while True:
            with lock:
                if remaining[0] == 0:
                    return
                remaining[0] -= 1
            if not design.submit(problem, code):
                failures.append("rejected")

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit("a correct solution was not accepted")
    return burst / (time.perf_counter() - started)


FLOOD_TRACER = r"""
import os, struct, sys, json
fd = int(sys.argv[sys.argv.index("--result-fd") + 1])
def frame(message, blob=b""):
    data = json.dumps(message).encode()
    return struct.pack(">II", 4 + len(data) + len(blob), len(data)) + data + blob
def old(message):
    data = json.dumps(message).encode()
    return struct.pack(">I", len(data)) + data
os.write(fd, frame({"type": "ready", "pid": os.getpid()}))
sys.stdin.buffer.read(4)
pad = [0.25] * 170_000  # ~1 MiB of JSON that decodes into ~5 MB of Python objects
for _ in range(100):
    if sys.argv[1] == "new":
        data = frame({"type": "program", "sig": 0, "skeleton": {"list": pad}, "module": 0})
    else:
        data = old({"type": "case_result", "index": 0, "status": "ok", "pad": pad})
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
"""


QUIET_EXECUTOR = r"""
import json, os, struct, sys
fd = int(sys.argv[sys.argv.index("--result-fd") + 1])
data = json.dumps({"type": "ready", "pid": os.getpid()}).encode()
os.write(fd, struct.pack(">II", 4 + len(data), len(data)) + data)
sys.stdin.buffer.read()
"""


def flood(design: str) -> None:
    """Subprocess of measurement 4: drive a fake sandboxed process that floods the judge; print RSS."""
    import numpy as np

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    env = {"PATH": "/usr/bin:/bin"}
    tracer = PopenWorker("flood", [sys.executable, "-c", FLOOD_TRACER, design], env)
    if design == "new":
        from sandbox.base import Pair
        from sandbox.monitor import CasePlan, SessionJob, SigPlan, run_session

        executor = PopenWorker("flood", [sys.executable, "-c", QUIET_EXECUTOR], env, role="executor")
        leaves = [np.ones(3, np.float32)]
        job = SessionJob(
            code="x = 1",
            function="f",
            args=[{"name": "x", "kind": "pytree", "traced": True}],
            sigs=[
                SigPlan(
                    0,
                    [{"tree": {"aval": {"dtype": "float32", "shape": [3]}}}],
                    [{"dtype": "float32", "shape": [3]}],
                    False,
                )
            ],
            cases=[CasePlan(0, 0, leaves, False)],
        )
        raw = run_session(Pair(tracer, executor), job, LIMITS)
        outcome = raw.stop.protocol_error if raw.stop else "no stop"
        tracer.close()
        executor.close()
    else:
        from bench.legacy_sandbox.monitor import run_job

        raw_old = run_job(tracer, {"type": "job"}, replace(LIMITS, wall_time_s=60.0))
        outcome = f"{len(raw_old.messages)} frames kept"
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{(after - before) / 1024:.0f} {outcome}")


def flood_rss(design: str) -> tuple[float, str]:
    done = subprocess.run(
        [sys.executable, __file__, "--flood", design],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        return float("nan"), done.stderr.strip()[-300:]
    grew, _, outcome = done.stdout.strip().splitlines()[-1].partition(" ")
    return float(grew), outcome


# ------------------------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--burst", type=int, default=8, help="submissions per throughput block")
    parser.add_argument("--blocks", type=int, default=3, help="throughput blocks per design (best counts)")
    parser.add_argument("--problem", default="global-norm-clipping", choices=sorted(SOLUTIONS))
    parser.add_argument(
        "--today-flags",
        choices=("shipped", "current"),
        default="shipped",
        help="XLA flags of today's design: the ones it shipped with (default), or the current ones",
    )
    parser.add_argument("--flood", choices=("new", "today"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.flood:
        flood(opts.flood)
        return
    why = BwrapBackend().available()
    if why is not None:
        raise SystemExit(f"bwrap is not available here: {why}")
    problem = ProblemSet(ROOT / "problems").get(opts.problem)
    code = (ROOT / SOLUTIONS[opts.problem]).read_text()
    expected_outputs(problem, problem.cases)  # fill the expected-output cache: both designs read it
    print(
        f"problem {opts.problem} ({len(problem.cases)} cases, {len(problem.public_cases)} public), "
        f"cpus={os.cpu_count()}"
    )
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    today_flags = SHIPPED_XLA_FLAGS if opts.today_flags == "shipped" else os.environ["XLA_FLAGS"]
    print(f"XLA flags: new and floor {os.environ['XLA_FLAGS']!r}; today {today_flags!r}")
    new, today, floor = New(100), Today(200, today_flags), Floor()
    for design in (new, today):
        design.settle()
        design.submit(problem, code)  # one untimed round each: first-use costs of this process
    floor.run(problem, code, problem.public_cases)

    submit: dict[str, list[float]] = {"new": [], "today": []}
    run: dict[str, list[float]] = {"new": [], "today": [], "floor": []}
    for _ in range(opts.repeats):
        for name, design in (("new", new), ("today", today)):
            design.settle()
            submit[name].append(timed(lambda d=design: d.submit(problem, code)))
            design.settle()
            run[name].append(timed(lambda d=design: d.submit(problem, code, problem.public_cases)))
        run["floor"].append(timed(lambda: floor.run(problem, code, problem.public_cases)))

    rates: dict[tuple[str, int], list[float]] = {}
    for concurrency in (1, 2):
        for _ in range(opts.blocks):
            for name, design in (("new", new), ("today", today)):
                rate = throughput(design, problem, code, opts.burst, concurrency)
                rates.setdefault((name, concurrency), []).append(rate)

    print("\n1. Submit wall time, warm pools (p50 of", opts.repeats, "each)")
    ratio = p50(submit["new"]) / p50(submit["today"])
    print(f"   new {p50(submit['new']):.2f} s   today {p50(submit['today']):.2f} s   "
          f"new/today {ratio:.2f}x   "
          f"[target <= 1.15x: {'met' if ratio <= 1.15 else 'MISSED'}]")  # fmt: skip
    print("\n2. Run of the examples (public cases)")
    ratio = p50(run["new"]) / p50(run["floor"])
    print(f"   new {p50(run['new']) * 1000:.0f} ms   today {p50(run['today']) * 1000:.0f} ms   floor "
          f"{p50(run['floor']) * 1000:.0f} ms   new/floor {ratio:.2f}x   [target <= 1.3x: "
          f"{'met' if ratio <= 1.3 else 'MISSED'}]")  # fmt: skip
    blocks = f"best of {opts.blocks} blocks of {opts.burst} each"
    print(f"\n3. Submits per second through the warm pools ({blocks})")
    for concurrency in (1, 2):
        got_new, got_today = max(rates[("new", concurrency)]), max(rates[("today", concurrency)])
        target = (
            f"   [target >= 2x: {'met' if got_new >= 2 * got_today else 'MISSED'}]"
            if concurrency == 2
            else ""
        )
        print(f"   concurrency {concurrency}: new {got_new:.2f}/s   today {got_today:.2f}/s   "
              f"new/today {got_new / got_today:.2f}x{target}")  # fmt: skip

    cache: dict[str, list[float]] = {"job": [], "process": []}
    cached = New(150, cache_scope="process")
    cached.settle()
    for _ in range(opts.repeats):
        for name, design in (("job", new), ("process", cached)):
            design.settle()
            design.submit(problem, code, problem.public_cases)  # a Run ...
            cache[name].append(timed(lambda d=design: d.submit(problem, code)))  # ... then the Submit
    print("\n5. Submit right after a Run of the same code (the executor that ran it is reused when idle)")
    print(f"   cache per job {p50(cache['job']):.2f} s   cache per process {p50(cache['process']):.2f} s   "
          f"ratio {p50(cache['process']) / p50(cache['job']):.2f}x")  # fmt: skip
    for design in (new, today, cached):
        design.close()

    print("\n4. The judge's peak RSS growth under a flood of 100 near-1 MiB frames")
    for name in ("new", "today"):
        grew, outcome = flood_rss(name)
        print(f"   {name:5s} {grew:7.0f} MiB   ({outcome[:120]})")
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
