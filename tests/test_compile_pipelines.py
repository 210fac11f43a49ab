"""Compile time the judge chose is never the learner's fault (``sandbox.inside.compiling``).

Correct programs that the sandbox's fast XLA pipeline compiles pathologically (a hypot fold takes time
exponential in its length, a long unrolled chain crashes the compiler) are accepted on every backend; a
program too large for every pipeline still gets ``time_limit_exceeded``, and its message says compiling
took the time and what usually causes it.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.check import margins
from judge.check.compile_share import COMPILE_SHARE_WARN
from judge.check.context import CheckContext, SolutionGrade
from judge.check.diagnostics import Diagnostics
from judge.core.grader import build_session, grade, interpret
from judge.core.problems import Problem, ProblemSet
from judge.core.results import CaseResult, GradeResult
from judge.core.verdicts import Verdict
from sandbox.host.resource_limits import SandboxLimits
from sandbox.inside.compiling import (
    FAST,
    STANDARD,
    Outcome,
    Pipelines,
    ProcessClock,
    ProgramShape,
    measure,
)
from sandbox.session.pool import GradingPool
from sandbox.session.reports import RawRun, Stop, decode_load
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT, available_backends
from tests.program_pool import backend_pool

SLOT_BASE = 520
HYPOT_FOLD = ROOT / "problems/global-norm-clipping/solutions/accepted/hypot_fold.py"

#: Correct for scale-tree: 3000 steps of ``y = y * 0.5 + 1`` reach exactly 2 from any finite start, so the
#: result is exactly ``factor * leaf``. One elementwise chain of 6000 ops on the input, which XLA cannot
#: simplify away: the fast pipeline's emitters overflow their thread's stack on it (SIGSEGV).
LONG_CHAIN = """
import jax


def scale_tree(tree, factor):
    def scale(leaf):
        y = leaf
        for _ in range(3000):
            y = y * 0.5 + 1.0
        return factor * leaf * (y / 2.0)
    return jax.tree.map(scale, tree)
"""

#: A jitted helper of 1000 ops called 60 times: cheap to trace, 60,000 ops for XLA once calls are inlined
#: (about 14 s to compile with the standard pipeline, in about 500 MiB).
HUGE = """
import jax


@jax.jit
def step(x):
    for _ in range(500):
        x = x * 1.0001
        x = x + 1e-4
    return x


def scale_tree(tree, factor):
    def scale(leaf):
        for _ in range(60):
            leaf = step(leaf)
        return leaf * factor
    return jax.tree.map(scale, tree)
