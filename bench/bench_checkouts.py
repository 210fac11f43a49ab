"""This checkout's grading engine against another's, side by side in one run, plus an in-process floor.

Each checkout runs in a child process of its own (same interpreter, its own ``judge`` and ``sandbox`` on
``sys.path``) that keeps a warm ``GradingPool`` on the bwrap backend, as the service does; a third child
(same interpreter, this checkout) measures the in-process floor of a Run: the solution under a fresh
jax.jit on each public case, in that process, with the sandbox's XLA flags. The driver sends the three
children the same requests, interleaved, the two checkouts taking turns at going first (``in_turn``), so
machine noise hits them alike:

  1. Submit wall time (every public and hidden case), warm pools: ratio this/baseline;
  2. Run of the public examples: ratios this/baseline, this/floor and baseline/floor;
  3. Submits per second at concurrency 2 (a burst of submissions from two threads), ``--blocks`` bursts;
  4. CPU time per Submit, from the request to the end of its settling (closes and refills included): the
     child's own process (the judge side) and its sandboxes (``cpuacct.usage`` of a cgroup parent of its
     own, cgroup v1), ratios this/baseline. CPU time is what a loaded host stretches least, so it shows a
     change of cost where wall times drift.

Every ratio is printed twice: of the medians (p50) and of the minima (best times, for Submits/s the best
blocks), the minimum being the least disturbed by a busy host. A child answers once its own work after the
request is over (closing the used tracer, refilling its pools), so no child's background work falls into
another's times; within a burst it does, as on a busy service.

    git worktree add /tmp/baseline <commit>
    .venv/bin/python bench/bench_checkouts.py --baseline /tmp/baseline [--repeats 9] [--burst 10] [--blocks 3]
                                              [--problem global-norm-clipping]
    git worktree remove /tmp/baseline

``--variant fast-only`` takes as baseline, instead of another checkout, a copy of this one (its tracked
engine, problems and references, in a temporary folder removed afterwards) whose executor
compiles every program with the fast pipeline alone: no ``measure`` of the program, no race, no standard
pipeline (``sandbox.inside.compiling``). Side by side, that is what the choice of pipeline (issue 28) costs
an ordinary Submit and Run, apart from every other change since an older checkout:

    .venv/bin/python bench/bench_checkouts.py --variant fast-only [--repeats 15]

Runs as root (bwrap drops sandboxed code to its own uids). ``--child ROOT`` is a checkout child's entry
point, ``--floor`` the floor child's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from children import Child, before_rooms, burst, floor_env  # noqa: E402

CGROUP_V1 = Path("/sys/fs/cgroup")
CPUACCT = CGROUP_V1 / "cpuacct"

SOLUTIONS = {
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
}


# ------------------------------------------------------------------------------------------ the child


def child(root: Path, slug: str, slot_base: int) -> None:
    """Serve timing requests on stdin (one JSON line each) with ``root``'s engine; answer on stdout."""
    sys.path.insert(0, str(root))
    before_rooms(root)  # a baseline from before the rooms answers the new module names
    import inspect

    from judge.core.grader import grade
    from judge.core.problems import ProblemSet
    from sandbox.backends.bwrap import BwrapBackend, BwrapSettings
    from sandbox.host.resource_limits import SandboxLimits
    from sandbox.session.pool import GradingPool

    parent = f"jax-judge-bench-{slot_base}"  # this child's sandboxes alone: their CPU time (``cpu``)
    backend = BwrapBackend(BwrapSettings(cgroup_parent=parent))
    pool = GradingPool(backend, SandboxLimits(), size=2, slot_base=slot_base, slots=32)
    takes_secret = "secret" in inspect.signature(pool.acquire).parameters

    def source(limits: Any, **options: Any) -> Any:
        extra = {"secret": options.get("secret", False)} if takes_secret else {}
        return pool.acquire(180, limits, **extra)

    problem = ProblemSet(root / "problems").get(slug)
    code = (root / SOLUTIONS[slug]).read_text()

    def once(public_only: bool) -> float:
        started = time.perf_counter()
        result = grade(problem, code, source, cases=problem.public_cases if public_only else None)
        if not result.accepted:
            raise SystemExit(f"{root}: {result.verdict} {result.message}")
        return time.perf_counter() - started

    def settle() -> None:
        """This child's work after a request ends before the driver asks the next child: the closes the
        request queued (a used tracer's or one-job executor's kill, exit and cgroup removal) and its pools'
        refills (which may begin once a job is over), so that no checkout's background work lands in
        another's times, nor in its own next request's."""
        pools = (pool.tracers, getattr(pool.executors, "_pool", None))  # an older checkout has no executors'
        for closer in (getattr(one, "_closer", None) for one in pools):  # one closing thread per pool
            if closer is not None:
                closer.submit(lambda: None).result(60)
        pool.wait_full(600)

    def cpu() -> dict[str, float]:
        """CPU seconds so far: this process (every thread) and its sandboxes (cgroup v1 cpuacct)."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        accounted = CPUACCT / parent / "cpuacct.usage"
        sandbox = int(accounted.read_text()) / 1e9 if accounted.exists() else float("nan")
        return {"judge": usage.ru_utime + usage.ru_stime, "sandbox": sandbox}

    pool.wait_full(600)
    once(False)
    once(True)
    settle()
    print(json.dumps({"ready": True}), flush=True)
    try:
        for line in sys.stdin:
            request = json.loads(line)
            pool.wait_full(600)
            before = cpu()
            if request["do"] == "submit":
                reply: dict[str, Any] = {"s": once(False)}
            elif request["do"] == "run":
                reply = {"s": once(True)}
            else:  # a burst from two threads
                reply = {"per_s": burst(int(request["count"]), 2, once)}
            settle()
            after = cpu()
            reply["cpu"] = {side: after[side] - before[side] for side in after}
            print(json.dumps(reply), flush=True)
    finally:
        pool.close()
        backend.close()
        for controller in CGROUP_V1.glob("*"):  # the parent cgroups this child's backend made
            with contextlib.suppress(OSError):
                (controller / parent).rmdir()


# ------------------------------------------------------------------------------------------ the driver


def checkout_child(root: Path, slug: str, slot_base: int | None) -> Child:
    """A checkout's child (``slot_base`` set) or, with ``slot_base`` None, the floor child."""
    script = str(ROOT / "bench" / "bench_checkouts.py")
    role = ["--child", str(root), "--slot-base", str(slot_base)] if slot_base is not None else ["--floor"]
    env = floor_env() if slot_base is None else None
    return Child(str(root), [script, *role, "--problem", slug], root, env)


