"""The tracer/executor split against the single-process harness it replaced, side by side (issue 13).

Each design runs in a child process of its own (this interpreter, its checkout's ``judge`` and ``sandbox``
first on ``sys.path``) with warm pools on the bwrap backend; the driver sends the children the same
requests, interleaved, so machine noise hits them alike:

  new      this checkout: GradingPool, tracers forked from the zygote (one per submission) + executors
  today    ``--baseline DIR``, an older checkout (``git worktree add DIR <commit>``): its own engine, pool and
           grading path. The meaningful baseline is 27d19fb, the last commit before the tracer/executor
           split (1dc617c): one warm worker (a fresh JAX import) per submission, which runs the learner's
           code and the compiled programs in one process, compiling with the XLA flags it shipped with
           (``--today-flags current``: with this checkout's flags, which compile ~35% cheaper)
  floor    a third child (this checkout), no sandbox: the solution under a fresh jax.jit on each public
           case, with the sandbox's XLA flags

All three grade the baseline's copy of the problem and its accepted solution (an older checkout cannot load
today's problem packages; this one loads the older ones), so every design works on the same cases.

Prints (targets of issue 13 in brackets):
  1. Submit wall time, warm pools, new vs today                         [new <= 1.15x today]
  2. Run of the examples (public cases), new vs the in-process floor   [new <= 1.3x floor]
  3. Submits per second at concurrency 1 and 2, new vs today            [new >= 2x today at 2]
  4. the judge's peak RSS while a sandboxed process floods it with 100 near-1 MiB frames, new vs today
     (each design's own monitor, in a child of its checkout)
  5. a Run then a Submit of the same code, executors caching compiled programs per job vs per process

    git worktree add /tmp/baseline 27d19fb
    .venv/bin/python bench/bench_integrity.py --baseline /tmp/baseline [--repeats 5] [--burst 8] [--blocks 3]
                                              [--problem global-norm-clipping] [--today-flags current]
    git worktree remove /tmp/baseline

A baseline after the split is graded the way this checkout is (its GradingPool), so the same command also
compares this checkout with any later one. Runs as root (bwrap drops sandboxed code to its own uids).
``--child ROOT`` is a design's entry point, ``--flood ROOT`` the subprocess of 4.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from children import Child, before_rooms, burst, floor_env  # noqa: E402

SOLUTIONS = {
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
}


# ------------------------------------------------------------------------------------------ a design's child


def child(
    root: Path, package: Path, slug: str, slot_base: int, cache_scope: str, xla_flags: str | None
) -> None:
    """Serve timing requests on stdin (one JSON line each) with ``root``'s engine, grading ``package``'s
    problem ``slug``; answer on stdout."""
    sys.path.insert(0, str(root))
    before_rooms(root)  # a baseline from before the rooms answers the new module names
    from judge.core.grader import grade
    from judge.core.problems import ProblemSet
    from sandbox.backends.bwrap import BwrapBackend, BwrapSettings
    from sandbox.host import command
    from sandbox.host.resource_limits import SandboxLimits
    from sandbox.session import pool

    # A start may take long on a loaded host: both designs' pools wait as long for it (the jobs' own limits
    # are the problem's, as in the service).
    limits = SandboxLimits(startup_time_s=120.0)
    split = hasattr(pool, "GradingPool")  # a tracer + executor design; else the single-process harness
    settings = BwrapSettings()
    if split:
        settings = BwrapSettings(executor_cache_scope=cache_scope, xla_flags=xla_flags or settings.xla_flags)
        flags = settings.xla_flags
    else:
        if xla_flags:  # its program environment reads this constant when a worker starts
            command.FAST_COMPILE_XLA_FLAGS = xla_flags
        flags = command.FAST_COMPILE_XLA_FLAGS
    backend = BwrapBackend(settings)
    why = backend.available()
    if why is not None:
        print(json.dumps({"error": f"bwrap is not available here: {why}"}), flush=True)
        return
    if split:
        warm: Any = pool.GradingPool(backend, limits, size=2, slot_base=slot_base, slots=32)

        def source(job_limits: Any, **options: Any) -> Any:
            return warm.acquire(120, job_limits, **options)

    else:
        warm = pool.ProcessPool(backend, limits, size=2, slot_base=slot_base, slots=32)

        def source(job_limits: Any) -> Any:
            return warm.acquire(120, job_limits)

    try:
        serve(package, ProblemSet(package / "problems").get(slug), warm, source, grade, flags, split)
    finally:
        warm.close()
        if split:
            backend.close()


def serve(package: Path, problem: Any, warm: Any, source: Any, grade: Any, flags: str, split: bool) -> None:
    """Grade ``package``'s accepted solution with ``warm``'s workers, one timing request at a time."""
    code = (package / SOLUTIONS[problem.slug]).read_text()

    def once(public_only: bool) -> float:
        started = time.perf_counter()
        result = grade(problem, code, source, cases=problem.public_cases if public_only else None)
        if not result.accepted:
            raise SystemExit(f"a correct solution was rejected: {result.verdict} {result.message}")
        return time.perf_counter() - started

    warm.wait_full(300)
    once(False)  # one untimed round: first-use costs of this process, the expected-output cache filled
    facts = {"cases": len(problem.cases), "public": len(problem.public_cases), "flags": flags, "split": split}
    print(json.dumps({"ready": True, **facts}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        warm.wait_full(300)
        if request["do"] == "submit":
            reply: dict[str, Any] = {"s": once(False)}
        elif request["do"] == "run":
            reply = {"s": once(True)}
        elif request["do"] == "run_then_submit":  # 5: the Submit right after a Run of the same code
            once(True)
            warm.wait_full(300)
            reply = {"s": once(False)}
        else:
            try:
                reply = {"per_s": burst(int(request["count"]), int(request["concurrency"]), once)}
            except RuntimeError as exc:
                reply = {"error": str(exc)}
        print(json.dumps(reply), flush=True)


def design(name: str, root: Path, opts: argparse.Namespace, slot_base: int, **extra: str) -> Child:
    options = [f"--{key.replace('_', '-')}={value}" for key, value in extra.items()]
    argv = [__file__, "--child", str(root), "--slot-base", str(slot_base), "--problem", opts.problem]
    return Child(name, [*argv, *options], root)


def floor_child(opts: argparse.Namespace, package: Path) -> Child:
    argv = [__file__, "--floor", str(package), "--problem", opts.problem]
    return Child("floor", argv, ROOT, floor_env())


def floor(package: Path, slug: str) -> None:
    """Serve ``run`` requests on stdin with the in-process floor of a Run of ``package``'s problem: the
    solution under a fresh jax.jit on each public case, in this process (started with the sandbox's XLA
    flags, ``floor_env``)."""
    sys.path.insert(0, str(ROOT))
    from judge.core.problems import ProblemSet
    from judge.core.trusted_jax import import_jax

    jax = import_jax()
    problem = ProblemSet(package / "problems").get(slug)
    code = compile((package / SOLUTIONS[slug]).read_text(), "solution.py", "exec")

    def once() -> float:
        started = time.perf_counter()
        scope: dict[str, Any] = {}
        exec(code, scope)  # a fresh function each time: nothing is cached from the last request
        for case in problem.public_cases:
            fn = jax.jit(lambda *a, f=scope[problem.spec.function]: f(*a))
            args = [a if isinstance(a, float) else jax.device_put(a) for a in case.inputs]
            jax.block_until_ready(fn(*args))
        return time.perf_counter() - started

    once()
    facts = {"cases": len(problem.cases), "public": len(problem.public_cases)}
    print(json.dumps({"ready": True, **facts}), flush=True)
    for line in sys.stdin:
        if json.loads(line)["do"] != "run":
            raise SystemExit("the floor only runs")
        print(json.dumps({"s": once()}), flush=True)


# ------------------------------------------------------------------------------------------ 4. the flood


FLOOD_TRACER = r"""
import os, struct, sys, json
fd = int(sys.argv[sys.argv.index("--result-fd") + 1])
split = sys.argv[1] == "split"
def frame(message, blob=b""):
    data = json.dumps(message).encode()
    if not split:  # the single-process harness's frames: a length, then JSON
        return struct.pack(">I", len(data)) + data
    return struct.pack(">II", 4 + len(data) + len(blob), len(data)) + data + blob
