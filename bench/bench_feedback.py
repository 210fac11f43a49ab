"""What the feedback of issue 25 costs on the request path: Run and Submit with it and without, side by side.

One warm grading pool (the service's kind: tracers forked from a zygote) serves every grading; the variants
are interleaved so machine noise hits both alike, and the wrong solutions' outputs and the reference's
cost figures are cached first (as a running service has them after its first gradings):
  run    the public examples of a problem (``POST /run``), graded with a shipped wrong solution, so the
         mistake is looked up on every case, plus the program view and the cost line
  submit every case (``POST /api/submissions``), with an accepted solution
``feedback off`` is ``grade(..., feedback=False)``: no mistake lookup, no cost, no program view in the result
(the tracer still prints the program text for public signatures; ``view`` below measures that part alone,
in this process, against the trace and lowering it follows). Prints p50 per variant and the ratio on/off;
the target is within 5%.

    .venv/bin/python bench/bench_feedback.py [--repeats 15] [--problem adamw]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.grader import grade  # noqa: E402
from judge.problems import ProblemSet  # noqa: E402
from judge.sandboxes import choose_backend  # noqa: E402
from sandbox.limits import SandboxLimits  # noqa: E402
from sandbox.pool import GradingPool  # noqa: E402

#: Tracer slots of the bench's pool (the feedback tests' range).
SLOT_BASE = 1480


def _p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def view_cost(problem_slug: str, repeats: int) -> tuple[float, float]:
    """(trace + lower ms, view ms) of the reference's public signatures, in this process."""
    from judge.expected import _import_jax, load_reference
    from sandbox.inside.lowering import Lowerer
    from sandbox.inside.tracer import _program_view

    jax = _import_jax()
    problem = ProblemSet().get(problem_slug)
    fn = load_reference(problem)
    lower = Lowerer()
    static = tuple(i for i, a in enumerate(problem.spec.args) if not a.traced)
    traces: list[float] = []
    views: list[float] = []
    for _ in range(repeats):
        for case in problem.public_cases:
            args = [
                a if isinstance(a, float) or not s.traced else jax.device_put(a)
                for a, s in zip(case.inputs, problem.spec.args, strict=True)
            ]
            start = time.perf_counter()
            traced = jax.jit(fn, static_argnums=static).trace(*args)
            lower(traced.jaxpr)
            middle = time.perf_counter()
            _program_view(traced.jaxpr, lower, lower.last)
            end = time.perf_counter()
            traces.append(middle - start)
            views.append(end - middle)
    return _p50(traces), _p50(views)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--problem", default="adamw")
    args = parser.parse_args()
    problems = ProblemSet()
    problem = problems.get(args.problem)
    wrong = next(p for folder, p in problem.solutions() if folder == "wrong_answer" and "no_bias" in p.name)
    accepted = next(p for folder, p in problem.solutions() if folder == "accepted")
    wrong_code, accepted_code = wrong.read_text(), accepted.read_text()
    backend = choose_backend("auto")
    pool = GradingPool(backend, SandboxLimits(), size=1, slot_base=SLOT_BASE, slots=16)

    def source(limits: SandboxLimits, *, secret: bool = False):  # type: ignore[no-untyped-def]
        return pool.acquire(180, limits, secret=secret)

    public = list(problem.public_cases)
    timings: dict[str, list[float]] = {k: [] for k in ("run on", "run off", "submit on", "submit off")}
    try:
        # Warm: the pool, the expected outputs, the mistakes' outputs and the reference's costs.
        named = grade(problem, wrong_code, source, cases=public)
        grade(problem, accepted_code, source)
        assert any(c.mistake is not None for c in named.cases), "the wrong solution names no mistake"
        for _ in range(args.repeats):
            for feedback in (True, False):
                tag = "on" if feedback else "off"
                start = time.perf_counter()
                result = grade(problem, wrong_code, source, cases=public, feedback=feedback)
                timings[f"run {tag}"].append(time.perf_counter() - start)
                assert (result.cases[0].mistake is not None) == feedback
                start = time.perf_counter()
                grade(problem, accepted_code, source, feedback=feedback)
                timings[f"submit {tag}"].append(time.perf_counter() - start)
    finally:
        pool.close()
        backend.close()
    trace_ms, view_ms = view_cost(args.problem, 3)
    print(f"{args.problem}: {args.repeats} interleaved rounds, backend {backend.name}")
    for kind in ("run", "submit"):
        on, off = _p50(timings[f"{kind} on"]), _p50(timings[f"{kind} off"])
        print(f"  {kind:6} feedback on p50 {on:7.1f} ms   off p50 {off:7.1f} ms   on/off {on / off:.3f}")
    print(
        f"  view   tracer's program text {view_ms:.2f} ms per signature beside {trace_ms:.2f} ms trace+lower"
    )


if __name__ == "__main__":
    main()