def floor_child(slug: str) -> None:
    """Serve ``run`` requests on stdin with the in-process floor of a Run (one JSON line each, as ``child``):
    the solution under a fresh jax.jit on each public case, in this process (started with the sandbox's XLA
    flags, ``floor_env``)."""
    sys.path.insert(0, str(ROOT))
    from judge.core.problems import ProblemSet
    from judge.core.trusted_jax import import_jax

    jax = import_jax()
    problem = ProblemSet(ROOT / "problems").get(slug)
    code = compile((ROOT / SOLUTIONS[slug]).read_text(), "solution.py", "exec")

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
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if request["do"] != "run":
            raise SystemExit(f"the floor child only runs, not {request['do']!r}")
        print(json.dumps({"s": once()}), flush=True)


#: Appended to the copy's ``sandbox/inside/compiling.py`` by ``--variant fast-only``: the executor binds
#: ``measure`` and ``Pipelines`` when it imports the module, after these lines ran.
FAST_ONLY = """

# bench/bench_checkouts.py --variant fast-only: the fast pipeline alone, charged as the race charges it.
def _fast_only(self, compile, shape, deliver):
    compile_with(FAST, compile, deliver)


def measure(ir, module):
    return ProgramShape(0, 0.0)


Pipelines.compile_program = _fast_only
"""
VARIANTS = {"fast-only": ("sandbox/inside/compiling.py", FAST_ONLY)}
#: Asserts, in a fresh interpreter with the copy first on ``sys.path``, that its executor took the variant.
VARIANT_PROBES = {
    "fast-only": "import sandbox.inside.executor as e; assert e.measure(None, None).ops == 0, e.__file__; "
    "assert e.Pipelines.compile_program.__name__ == '_fast_only'",
}


#: What a checkout child needs of a checkout: the engine, the problems and their references.
COPIED = ("judge", "sandbox", "problems", "reference")


@contextmanager
def variant_copy(name: str) -> Iterator[Path]:
    """A temporary copy of this checkout's tracked ``COPIED`` files with the variant's lines appended to
    its file; removed on exit."""
    relative, lines = VARIANTS[name]
    listed = subprocess.run(
        ["git", "ls-files", "-z", *COPIED], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    try:
        for path in filter(None, listed.split("\0")):
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / path, target)
        with open(folder / relative, "a") as out:
            out.write(lines)
        folder.chmod(0o755)  # mkdtemp makes it 0700: the sandboxed programs' uids must read the code
        probe = f"import sys; sys.path.insert(0, {str(folder)!r}); {VARIANT_PROBES[name]}"
        subprocess.run([sys.executable, "-c", probe], check=True)  # the executor sees the variant
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def ratios(label: str, this: list[float], other: list[float], *, higher_is_better: bool = False) -> str:
    """``label`` and the ratio of the medians and of the best values (least time, or most per second)."""
    best = max if higher_is_better else min
    p50 = statistics.median(this) / statistics.median(other)
    name = "best" if higher_is_better else "min"
    return f"  {label:<32} p50 {p50:.2f}x   {name:<4} {best(this) / best(other):.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--variant", choices=sorted(VARIANTS), help="baseline: this checkout so changed")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--burst", type=int, default=10)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--problem", default="global-norm-clipping", choices=sorted(SOLUTIONS))
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--slot-base", type=int, default=600, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child is not None:
        child(opts.child.resolve(), opts.problem, opts.slot_base)
        return
    if opts.floor:
        floor_child(opts.problem)
        return
    if (opts.baseline is None) == (opts.variant is None):
        parser.error("give --baseline DIR (another checkout of the judge) or --variant NAME")
    if opts.variant is not None:
        with variant_copy(opts.variant) as folder:
            print(f"baseline: this checkout, variant {opts.variant}")
            compare(opts, folder)
    else:
        compare(opts, opts.baseline.resolve())