os.write(fd, frame({"type": "ready", "pid": os.getpid()}))
sys.stdin.buffer.read(4)
pad = [0.25] * 170_000  # ~1 MiB of JSON that decodes into ~5 MB of Python objects
for _ in range(100):
    if split:
        data = frame({"type": "program", "sig": 0, "skeleton": {"list": pad}, "module": 0})
    else:
        data = frame({"type": "case_result", "index": 0, "status": "ok", "pad": pad})
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


def flood(root: Path) -> None:
    """Subprocess of measurement 4: ``root``'s monitor drives a fake sandboxed process that floods it;
    print the growth of this process's peak RSS in MiB and what the monitor kept."""
    sys.path.insert(0, str(root))
    before_rooms(root)  # a baseline from before the rooms answers the new module names
    from dataclasses import replace

    import numpy as np

    from sandbox.backends.base import PopenProcess
    from sandbox.host.resource_limits import SandboxLimits
    from sandbox.session import monitor

    limits = SandboxLimits()
    try:  # the session's driver: in sandbox/session/, in the monitor before that, none before the split
        from sandbox.session.driver import run_session
    except ImportError:
        run_session = getattr(monitor, "run_session", None)
    split = run_session is not None
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    env = {"PATH": "/usr/bin:/bin"}
    tracer = PopenProcess("flood", [sys.executable, "-c", FLOOD_TRACER, "split" if split else "one"], env)
    if split:
        from sandbox.backends.base import GradingProcesses

        executor = PopenProcess("flood", [sys.executable, "-c", QUIET_EXECUTOR], env, role="executor")
        job = monitor.SessionJob(
            code="x = 1",
            function="f",
            args=[{"name": "x", "kind": "pytree", "traced": True}],
            sigs=[
                monitor.SigPlan(
                    0,
                    [{"tree": {"aval": {"dtype": "float32", "shape": [3]}}}],
                    [{"dtype": "float32", "shape": [3]}],
                    False,
                )
            ],
            cases=[monitor.CasePlan(0, 0, [np.ones(3, np.float32)], False)],
        )
        assert run_session is not None
        raw = run_session(GradingProcesses(tracer, executor), job, limits)
        outcome = raw.stop.protocol_error if raw.stop else "no stop"
        tracer.close()
        executor.close()
    else:
        raw_old = monitor.run_job(tracer, {"type": "job"}, replace(limits, wall_time_s=60.0))
        outcome = f"{len(raw_old.messages)} frames kept"
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{(after - before) / 1024:.0f} {outcome}")


