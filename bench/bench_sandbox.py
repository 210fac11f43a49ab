"""Latency of grading one example case, from code in to result decoded, three ways in one run:

  floor   in this process, no sandbox: the harness's own ``serve`` on an already-initialized JAX
  warm    the ``bwrap`` pool: ``WorkerPool.acquire`` + ``run_job`` on a worker that imported JAX already
  cold    a ``bwrap`` sandbox started for the submission: start + import JAX + ``run_job``

and, with ``--fork``, a fourth: fork-per-job from a (not sandboxed) parent that imported JAX but never ran
an op; with ``--flags``, compile time of the same program under several XLA_FLAGS. Variants are interleaved
so machine noise hits them alike. Prints p50/p95 per variant and the ratios. Targets (issue): warm p50
under 150 ms and at least 5x faster than cold.

    .venv/bin/python bench/bench_sandbox.py [-n 20] [--problem sgd-momentum] [--fork] [--flags]

Runs as root (the bwrap backend drops sandboxed code to its own uid).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.command import harness_env  # noqa: E402

# The floor must compile with the same XLA flags as the sandboxed harness: set them before JAX loads.
for key in ("XLA_FLAGS", "JAX_PLATFORMS", "JAX_ENABLE_X64", "TF_CPP_MIN_LOG_LEVEL"):
    os.environ[key] = harness_env(str(ROOT))[key]

import argparse  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

from judge.grader import build_job  # noqa: E402
from judge.problems import ProblemSet  # noqa: E402
from sandbox.bwrap import BwrapBackend  # noqa: E402
from sandbox.command import harness_argv  # noqa: E402
from sandbox.limits import SandboxLimits  # noqa: E402
from sandbox.monitor import RawRun, run_job  # noqa: E402
from sandbox.pool import WorkerPool  # noqa: E402
from sandbox.protocol import FrameReader, decode_tree, encode_frame  # noqa: E402

LIMITS = SandboxLimits(case_time_s=10.0, wall_time_s=30.0, memory_mb=1536, processes=64, startup_time_s=60.0)
SOLUTIONS = {
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
}


def make_job(slug: str) -> dict[str, Any]:
    problem = ProblemSet(ROOT / "problems").get(slug)
    code = (ROOT / SOLUTIONS[slug]).read_text()
    return build_job(problem, code, problem.cases[:1], 16 << 20)


def decoded(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The case result with its output decoded (part of the measured path), or an error."""
    results = [m for m in messages if m["type"] == "case_result"]
    if len(results) != 1 or results[0]["status"] != "ok":
        raise SystemExit(f"the example case did not pass: {messages}")
    decode_tree(results[0]["output"])
    return results[0]


# ------------------------------------------------------------------------------------------ variants


class Floor:
    def __init__(self) -> None:
        from sandbox.harness import Captured

        self.cap = Captured()

    def __call__(self, job: dict[str, Any]) -> dict[str, Any]:
        from sandbox.harness import serve

        channel = io.BytesIO()
        serve(json.loads(json.dumps(job)), channel, self.cap)  # the job crosses a wire in the other variants
        reader = FrameReader(LIMITS.max_frame_bytes)
        return decoded(reader.feed(channel.getvalue()))