def in_turn(checkouts: dict[str, Child], turn: int) -> list[tuple[str, Child]]:
    """The checkouts in the order of this turn: each goes first every other turn, so that neither always
    follows the other (and its background work) or the floor child. A fixed order showed a bias of its
    own: the same commit against itself measured up to 1.08x in one direction."""
    order = list(checkouts.items())
    return order if turn % 2 == 0 else order[::-1]


def compare(opts: argparse.Namespace, baseline: Path) -> None:
    """Interleave the requests to this checkout, ``baseline`` and the floor; print times and ratios."""
    checkouts = {
        "this": checkout_child(ROOT, opts.problem, 600),
        "baseline": checkout_child(baseline, opts.problem, 700),
    }
    floor = checkout_child(ROOT, opts.problem, None)
    children = [*checkouts.values(), floor]
    try:
        for one in children:
            one.wait_ready()
        times: dict[str, dict[str, list[float]]] = {
            n: {"submit": [], "run": [], "per_s": [], "cpu_judge": [], "cpu_sandbox": []}
            for n in (*checkouts, "floor")
        }
        for turn in range(opts.repeats):
            for name, one in in_turn(checkouts, turn):
                reply = one.ask(do="submit")
                times[name]["submit"].append(reply["s"])
                for side, seconds in reply.get("cpu", {}).items():
                    times[name][f"cpu_{side}"].append(seconds)
                times[name]["run"].append(one.ask(do="run")["s"])
            times["floor"]["run"].append(floor.ask(do="run")["s"])
        for turn in range(opts.blocks):
            for name, one in in_turn(checkouts, turn):
                times[name]["per_s"].append(one.ask(do="burst", count=opts.burst)["per_s"])
    finally:
        for one in children:
            one.close()
    this, base, low = times["this"], times["baseline"], times["floor"]["run"]
    print(f"{opts.problem}: repeats={opts.repeats} burst={opts.burst} blocks={opts.blocks}")
    for name in checkouts:
        got = times[name]
        print(
            f"  {name:<8} Submit p50 {statistics.median(got['submit']) * 1000:7.1f} ms"
            f" (min {min(got['submit']) * 1000:.1f})"
            f"   Run p50 {statistics.median(got['run']) * 1000:6.1f} ms (min {min(got['run']) * 1000:.1f})"
            f"   Submits/s at concurrency 2 median {statistics.median(got['per_s']):.2f}"
            f" (best {max(got['per_s']):.2f})"
        )
    print(f"  floor    Run p50 {statistics.median(low) * 1000:6.1f} ms (min {min(low) * 1000:.1f})")
    print(ratios("Submit wall time this/baseline", this["submit"], base["submit"]))
    print(ratios("Submits/s this/baseline", this["per_s"], base["per_s"], higher_is_better=True))
    print(ratios("Run this/baseline", this["run"], base["run"]))
    if this["cpu_judge"] and base["cpu_judge"]:
        for name in checkouts:
            got = times[name]
            print(
                f"  {name:<8} CPU per Submit p50: judge {statistics.median(got['cpu_judge']) * 1000:6.1f} ms,"
                f" sandboxes {statistics.median(got['cpu_sandbox']) * 1000:6.1f} ms"
            )
        total = [j + s for j, s in zip(this["cpu_judge"], this["cpu_sandbox"], strict=True)]
        base_total = [j + s for j, s in zip(base["cpu_judge"], base["cpu_sandbox"], strict=True)]
        print(ratios("CPU per Submit this/baseline", total, base_total))
        print(ratios("  of the judge process", this["cpu_judge"], base["cpu_judge"]))
        print(ratios("  of its sandboxes", this["cpu_sandbox"], base["cpu_sandbox"]))
    print(ratios("Run this/floor", this["run"], low))
    print(ratios("Run baseline/floor", base["run"], low))


if __name__ == "__main__":
    main()
