"""Compile time per program shape under each XLA flag set, and the judge's pipeline choice beside them.

A corpus of program shapes is lowered once in this process, exactly as the tracer lowers a submission
(``sandbox.inside.lowering``; the shipped solutions through the tracer's own signature and wrapper code):

  synthetic   elementwise folds that reuse their operands (``hypot``, ``logaddexp``, ``where``), long
              unrolled loops, a jitted helper called in a loop, many small leaves, large constants
  shipped     every accepted solution of every problem, on the ``--signatures`` largest signatures of
              its cases (the sum of their compile times is the solution's time)

Each flag set runs in a worker process of its own, started with its ``XLA_FLAGS`` (so no flag depends
on a per-compile override being honoured); ``judge`` is the executor's own choice
(``sandbox.inside.compiling``) in a worker with the sandbox's flags. Every program is compiled by every
worker in turn, ``--repeats`` times, so machine noise hits all of them alike. A compile past
``--cap`` seconds is stopped (its worker is killed and started again) and shown as ``>cap``; a worker that
dies while compiling shows ``crash``. Printed per shape: the p50 per flag set, its ratio to XLA's
defaults, the program's measured shape (ops with calls inlined, elementwise expansion) and the judge's
pipeline; ``!`` marks a ratio over 10x.

With ``--submit`` it also measures ordinary Submit and Run (the public examples) of two seed problems'
accepted solutions through warm engines of this checkout and of ``--baseline DIR`` (another checkout of
the judge, e.g. ``git worktree add /tmp/baseline <commit>``), one request of each alternately, and prints
the p50s and their ratio.

    .venv/bin/python bench/bench_compile.py [--repeats 3] [--cap 20] [--signatures 3] [--only NAME]
    .venv/bin/python bench/bench_compile.py --submit --baseline /tmp/baseline [-n 20]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.host.command import FAST_COMPILE_XLA_FLAGS  # noqa: E402

FLAG_SETS: dict[str, str] = {
    "fast": FAST_COMPILE_XLA_FLAGS,
    "fast+fusion": FAST_COMPILE_XLA_FLAGS.replace("--xla_cpu_use_fusion_emitters=false ", ""),
    "defaults": "",
    "fusion-off": "--xla_cpu_use_fusion_emitters=false",
    "judge": FAST_COMPILE_XLA_FLAGS,
}
REFERENCE = "defaults"

# ------------------------------------------------------------------------------------------ the worker

WORKER = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
mode = sys.argv[2]
import jax
from jax._src import compiler, xla_bridge
from jax._src.interpreters import mlir
from jax._src.lib import xla_client as xc
from jax._src.lib.mlir import ir
from sandbox.inside.compiling import FAST, STANDARD, STANDARD_OVERRIDES, Pipelines, measure
from sandbox.inside.lowering import parse
backend = xla_bridge.get_backend("cpu")
devices = xc.DeviceList((backend.local_devices()[0],))
def options(overrides=None):
    return compiler.get_compile_options(num_replicas=1, num_partitions=1, backend=backend,
                                        detailed_logging=False, env_options_overrides=overrides)
pipelines = {FAST: options(), STANDARD: options(STANDARD_OVERRIDES)}
context = mlir.make_ir_context()  # the executor prepares its contexts between jobs, off the clock
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    path = line.strip()
    data = open(path, "rb").read()
    print(json.dumps({"start": path}), flush=True)
    started = time.perf_counter()
    if mode == "judge":
        with context:
            shape = measure(ir, parse(ir, data))
        racer = Pipelines()
        def compile(p, data=data):
            return backend.compile_and_load(data, executable_devices=devices, compile_options=pipelines[p])
        outcome = racer.compile_program(compile, shape)
        pipeline = outcome.pipeline + ("+race" if outcome.raced else "")
        # A losing compile cannot be stopped: this worker must not time the next program beside it.
        lingering = racer.lingering()
    else:
        backend.compile_and_load(data, executable_devices=devices, compile_options=pipelines[FAST])
        pipeline, lingering = "", False
    print(json.dumps({"done": path, "s": time.perf_counter() - started, "pipeline": pipeline,
                      "lingering": lingering}), flush=True)
    if lingering:
        os._exit(0)
os._exit(0)
"""


