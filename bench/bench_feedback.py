"""What the feedback of issue 25 costs on the request path: Run and Submit with it and without, side by side.

One warm grading pool (the service's kind: tracers forked from a zygote) serves every grading; the variants
are interleaved so machine noise hits both alike, and the wrong solutions' outputs and the reference's
cost figures are cached first (as a running service has them after its first gradings):
  run    the public examples of a problem (``POST /run``), graded with a shipped wrong solution, so the
         mistake is looked up on every case, plus the program view and the cost line
  submit every case (``POST /api/submissions``), with an accepted solution
``feedback off`` is ``grade(..., feedback=False)``: no mistake lookup, no cost, no program view in the result
(the tracer still prints the program text for public signatures; ``view`` below measures that part alone,
in this process, against the trace and lowering it follows). Each round runs Run and Submit with feedback
on, then both with it off ("off" first in odd rounds), so every Run follows a Submit (the pool's next
tracer ready, as between a service's requests) and neither side always comes first.
Prints per variant the p50 and the minimum with their ratios on/off, the ``paired`` ratio (the median over
pairs of rounds of on/off, each pair side by side: the steadiest on a busy machine) and the p50 CPU time of
the grading thread (the judge's own work, which is what feedback adds to); the target is within 5%.

The Run repeats one output, so after the first round its mistake lookup is the remembered answer (as for a
learner who runs the same code again, or submits it after a Run); ``match`` below measures the lookup of a
new output (``MistakeFinder.match``, the known mistakes' outputs cached) in this process, per failing case.

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

from judge.core.grader import grade  # noqa: E402
from judge.core.problems import ProblemSet  # noqa: E402
from judge.core.sandboxes import choose_backend  # noqa: E402
from sandbox.host.resource_limits import SandboxLimits  # noqa: E402
from sandbox.session.pool import GradingPool  # noqa: E402

#: Tracer slots of the bench's pool (the feedback tests' range).
SLOT_BASE = 1480


def _p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _min(values: list[float]) -> float:
    return min(values) * 1000


def _paired(on: list[float], off: list[float]) -> float:
    """The median over pairs of rounds (2k, 2k+1) of their on/off ratio: each pair runs "on" first once
    and "off" first once, close together, so both the order and slow swings of the machine's load cancel."""
    ratios = [sum(on[k : k + 2]) / sum(off[k : k + 2]) for k in range(0, len(on) - 1, 2)]
    return statistics.median(ratios) if ratios else sum(on) / sum(off)


def view_cost(problem_slug: str, repeats: int) -> tuple[float, float]:
    """(trace + lower ms, view ms) of the reference's public signatures, in this process."""
    from judge.core.trusted_jax import import_jax, load_reference
    from sandbox.inside.lowering import Lowerer
    from sandbox.inside.tracer import _program_view

    jax = import_jax()
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


def match_cost(problem_slug: str, wrong_name: str, repeats: int) -> tuple[float, int]:
    """(ms per failing case, failing cases) of looking up a new output's known mistake: a fresh finder's
    ``match`` (no remembered answer; the candidates remembered, as after the gradings) on each public case
    where the wrong solution's output is wrong."""
    from judge.core.expected import expected_gradients, expected_outputs
    from judge.feedback.mistakes import MistakeFinder, known_mistakes_cached, mistake_output, same_as

    problem = ProblemSet().get(problem_slug)
    public = list(problem.public_cases)
    expected, gradients = expected_outputs(problem, public), expected_gradients(problem, public)
    wrong = next(m for m in known_mistakes_cached(problem) if m.path.name == wrong_name)
    outputs = [mistake_output(problem, wrong, case) for case in public]
    same = same_as(problem)
    references = expected if gradients is None else list(zip(expected, gradients, strict=True))
    failing = [i for i, out in enumerate(outputs) if out is not None and not same(references[i], out)]
    times: list[float] = []
    for _ in range(repeats):
        finder = MistakeFinder(problem, public, expected, gradients)
        for i in failing:
            start = time.perf_counter()
            finder.match(i, outputs[i])
            times.append(time.perf_counter() - start)
    return _p50(times), len(failing)


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

    def source(limits: SandboxLimits):  # type: ignore[no-untyped-def]
        return pool.acquire(180, limits)

    public = list(problem.public_cases)
    variants = ("run on", "run off", "submit on", "submit off")
    #: Wall time per grading, and the grading thread's CPU time (its own work, the judge's side: what
    #: feedback adds to, far less moved by the other processes of a busy machine than wall time).
    timings: dict[str, list[float]] = {k: [] for k in variants}
    cpu_times: dict[str, list[float]] = {k: [] for k in variants}
    try:
        # Warm: the pool, the expected outputs, the mistakes' outputs and the reference's costs.
        named = grade(problem, wrong_code, source, cases=public)
        grade(problem, accepted_code, source)
        assert any(c.mistake is not None for c in named.cases), "the wrong solution names no mistake"
        for round_ in range(args.repeats):
            order = (True, False) if round_ % 2 == 0 else (False, True)
            for feedback in order:
                for kind, code, cases in (("run", wrong_code, public), ("submit", accepted_code, None)):
                    tag = "on" if feedback else "off"
                    start, cpu = time.perf_counter(), time.thread_time()
                    result = grade(problem, code, source, cases=cases, feedback=feedback)
                    timings[f"{kind} {tag}"].append(time.perf_counter() - start)
                    cpu_times[f"{kind} {tag}"].append(time.thread_time() - cpu)
                    if kind == "run":
                        assert (result.cases[0].mistake is not None) == feedback
    finally:
        pool.close()
        backend.close()
    trace_ms, view_ms = view_cost(args.problem, 3)
    match_ms, failing = match_cost(args.problem, wrong.name, args.repeats)
    print(f"{args.problem}: {args.repeats} interleaved rounds, backend {backend.name}")
    for kind in ("run", "submit"):
        on, off = timings[f"{kind} on"], timings[f"{kind} off"]
        cpu_on, cpu_off = _p50(cpu_times[f"{kind} on"]), _p50(cpu_times[f"{kind} off"])
        print(
            f"  {kind:6} feedback on p50 {_p50(on):7.1f} ms   off p50 {_p50(off):7.1f} ms   "
            f"on/off {_p50(on) / _p50(off):.3f}   paired {_paired(on, off):.3f}   "
            f"min on {_min(on):7.1f} ms   off {_min(off):7.1f} ms   on/off {_min(on) / _min(off):.3f}"
        )
        print(
            f"  {'':6} grading thread's CPU on p50 {cpu_on:6.1f} ms   off p50 {cpu_off:6.1f} ms   "
            f"on-off {cpu_on - cpu_off:+.2f} ms"
        )
    print(
        f"  view   tracer's program text {view_ms:.2f} ms per signature beside {trace_ms:.2f} ms trace+lower"
    )
    print(f"  match  a new output's mistake lookup {match_ms:.2f} ms per failing case ({failing} cases)")


if __name__ == "__main__":
    main()