"""


# ------------------------------------------------------------------------------------------ the measure


def _shape(fn: Any, *args: Any) -> ProgramShape:
    import jax
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    from sandbox.inside.lowering import Lowerer, parse

    data = Lowerer()(jax.jit(fn).trace(*args).jaxpr)
    with mlir.make_ir_context():
        return measure(ir, parse(ir, data))


def test_the_measure_sees_a_hypot_fold_and_inlined_calls() -> None:
    import jax
    import jax.numpy as jnp

    struct: Any = jax.ShapeDtypeStruct
    leaves = [struct((3,), jnp.float32)] * 10

    def fold(xs: list[Any]) -> Any:
        return functools.reduce(jnp.hypot, [jnp.linalg.norm(x) for x in xs])

    def plain(xs: list[Any]) -> Any:
        return jnp.sqrt(sum(jnp.sum(x * x) for x in xs))

    folded, ordinary = _shape(fold, leaves), _shape(plain, leaves)
    assert folded.expansion > 1e6 > 100 > ordinary.expansion
    assert ordinary.ops < 200

    @jax.jit
    def helper(x: Any) -> Any:
        for _ in range(10):
            x = x * 2.0
        return x

    def called(x: Any) -> Any:
        for _ in range(50):
            x = helper(x)
        return x

    def unrolled(x: Any) -> Any:
        for _ in range(500):
            x = x * 2.0
        return x

    # 50 call sites of one 10-multiply function: XLA compiles 500 multiplies, as if unrolled in place.
    inlined, flat = _shape(called, leaves[0]).ops, _shape(unrolled, leaves[0]).ops
    assert flat > 500 and abs(inlined - flat) < 0.1 * flat


def test_a_call_cycle_counts_as_larger_than_any_bound() -> None:
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    text = """
    func.func public @main(%x: tensor<f32>) -> tensor<f32> {
      %0 = func.call @loop(%x) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    func.func private @loop(%x: tensor<f32>) -> tensor<f32> {
      %0 = func.call @loop(%x) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    """
    with mlir.make_ir_context():
        shape = measure(ir, ir.Module.parse(text))
    assert shape.ops > 10**12


# ------------------------------------------------------------------------------------------ the race


def _compiles(fast: Any, standard: Any) -> Any:
    def compile(pipeline: str) -> Any:
        return fast() if pipeline == FAST else standard()

    return compile


def _race(pipelines: Pipelines, fast: Any, standard: Any, shape: ProgramShape) -> Outcome:
    """What ``compile_program`` delivers (waiting for a delivery from another thread, if need be)."""
    got: list[Outcome | BaseException] = []
    arrived = threading.Event()

    def deliver(result: Outcome | BaseException) -> None:
        got.append(result)
        arrived.set()

    pipelines.compile_program(_compiles(fast, standard), shape, deliver)
    assert arrived.wait(30)
    time.sleep(0.05)
    assert len(got) == 1, "delivered more than once"
    if isinstance(got[0], BaseException):
        raise got[0]
    return got[0]


def test_a_slow_fast_compile_loses_to_the_standard_one_and_lingers() -> None:
    release = threading.Event()

    def slow() -> str:
        release.wait(30)
        return "fast"

    pipelines = Pipelines(race_after_s=0.05)
    outcome: list[Outcome] = []
    caller = threading.Thread(
        target=lambda: outcome.append(_race(pipelines, slow, lambda: "standard", ProgramShape(10, 1.0)))
    )
    caller.start()  # the fast compile runs on the caller's thread, which the loser holds
    try:
        deadline = time.monotonic() + 10
        while not pipelines.lingering() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pipelines.lingering()  # the loser still runs: the executor must not serve another job
    finally:
        release.set()
    caller.join(10)
    ((executable, pipeline, raced),) = [(o.executable, o.pipeline, o.raced) for o in outcome]
    assert (executable, pipeline, raced) == ("standard", STANDARD, True)
    assert not pipelines.lingering()


def test_a_quick_fast_compile_never_starts_a_standard_one() -> None:
    def never() -> str:
        raise AssertionError("the standard pipeline was started")

    pipelines = Pipelines(race_after_s=5.0)
    outcome = _race(pipelines, lambda: "fast", never, ProgramShape(10, 1.0))
    assert (outcome.executable, outcome.pipeline, outcome.raced) == ("fast", FAST, False)
    assert not pipelines.lingering()


@pytest.mark.parametrize("shape", [ProgramShape(10**6, 1.0), ProgramShape(10, 1e12)])
def test_a_large_or_expanding_program_goes_straight_to_the_standard_pipeline(shape: ProgramShape) -> None:
    def never() -> str:
        raise AssertionError("the fast pipeline was started")

    outcome = _race(Pipelines(), never, lambda: "standard", shape)
    assert (outcome.executable, outcome.pipeline, outcome.raced) == ("standard", STANDARD, False)


def test_a_failing_fast_compile_is_tried_again_the_standard_way() -> None:
    def broken() -> str:
        raise RuntimeError("fast pipeline bug")

    def also_broken() -> str:
        raise ValueError("standard too")

    outcome = _race(Pipelines(), broken, lambda: "standard", ProgramShape(10, 1.0))
    assert (outcome.pipeline, outcome.raced) == (STANDARD, True)
    with pytest.raises(RuntimeError, match="fast pipeline bug"):
        _race(Pipelines(), broken, also_broken, ProgramShape(10, 1.0))


def test_charged_time_subtracts_the_run_queue_wait() -> None:
    start = ProcessClock(0, {1: (0, 0), 2: (0, 0)})
    # Two threads runnable for 1 s of wall time, each ran 0.25 s and waited 0.75 s: a machine of its own
    # would have taken 0.25 s.
    loaded = ProcessClock(10**9, {1: (250_000_000, 750_000_000), 2: (250_000_000, 750_000_000)})
    assert start.charged_s(loaded) == pytest.approx(0.25)
    # Mostly asleep (a thread ran 0.1 s and waited 0.1 s in 1 s): the wall time less the wait.
    idle = ProcessClock(10**9, {1: (100_000_000, 100_000_000)})
    assert start.charged_s(idle) == pytest.approx(0.9)
    assert start.charged_s(ProcessClock(10**9, {})) == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------ messages


def _stopped(stop: Stop) -> str:
    """The message of the case the run stopped on with ``stop`` (no sandbox)."""
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    cases = list(problem.cases)
    job = build_session(problem, "def f(): pass\n", cases, [c.hidden for c in cases], 1 << 24)
    raw = RawRun(load=decode_load({"type": "loaded"}), stop=stop)
    expected = [case.inputs[0] for case in cases]
    limits = SandboxLimits(case_time_s=2.0, memory_mb=1024)
    visibility: Any = [c.visibility for c in cases]
    result = interpret(problem, cases, visibility, expected, raw, limits, job, backend="fake", elapsed_ms=1.0)
    return result.cases[stop.case or 0].message


_LARGE = 64 * 1024  # bytes of a program unrolled from a Python loop (judge.core.compile_failure)
_SMALL = 4 * 1024  # bytes of an ordinary program
#: What the executor printed when XLA's CPU compiler aborted on an empty slice of a concatenation
#: (``ravel_pytree`` of a tree with an empty leaf after its first, hessian-vector-product).
_LENGTH_ERROR = (
    "executor output: terminate called after throwing an instance of 'std::length_error'\n  what():  "
    "SmallVector unable to grow. Requested capacity (18446744073709551615) is larger than maximum value for "
    "size type (4294967295)"
)


def test_compile_phase_stops_say_compiling_took_it_and_why() -> None:
    for size in (None, _LARGE):
        timeout = _stopped(Stop("executor", "compile", 0, timeout="case", returncode=-9, program_bytes=size))
        assert timeout.startswith("compiling the program, not running it, took longer than the 2 s limit")
        memory = _stopped(
            Stop(
                "executor",
                "compile",
                0,
                returncode=-6,
                notes=["executor output: terminate called after throwing an instance of 'std::bad_alloc'"],
                program_bytes=size,
            )
        )
        assert memory.startswith("compiling the program, not running it, used more than the 1024 MiB memory")
        for message in (timeout, memory):
            assert "Python loop is unrolled" in message and "jax.lax.scan" in message
    crash = _stopped(Stop("executor", "compile", 0, returncode=-11, program_bytes=_LARGE))
    assert crash.startswith("XLA failed to compile the program: its compiler crashed (signal SIGSEGV)")
    assert "The program is large" in crash and "Python loop is unrolled" in crash and "jax.lax.scan" in crash
    # A crash while running is still the compiled program's.
    assert "compiled program crashed" in _stopped(Stop("executor", "run", 0, returncode=-11))


def test_a_compiler_abort_says_xla_failed_and_why_not_that_the_program_is_large() -> None:
    """A small program XLA aborts on (std::length_error inside XLA, SIGABRT) is told as XLA's failure, with
    XLA's own words, and never blamed on the program's size."""
    for size in (_SMALL, None):
        message = _stopped(
            Stop("executor", "compile", 0, returncode=134, notes=[_LENGTH_ERROR], program_bytes=size)
        )
        assert message.startswith(
            "XLA failed to compile the program: its compiler ended the process (signal SIGABRT) with "
            "std::length_error: SmallVector unable to grow. Requested capacity (18446744073709551615)"
        )
        assert "error inside XLA, not one your code raised" in message
        assert "program is large" not in message and "Python loop" not in message
    # The same abort of a large program names both.
    large = _stopped(
        Stop("executor", "compile", 0, returncode=134, notes=[_LENGTH_ERROR], program_bytes=_LARGE)
    )
    assert "std::length_error: SmallVector" in large and "The program is large" in large
    # A crash without a reason says so, and blames no size it does not know to be large.
    for size in (_SMALL, None):
        silent = _stopped(Stop("executor", "compile", 0, returncode=-11, program_bytes=size))
        assert silent == (
            "XLA failed to compile the program: its compiler crashed (signal SIGSEGV) without saying why."
        )
    # A compile timeout of a program known to be small blames no loop either.
    timeout = _stopped(Stop("executor", "compile", 0, timeout="case", returncode=-9, program_bytes=_SMALL))
    assert timeout.endswith("the remaining cases were not run.")


def test_a_compiler_abort_on_a_hidden_case_names_the_kind_without_xlas_words() -> None:
    """XLA's text may print the program's shapes: a hidden case gets the exception's type alone."""
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    hidden = next(i for i, c in enumerate(problem.cases) if c.visibility == "hidden")
    message = _stopped(
        Stop("executor", "compile", hidden, returncode=134, notes=[_LENGTH_ERROR], program_bytes=_SMALL)
    )
    assert message.startswith(
        "XLA failed to compile the program: its compiler ended the process (signal SIGABRT) with "
        "std::length_error (details are not shown for hidden cases)."
    )
    assert "SmallVector" not in message and "18446744073709551615" not in message


# ------------------------------------------------------------------------------------------ judge check


def _margins(compile_ms: list[float]) -> list[str]:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    names = [c.name for c in problem.cases][: len(compile_ms)]
    cases = [
        CaseResult(name=n, visibility="hidden", verdict=Verdict.ACCEPTED, error_ratio=0.0, compile_ms=ms)
        for n, ms in zip(names, compile_ms, strict=True)
    ]
    result = GradeResult(
        problem=problem.slug,
        verdict=Verdict.ACCEPTED,
        passed=len(cases),
        total=len(cases),
        cases=cases,
        backend="test",
        elapsed_ms=1.0,
    )
    ctx = CheckContext(root=problem.root, diag=Diagnostics(problem.slug, ROOT), problem=problem)
    ctx.diag.check = "margins"
    ctx.grades.append(SolutionGrade("accepted", Path("/x/accepted/slow.py"), result))
    margins.check(ctx)
    return [f.message for f in ctx.diag.findings]


def test_judge_check_warns_when_an_accepted_solution_compiles_for_long() -> None:
    limit_ms = ProblemSet(FIXTURES).get(FIXTURE_SLUG).spec.limits.case_time_s * 1000
    assert _margins([40.0, COMPILE_SHARE_WARN * limit_ms - 1]) == []
    (warning,) = _margins([40.0, COMPILE_SHARE_WARN * limit_ms + 500])
    assert "compiling its program for case" in warning and "charged time" in warning
    assert f"warned above {COMPILE_SHARE_WARN:.0%}" in warning


# ------------------------------------------------------------------------------------------ real sandboxes


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with backend_pool(str(request.param), SLOT_BASE, slots=16) as pool:
        yield pool


def _run(pool: GradingPool, problem: Problem, code: str, inputs: dict[str, Any]) -> GradeResult:
    return grade(
        problem,
        code,
        lambda limits: pool.acquire(180, limits),
        cases=(),
        custom=(problem.custom_case(inputs),),
    )


def test_a_hypot_fold_is_accepted(pool: GradingPool) -> None:
    problem = ProblemSet().get("global-norm-clipping")
    grads = {f"layer{i}": [0.5 * i, -0.25, 1.0] for i in range(12)}
    result = _run(pool, problem, HYPOT_FOLD.read_text(), {"grads": grads, "max_norm": 1.0})
    assert result.verdict is Verdict.ACCEPTED, result.message
    # 12 leaves took the fast pipeline about 25 s; the standard one compiles it in well under the limit.
    compile_ms = result.cases[0].compile_ms
    assert compile_ms is not None and compile_ms < problem.spec.limits.case_time_s * 1000


def test_a_long_unrolled_chain_is_accepted(pool: GradingPool) -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    result = _run(pool, problem, LONG_CHAIN, {"tree": {"w": [1.0, -2.0, 3.5]}, "factor": 3.0})
    assert result.verdict is Verdict.ACCEPTED, result.message


def test_a_program_too_large_for_every_pipeline_names_the_compile(pool: GradingPool) -> None:
    base = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    spec = base.spec.model_copy(update={"limits": base.spec.limits.model_copy(update={"case_time_s": 4})})
    problem = Problem(spec, base.root, base.statement_source, base.starter, base.cases)
    result = _run(pool, problem, HUGE, {"tree": [1.0, 2.0], "factor": 2.0})
    assert result.verdict is Verdict.TIME_LIMIT_EXCEEDED, result.message
    message = result.cases[0].message
    assert "compiling" in message and "not running" in message
    assert "lax.fori_loop" in message and "lax.scan" in message