class Warm:
    def __init__(self, backend: BwrapBackend) -> None:
        self.pool = WorkerPool(backend, LIMITS, size=2, slot_base=700, slots=16)
        if not self.pool.wait_full(180):
            raise SystemExit(f"the pool did not fill: {self.pool.stats()}")
        self.acquire_ms: list[float] = []
        self.to_done_ms: list[float] = []
        self.after_done_ms: list[float] = []

    def __call__(self, job: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        worker = self.pool.acquire(timeout=60)
        acquired = time.perf_counter()
        done_at = [0.0]
        reader = worker.reader(LIMITS.max_frame_bytes)
        feed = reader.feed

        def timed_feed(chunk: bytes) -> list[dict[str, Any]]:
            messages = feed(chunk)
            if any(m["type"] == "done" for m in messages):
                done_at[0] = time.perf_counter()
            return messages

        reader.feed = timed_feed  # type: ignore[method-assign]
        raw: RawRun = run_job(worker, job, LIMITS)
        end = time.perf_counter()
        self.acquire_ms.append((acquired - start) * 1000)
        self.to_done_ms.append((done_at[0] - acquired) * 1000)
        self.after_done_ms.append((end - done_at[0]) * 1000)
        return decoded(raw.messages)

    def settle(self) -> None:
        """Between submissions: let the pool refill (measures the steady state below refill capacity)."""
        self.pool.wait_full(180)


class Cold:
    def __init__(self, backend: BwrapBackend) -> None:
        self.backend = backend

    def __call__(self, job: dict[str, Any]) -> dict[str, Any]:
        worker = self.backend.start(LIMITS, 720)
        raw = run_job(worker, job, LIMITS)
        return decoded(raw.messages)


FORK_SERVER = r"""
import os, sys
sys.path.insert(0, ROOT)
import jax, jax.numpy  # imported, never run: a parent with a live backend deadlocks its children
from sandbox.protocol import read_frame, write_frame
from sandbox import harness
jobs = os.fdopen(0, "rb")
while True:
    try:
        job = read_frame(jobs, 1 << 28)
    except EOFError:
        break
    pid = os.fork()
    if pid == 0:
        channel = os.fdopen(RESULT_FD, "wb", buffering=0)
        cap = harness.Captured()
        harness.serve(job, channel, cap)
        os._exit(0)
    os.waitpid(pid, 0)
"""


class Fork:
    """Fork-per-job from a parent that imported JAX (no sandbox around it: the bare cost of forking)."""

    def __init__(self) -> None:
        result_r, result_w = os.pipe()
        code = FORK_SERVER.replace("ROOT", repr(str(ROOT))).replace("RESULT_FD", str(result_w))
        self.proc = subprocess.Popen(
            [*harness_argv()[:-2], "-c", code],
            stdin=subprocess.PIPE,
            pass_fds=(result_w,),
            env=harness_env(str(ROOT)),
            cwd="/",
        )
        os.close(result_w)
        self.results = os.fdopen(result_r, "rb", buffering=0)
        time.sleep(5)  # let it import JAX

    def __call__(self, job: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode_frame(job))
        self.proc.stdin.flush()
        reader = FrameReader(LIMITS.max_frame_bytes)
        messages: list[dict[str, Any]] = []
        while not messages or messages[-1]["type"] != "done":
            chunk = self.results.read(1 << 16)
            if not chunk:
                raise SystemExit("the fork server died")
            messages += reader.feed(chunk)
        return decoded(messages)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


# ------------------------------------------------------------------------------------------ XLA flags

FLAG_PROBE = r"""
import json, os, sys, time
sys.path.insert(0, ROOT)
from sandbox.harness import Captured, serve
from sandbox.protocol import FrameReader
import io
cap = Captured()
job = json.loads(JOB)
compile_ms, total_ms = [], []
for _ in range(REPEATS):
    channel = io.BytesIO()
    t = time.perf_counter()
    serve(job, channel, cap)
    total_ms.append((time.perf_counter() - t) * 1000)
    msgs = FrameReader(1 << 28).feed(channel.getvalue())
    compile_ms += [m["compile_ms"] for m in msgs if m.get("type") == "case_result" and "compile_ms" in m]
print(json.dumps({"compile_ms": compile_ms, "total_ms": total_ms}))
"""
FLAG_SETS = {
    "none (XLA defaults)": "",
    "harness (command.FAST_COMPILE_XLA_FLAGS)": "HARNESS",
    "--xla_backend_optimization_level=0": "--xla_backend_optimization_level=0",
    "--xla_cpu_use_thunk_runtime=false": "--xla_cpu_use_thunk_runtime=false",
    "--xla_cpu_use_fusion_emitters=false": "--xla_cpu_use_fusion_emitters=false",
}


def flags_report(job: dict[str, Any], repeats: int) -> None:
    print(f"\nCompile time of the example under XLA_FLAGS (harness serve, {repeats} runs, no sandbox)")
    base_env = harness_env(str(ROOT))
    for label, flags in FLAG_SETS.items():
        env = dict(base_env, XLA_FLAGS=base_env["XLA_FLAGS"] if flags == "HARNESS" else flags)
        code = (
            FLAG_PROBE.replace("ROOT", repr(str(ROOT)))
            .replace("JOB", repr(json.dumps(job)))
            .replace("REPEATS", str(repeats))
        )
        argv = [sys.executable, "-c", code]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["?"])[-1][:120]
            print(f"  {label:45s} rejected or failed: {tail}")
            continue
        found = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"  {label:45s} compile p50 {statistics.median(found['compile_ms']):7.1f} ms   "
            f"serve p50 {statistics.median(found['total_ms']):7.1f} ms"
        )