class CompileProcess:
    """One flag set's compile process; restarted after a stopped, crashed or lingering compile."""

    def __init__(self, name: str, flags: str) -> None:
        self.name, self.flags = name, flags
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        env = {**os.environ, "XLA_FLAGS": self.flags, "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2"}
        mode = "judge" if self.name == "judge" else "plain"
        proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ROOT), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        if "ready" not in json.loads(proc.stdout.readline() or '{"dead": 1}'):
            raise SystemExit(f"the {self.name} worker did not start")
        return proc

    def compile(self, path: str, cap: float) -> tuple[float | str, str]:
        """Seconds (or ``>cap``, ``crash``) and the judge's pipeline for the program in ``path``."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(path + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + cap
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self.stop()
                return f">{cap:g}s", ""
            line = proc.stdout.readline()
            if not line:
                self.stop()
                return "crash", ""
            reply = json.loads(line)
            if "done" in reply:
                if reply["lingering"]:
                    self.stop()
                return float(reply["s"]), str(reply["pipeline"])

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


# ------------------------------------------------------------------------------------------ the corpus


def synthetic() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    import jax
    import jax.numpy as jnp

    struct: Any = jax.ShapeDtypeStruct
    f32 = jnp.float32

    def leaves(n: int, shape: tuple[int, ...] = (3,)) -> list[Any]:
        return [struct(shape, f32)] * n

    def hypot_fold(xs: list[Any]) -> Any:
        return functools.reduce(jnp.hypot, [jnp.linalg.norm(x) for x in xs])

    def logaddexp_fold(xs: list[Any]) -> Any:
        return functools.reduce(jnp.logaddexp, [jnp.sum(x) for x in xs])

    def where_fold(xs: list[Any]) -> Any:
        return functools.reduce(lambda a, b: jnp.where(a > b, a - b, b - a), [jnp.sum(x) for x in xs])

    def reuse_chain(x: Any) -> Any:
        for _ in range(20):
            x = jnp.sin(x) * x + x
        return x

    def unrolled(n: int) -> Callable[[Any], Any]:
        def fn(x: Any) -> Any:
            y = x
            for _ in range(n):
                y = y * 0.5 + 1.0  # reaches 2 exactly: a correct way to compute x
            return x * (y / 2.0)

        return fn

    def doubled(x: Any) -> Any:
        for _ in range(3000):
            x = x * 2.0
            x = x * 0.5  # XLA folds the pair of constants: no chain is left
        return x

    def unrolled_where(n: int) -> Callable[[Any], Any]:
        def fn(x: Any) -> Any:
            for _ in range(n):
                x = jnp.where(x > 1e30, 0.0, x) + 0.0
            return x

        return fn

    @jax.jit
    def helper(x: Any) -> Any:
        for _ in range(250):
            x = x * 1.0001 + 1e-4
        return x

    def helper_calls(x: Any) -> Any:
        for _ in range(8):
            x = helper(x)
        return x

    def many_leaves(xs: list[Any]) -> Any:
        norm = jnp.sqrt(sum(jnp.sum(x * x) for x in xs))
        return [x / jnp.maximum(norm, 1.0) for x in xs]

    def constant_fold(x: Any) -> Any:
        table = jnp.sin(jnp.arange(1_000_000, dtype=f32))  # a constant expression XLA may fold
        return x + jnp.sum(table)

    def big_constant(x: Any) -> Any:
        import numpy as np

        return x + jnp.asarray(np.linspace(0.0, 1.0, 200_000, dtype=np.float32)).sum()

    return {
        "hypot fold, 6 leaves": (hypot_fold, (leaves(6),)),
        "hypot fold, 10 leaves": (hypot_fold, (leaves(10),)),
        "hypot fold, 12 leaves": (hypot_fold, (leaves(12),)),
        "logaddexp fold, 10 leaves": (logaddexp_fold, (leaves(10),)),
        "where fold, 12 leaves": (where_fold, (leaves(12),)),
        "sin(x)*x+x, 20 times": (reuse_chain, (struct((64,), f32),)),
        "unrolled y*0.5+1, 1000 times": (unrolled(1000), (struct((8,), f32),)),
        "unrolled y*0.5+1, 2000 times": (unrolled(2000), (struct((8,), f32),)),
        "unrolled y*0.5+1, 3000 times": (unrolled(3000), (struct((8,), f32),)),
        "unrolled x*2*0.5, 3000 times": (doubled, (struct((8,), f32),)),
        "unrolled where, 1000 times": (unrolled_where(1000), (struct((8,), f32),)),
        "jitted helper (500 ops) x 8 calls": (helper_calls, (struct((8,), f32),)),
        "500 small leaves": (many_leaves, (leaves(500, (2,)),)),
        "sin(arange(1e6)) constant": (constant_fold, (struct((4,), f32),)),
        "200k-element constant": (big_constant, (struct((4,), f32),)),
    }


def shipped(per_solution: int) -> dict[str, list[bytes]]:
    """Each accepted solution of each problem: its programs on the largest signatures of its cases."""
    from judge.core.grader import build_session
    from judge.core.problems import ProblemSet
    from sandbox.inside.tracer import Captured, Probe, Signature, load_function, load_menu, make_wrapper

    cap = Captured()
    out: dict[str, list[bytes]] = {}
    for problem in ProblemSet():
        for folder, file in problem.solutions():
            if folder != "accepted":
                continue
            code = file.read_text()
            job = build_session(problem, code, problem.cases, [False] * len(problem.cases), 1 << 26)
            fn = load_function(code, job.function)
            menu = load_menu(job.functions)
            sigs = sorted(job.sigs, key=lambda s: -sum(_size(i) for i in s.inputs))[:per_solution]
            programs = []
            for plan in sigs:
                sig = Signature({"id": plan.id, "args": plan.args}, job.args, cap, menu)
                wrapper = make_wrapper(fn, sig, job.check_inputs_unchanged, cap, Probe(), 64, job.gradient)
                traced = cap.jit(wrapper, keep_unused=True).trace(*sig.avals)
                programs.append(cap.lower(traced.jaxpr))
                cap.restore_config()
            out[f"{problem.spec.slug}/{file.stem}"] = programs
    return out


def _size(leaf: dict[str, Any]) -> int:
    size = 1
    for d in leaf.get("shape", []):
        size *= int(d)
    return size + 1


def lower_all(per_solution: int, only: str | None) -> dict[str, list[bytes]]:
    import jax

    from sandbox.inside.lowering import Lowerer

    lower = Lowerer()
    corpus = {name: [lower(jax.jit(fn).trace(*args).jaxpr)] for name, (fn, args) in synthetic().items()}
    corpus.update(shipped(per_solution))
    if only:
        corpus = {k: v for k, v in corpus.items() if only in k}
    return corpus


def shapes(corpus: dict[str, list[bytes]]) -> dict[str, str]:
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    from sandbox.inside.compiling import measure
    from sandbox.inside.lowering import parse

    out = {}
    for name, programs in corpus.items():
        worst_ops, worst_expansion = 0, 0.0
        for data in programs:
            with mlir.make_ir_context():
                shape = measure(ir, parse(ir, data))
            worst_ops, worst_expansion = max(worst_ops, shape.ops), max(worst_expansion, shape.expansion)
        out[name] = f"{worst_ops:>6} {worst_expansion:8.2g}"
    return out


# ------------------------------------------------------------------------------------------ compile table


def compile_table(opts: argparse.Namespace) -> None:
    corpus = lower_all(opts.signatures, opts.only)
    measured = shapes(corpus)
    folder = Path(tempfile.mkdtemp(prefix="bench-compile-"))
    paths: dict[str, list[str]] = {}
    for i, (name, programs) in enumerate(corpus.items()):
        paths[name] = []
        for j, data in enumerate(programs):
            file = folder / f"{i}-{j}.mlirbc"
            file.write_bytes(data)
            paths[name].append(str(file))
    workers = [CompileProcess(name, flags) for name, flags in FLAG_SETS.items()]
    count = sum(map(len, paths.values()))
    print(f"cores={os.cpu_count()} repeats={opts.repeats} cap={opts.cap:g}s programs={count}")
    for name, flags in FLAG_SETS.items():
        print(
            f"  {name:<12} XLA_FLAGS={flags!r}"
            + ("  (+ the executor's pipeline choice)" if name == "judge" else "")
        )
    header = "".join(f"{w.name:>12}" for w in workers)
    print(f"\n{'shape':<58}{'ops':>6} {'expand':>8}{header}   ratios to {REFERENCE}   judge pipeline")
    try:
        for name, files in paths.items():
            results: dict[str, list[float]] = {w.name: [] for w in workers}
            failed: dict[str, str] = {}
            pipeline = ""
            for _ in range(opts.repeats):
                for worker in workers:
                    if worker.name in failed:
                        continue
                    total = 0.0
                    for path in files:
                        seconds, used = worker.compile(path, opts.cap)
                        if isinstance(seconds, str):
                            failed[worker.name] = seconds
                            break
                        total += seconds
                        if worker.name == "judge" and used != "fast":
                            pipeline = used
                    else:
                        results[worker.name].append(total)
            cells, ratios = [], []
            p50 = {k: statistics.median(v) for k, v in results.items() if v and k not in failed}
            for worker in workers:
                text = failed.get(worker.name) or f"{p50[worker.name] * 1000:.0f}ms"
                cells.append(f"{text:>12}")
                if worker.name in p50 and REFERENCE in p50:
                    ratio = p50[worker.name] / p50[REFERENCE]
                    ratios.append(f"{ratio:.2f}{'!' if ratio > 10 else ''}")
                else:
                    ratios.append("-" if REFERENCE not in p50 else "!")
            print(
                f"{name[:57]:<58}{measured[name]}{''.join(cells)}   {' '.join(ratios)}   {pipeline or 'fast'}"
            )
    finally:
        for worker in workers:
            worker.stop()
        for files in paths.values():
            for written in files:
                os.unlink(written)
        folder.rmdir()


# ------------------------------------------------------------------------------------------ Submit and Run

DRIVER = r"""
import json, sys, time
root, slot_base = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, root)
from judge.core.engine import Engine
from judge.core.problems import ProblemSet
from judge.core.sandboxes import choose_backend
engine = Engine(choose_backend("auto"), workers=1, slot_base=slot_base)
engine.wait_ready(300)
problems = ProblemSet()
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    kind, slug, file = line.split()
    problem, code = problems.get(slug), open(file).read()
    started = time.perf_counter()
    result = engine.grade(problem, code) if kind == "submit" else engine.run(problem, code)
    elapsed = time.perf_counter() - started
    engine.wait_ready(60)  # a retired executor is replaced before the next request, off its clock
    print(json.dumps({"s": elapsed, "verdict": result.verdict.value}), flush=True)