def flood_rss(root: Path) -> tuple[float, str]:
    done = subprocess.run(
        [sys.executable, __file__, "--flood", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=root,
    )
    if done.returncode != 0:
        return float("nan"), done.stderr.strip()[-300:]
    grew, _, outcome = done.stdout.strip().splitlines()[-1].partition(" ")
    return float(grew), outcome


# ------------------------------------------------------------------------------------------ the driver


def p50(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, help="an older checkout: 27d19fb, before the split")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--burst", type=int, default=8, help="submissions per throughput block")
    parser.add_argument("--blocks", type=int, default=3, help="throughput blocks per design (best counts)")
    parser.add_argument("--problem", default="global-norm-clipping", choices=sorted(SOLUTIONS))
    parser.add_argument(
        "--today-flags",
        choices=("shipped", "current"),
        default="shipped",
        help="XLA flags of today's design: the ones its checkout ships (default), or this checkout's",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--slot-base", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--cache-scope", default="job", help=argparse.SUPPRESS)
    parser.add_argument("--xla-flags", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--package", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--flood", type=Path, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child is not None:
        root = opts.child.resolve()
        package = (opts.package or root).resolve()
        child(root, package, opts.problem, opts.slot_base, opts.cache_scope, opts.xla_flags)
        return
    if opts.floor is not None:
        floor(opts.floor.resolve(), opts.problem)
        return
    if opts.flood is not None:
        flood(opts.flood.resolve())
        return
    if opts.baseline is None:
        parser.error("give --baseline DIR: a checkout of 27d19fb (git worktree add DIR 27d19fb)")
    compare(opts, opts.baseline.resolve())


def compare(opts: argparse.Namespace, baseline: Path) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f}, cpus={os.cpu_count()}")
    current = {"xla_flags": floor_env()["XLA_FLAGS"]} if opts.today_flags == "current" else {}
    package = {"package": str(baseline)}
    new = design("new", ROOT, opts, 100, **package)
    today = design("today", baseline, opts, 200, **package, **current)
    lowest = floor_child(opts, baseline)
    children = [new, today, lowest]
    try:
        for one in children:
            one.wait_ready()
        if today.facts["split"]:
            print(f"note: {baseline} is a tracer/executor checkout too, not the single-process harness")
        counts = {(one.facts["cases"], one.facts["public"]) for one in children}
        if len(counts) != 1:
            raise SystemExit(f"the designs loaded different cases (cases, public): {counts}")
        print(
            f"problem {opts.problem} of {baseline} ({new.facts['cases']} cases, {new.facts['public']} public)"
        )
        print(f"XLA flags: new and floor {new.facts['flags']!r}; today {today.facts['flags']!r}")
        submit: dict[str, list[float]] = {"new": [], "today": []}
        run: dict[str, list[float]] = {"new": [], "today": [], "floor": []}
        for _ in range(opts.repeats):
            for one in (new, today):
                submit[one.name].append(one.ask(do="submit")["s"])
                run[one.name].append(one.ask(do="run")["s"])
            run["floor"].append(lowest.ask(do="run")["s"])
        rates: dict[tuple[str, int], list[float]] = {}
        for concurrency in (1, 2):
            for _ in range(opts.blocks):
                for one in (new, today):
                    rate = one.ask(do="burst", count=opts.burst, concurrency=concurrency)["per_s"]
                    rates.setdefault((one.name, concurrency), []).append(rate)
    finally:
        for one in (today, lowest):
            one.close()

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

    # 5: today and the floor are closed; the new design's child stays, beside one caching per process.
    cached = design("cached", ROOT, opts, 150, cache_scope="process", **package)
    try:
        cached.wait_ready()
        cache: dict[str, list[float]] = {"job": [], "process": []}
        for _ in range(opts.repeats):
            for name, one in (("job", new), ("process", cached)):
                cache[name].append(one.ask(do="run_then_submit")["s"])
    finally:
        for one in (new, cached):
            one.close()
    print("\n5. Submit right after a Run of the same code (the executor that ran it is reused when idle)")
    print(f"   cache per job {p50(cache['job']):.2f} s   cache per process {p50(cache['process']):.2f} s   "
          f"ratio {p50(cache['process']) / p50(cache['job']):.2f}x")  # fmt: skip

    print("\n4. The judge's peak RSS growth under a flood of 100 near-1 MiB frames")
    for name, root in (("new", ROOT), ("today", baseline)):
        grew, outcome = flood_rss(root)
        print(f"   {name:5s} {grew:7.0f} MiB   ({outcome[:120]})")
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