# ------------------------------------------------------------------------------------------ main


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=20, help="submissions per variant")
    parser.add_argument("--problem", default="sgd-momentum", choices=sorted(SOLUTIONS))
    parser.add_argument("--fork", action="store_true", help="also measure fork-per-job (not sandboxed)")
    parser.add_argument("--flags", action="store_true", help="also compare compile time under XLA flags")
    opts = parser.parse_args()

    backend = BwrapBackend()
    why = backend.available()
    if why is not None:
        raise SystemExit(f"bwrap is not available here: {why}")
    job = make_job(opts.problem)
    print(f"problem {opts.problem}, one example case, n={opts.n}, cpus={os.cpu_count()}")
    print(f"XLA_FLAGS={os.environ['XLA_FLAGS']!r} (floor and sandbox alike)")

    variants: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"floor": Floor()}
    warm = Warm(backend)
    variants["warm"] = warm
    variants["cold"] = Cold(backend)
    fork = Fork() if opts.fork else None
    if fork is not None:
        variants["fork"] = fork
    for fn in variants.values():  # one untimed round: first-use costs of this process
        fn(job)
        warm.settle()

    times: dict[str, list[float]] = {name: [] for name in variants}
    compile_ms: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(opts.n):
        for name, fn in variants.items():
            warm.settle()
            start = time.perf_counter()
            result = fn(job)
            times[name].append((time.perf_counter() - start) * 1000)
            compile_ms[name].append(float(result.get("compile_ms", 0.0)))
    warm.pool.close()
    if fork is not None:
        fork.close()

    print(f"\n{'variant':8s} {'p50 ms':>9s} {'p95 ms':>9s} {'compile p50':>12s}")
    for name, values in times.items():
        print(
            f"{name:8s} {pct(values, 0.5):9.1f} {pct(values, 0.95):9.1f} "
            f"{statistics.median(compile_ms[name]):12.1f}"
        )
    floor, warm_p50, cold = (pct(times[k], 0.5) for k in ("floor", "warm", "cold"))
    print(f"\nwarm/floor {warm_p50 / floor:5.2f}x   cold/warm {cold / warm_p50:5.1f}x")
    print(
        f"warm breakdown (p50): acquire {statistics.median(warm.acquire_ms):.2f} ms, job sent -> 'done' "
        f"{statistics.median(warm.to_done_ms):.1f} ms, 'done' -> run_job returned "
        f"{statistics.median(warm.after_done_ms):.1f} ms (waiting for the worker's processes to exit, "
        "kill, cgroup removal)"
    )
    if fork is not None:
        print(f"fork/warm {pct(times['fork'], 0.5) / warm_p50:5.2f}x (fork server NOT sandboxed)")
    target = "met" if warm_p50 < 150 and cold / warm_p50 >= 5 else "NOT met"
    print(f"target (warm p50 < 150 ms and cold/warm >= 5x): {target}")
    if opts.flags:
        flags_report(job, max(5, opts.n // 2))


if __name__ == "__main__":
    main()