engine.close()
"""

SOLUTIONS = {
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
}


def submit_table(opts: argparse.Namespace) -> None:
    if opts.baseline is None:
        raise SystemExit("--submit needs --baseline DIR (another checkout of the judge)")
    checkouts = {"new": (ROOT, 1000), "baseline": (opts.baseline.resolve(), 1100)}
    drivers = {}
    for name, (root, slots) in checkouts.items():
        drivers[name] = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(root), str(slots)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
        )
        out = drivers[name].stdout
        assert out is not None
        if "ready" not in json.loads(out.readline() or "{}"):
            raise SystemExit(f"the {name} engine did not start")
    print(f"Submit and Run, warm engines of one pair each, n={opts.n}, alternating new and baseline")
    try:
        for slug, file in SOLUTIONS.items():
            for kind in ("submit", "run"):
                times: dict[str, list[float]] = {name: [] for name in drivers}
                for i in range(opts.n + 1):
                    order = list(drivers) if i % 2 == 0 else list(reversed(drivers))
                    for name in order:
                        proc = drivers[name]
                        assert proc.stdin is not None and proc.stdout is not None
                        proc.stdin.write(f"{kind} {slug} {ROOT / file}\n")
                        proc.stdin.flush()
                        reply = json.loads(proc.stdout.readline())
                        if reply["verdict"] != "accepted":
                            raise SystemExit(f"{name} {kind} {slug}: {reply['verdict']}")
                        if i:  # the first round fills caches
                            times[name].append(reply["s"])
                p50 = {name: statistics.median(v) for name, v in times.items()}
                print(
                    f"  {slug:<22} {kind:<6} new p50 {p50['new'] * 1000:7.1f} ms   baseline p50 "
                    f"{p50['baseline'] * 1000:7.1f} ms   new/baseline {p50['new'] / p50['baseline']:.3f}x"
                )
    finally:
        for proc in drivers.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cap", type=float, default=20.0, help="seconds before a compile is stopped")
    parser.add_argument("--signatures", type=int, default=3, help="largest signatures per shipped solution")
    parser.add_argument("--only", help="only the shapes whose name contains this")
    parser.add_argument("--submit", action="store_true", help="measure Submit and Run against --baseline")
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("-n", type=int, default=20)
    opts = parser.parse_args()
    if opts.submit:
        submit_table(opts)
    else:
        compile_table(opts)


if __name__ == "__main__":
    main()
