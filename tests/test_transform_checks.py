"""Transformation checks (``[gradient]``): the cotangent, the combined program, the comparison and its
messages, the spec, the statement, the reference's gradient, and gradings in the sandbox of submissions
whose value is right and whose gradient is not."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from pydantic import ValidationError

from judge.authoring.statement import render_rules
from judge.core.compare import bind
from judge.core.expected import expected_gradients, reference_outputs
from judge.core.gradients import PREFIX, compare_with_gradient
from judge.core.hidden import hidden_message
from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.spec import CompareSpec, OutputSpec, ProblemSpec
from judge.core.verdicts import Verdict, WrongAnswerReason
from tests.conftest import FIXTURE_SLUG, FIXTURES, PROGRAM_SLUG
from tests.program_pool import pooled_grader

#: The sandbox gradings of the three program-feature modules run in one xdist worker, one pool at a time
#: (on a loaded 2-core host, several pools starting executors at once can exhaust a pool's start timeout).
pytestmark = pytest.mark.xdist_group("program_features")

#: Tracer slots of this module's pool.
SLOT_BASE = 440


@pytest.fixture(scope="module")
def graded() -> Iterator[Callable[[Problem, str], GradeResult]]:
    with pooled_grader(SLOT_BASE) as grader:
        yield grader


#: The fixture problem with a ``[gradient]`` check (w.r.t. ``x``, the pattern cotangent).
STE = PROGRAM_SLUG
PATTERN = [1.0, 10.0, 0.1875, 112.0, -0.015625, -1.25, -12.0, -0.21875, 64.0]


def _problem(slug: str = STE) -> Problem:
    return ProblemSet(FIXTURES).get(slug)


# ------------------------------------------------------------------------------------- the program


def test_the_pattern_cotangent_is_exact_in_every_dtype() -> None:
    import jax.numpy as jnp

    from sandbox.shared.transforms import cotangent

    flat = np.asarray(cotangent(jnp, (9,), jnp.float32, "pattern"))
    assert flat.tolist() == PATTERN
    grid = np.asarray(cotangent(jnp, (3, 3), jnp.bfloat16, "pattern"))
    assert grid.dtype == ml_dtypes.bfloat16 and grid.astype(np.float32).ravel().tolist() == PATTERN
    assert np.asarray(cotangent(jnp, (), jnp.float32, "ones")) == 1.0
    assert np.asarray(cotangent(jnp, (0, 2), jnp.float32, "pattern")).shape == (0, 2)
    # The next leaf gets the pattern three places on, so two leaves of one shape never share a cotangent.
    second = np.asarray(cotangent(jnp, (6,), jnp.float32, "pattern", leaf=1))
    assert second.tolist() == PATTERN[3:9]


def test_with_gradient_returns_the_output_and_the_vjp_of_the_chosen_arguments() -> None:
    import jax
    import jax.numpy as jnp

    from sandbox.shared.transforms import with_gradient

    def fn(a: Any, scale: Any) -> Any:
        return {"y": a["w"] * a["w"] * scale}

    args = ({"w": jnp.arange(3.0)}, jnp.float32(2.0))
    out, grads = jax.jit(
        lambda a, s: with_gradient(
            fn, (a, s), [0], ["a"], "pattern", vjp=jax.vjp, tree_map=jax.tree_util.tree_map, jnp=jnp
        )
    )(*args)
    assert np.asarray(out["y"]).tolist() == [0.0, 2.0, 8.0]
    # d(ct * 2 w^2)/dw = 4 w ct, with ct = 1, 10, 0.1875
    assert set(grads) == {"a"} and np.asarray(grads["a"]["w"]).tolist() == [0.0, 40.0, 1.5]


# ------------------------------------------------------------------------------------- comparison

CHECKER = bind(CompareSpec(), OutputSpec(kind="pytree"))
EXPECTED = {"w": np.array([1.0, 2.0], np.float32)}
GRADIENT = {"x": {"w": np.array([1.0, 1.25], np.float32)}}


def test_a_right_value_with_a_wrong_gradient_names_the_gradient_leaf() -> None:
    got = ({"w": np.array([1.0, 2.0], np.float32)}, {"x": {"w": np.zeros(2, np.float32)}})
    result, output = compare_with_gradient(CHECKER, EXPECTED, GRADIENT, got)
    assert not result.ok and result.reason is WrongAnswerReason.VALUE
    assert result.message.startswith(PREFIX + 'x["w"][1]: got 0, expected 1.25')
    assert output is got[0]  # only the output is shown as the user's output
    assert hidden_message(result).startswith('gradient of the output w.r.t. x["w"]: wrong values, the worst')
    assert "expected" not in hidden_message(result)


def test_a_wrong_value_is_reported_before_the_gradient() -> None:
    got = ({"w": np.array([1.0, 3.0], np.float32)}, {"x": {"w": np.zeros(2, np.float32)}})
    result, _ = compare_with_gradient(CHECKER, EXPECTED, GRADIENT, got)
    assert not result.ok and result.message.startswith("w[1]: got 3, expected 2")


def test_both_right_is_accepted_with_the_worse_error_ratio() -> None:
    got = (
        {"w": np.array([1.0, 2.0], np.float32)},
        {"x": {"w": np.array([1.0, 1.25 + 6e-6], np.float32)}},
    )
    result, _ = compare_with_gradient(CHECKER, EXPECTED, GRADIENT, got)
    assert result.ok and 0.2 < result.max_error_ratio <= 1


@pytest.mark.parametrize(
    "got",
    [
        {"w": np.array([1.0, 2.0], np.float32)},  # a forged program that returns the output alone
        ({"w": np.array([1.0, 2.0], np.float32)}, [np.zeros(2, np.float32)]),
        ({"w": np.array([1.0, 2.0], np.float32)}, {"y": {"w": np.zeros(2, np.float32)}}),
        (
            {"w": np.array([1.0, 2.0], np.float32)},
            {"x": {"w": np.zeros(2, np.float32).astype(ml_dtypes.bfloat16)}},
        ),
    ],
)
def test_a_malformed_gradient_part_is_a_wrong_answer(got: Any) -> None:
    result, _ = compare_with_gradient(CHECKER, EXPECTED, GRADIENT, got)
    assert not result.ok and result.reason is not WrongAnswerReason.VALUE


# ------------------------------------------------------------------------------------- spec, statement


@pytest.mark.parametrize(
    ("gradient", "words"),
    [
        ({"wrt": ["y"]}, "not an argument"),
        ({"wrt": ["x", "x"]}, "repeats"),
        ({"wrt": []}, "at least 1"),
        ({"wrt": ["x"], "cotangent": "random"}, "cotangent"),
    ],
)
def test_malformed_gradient_specs_are_refused(gradient: dict[str, Any], words: str) -> None:
    base = _problem().spec.model_dump()
    ProblemSpec.model_validate(base)
    with pytest.raises(ValidationError, match=words):
        ProblemSpec.model_validate({**base, "gradient": gradient})


def test_a_gradient_wrt_a_number_argument_is_refused() -> None:
    base = _problem(FIXTURE_SLUG).spec.model_dump()
    with pytest.raises(ValidationError, match="not a traced array argument"):
        ProblemSpec.model_validate({**base, "gradient": {"wrt": ["factor"]}})


def test_the_statement_states_the_gradient_check() -> None:
    text = render_rules(_problem().spec)
    assert "the judge checks the gradient of `running_total` with respect to `x`" in text
    assert "from 1/64 to 112" in text and "`gradient of the output w.r.t.`" in text
    assert "jax.vjp" not in render_rules(_problem(FIXTURE_SLUG).spec)


def test_the_reference_gradient_is_the_vjp_with_the_pattern_cotangent() -> None:
    problem = _problem()
    case = problem.public_cases[0]  # f = square, x = [[1, 2], [3, 0]]: y = [5, 14]
    # y_t sums x_sj**2 over rows s <= t, so d/dx_sj of sum_t ct_t y_t is 2 x_sj (ct_s + ... + ct_T-1):
    # with ct = 1, 10 that is 2 x * 11 on row 0 and 2 x * 10 on row 1.
    want = [[22.0, 44.0], [60.0, 0.0]]
    (gradient,) = reference_outputs(problem, [case], "gradient")
    assert np.asarray(gradient["x"]).tolist() == want
    cached = expected_gradients(problem, [case])
    assert cached is not None
    first: Any = cached[0]
    assert np.asarray(first["x"]).tolist() == want
    assert expected_gradients(_problem(FIXTURE_SLUG), []) is None


# ------------------------------------------------------------------------------------- end to end

Grader = Callable[[Problem, str], GradeResult]

#: A row sum with a custom_vjp: ``correct`` says whether its backward rule is the true one (the cotangent
#: times f'(row), got from jax.vjp) or one that ignores the cotangent and returns ones.
_CUSTOM_VJP = """
import jax
import jax.numpy as jnp


def running_total(f, x):
    @jax.custom_vjp
    def row_sum(row):
        return jnp.sum(f(row))

    def forward(row):
        return row_sum(row), row

    def backward(row, ct):
        slope = jax.vjp(f, row)[1](jnp.ones_like(row))[0]
        return ({correct},)

    row_sum.defvjp(forward, backward)

    def step(total, row):
        total = total + row_sum(row)
        return total, total

    return jax.lax.scan(step, jnp.zeros((), x.dtype), x)[1]
"""
CUSTOM_VJP = _CUSTOM_VJP.replace("{correct}", "ct * slope")
BACKWARD_RETURNS_ONES = _CUSTOM_VJP.replace("{correct}", "jnp.ones_like(row)")


def _solution(name: str) -> str:
    return (FIXTURES / STE / "solutions" / name).read_text()


@pytest.mark.slow
def test_a_stopped_gradient_fails_with_a_gradient_message(graded: Grader) -> None:
    result = graded(_problem(), _solution("wrong_answer/stops_the_gradient.py"))
    assert result.verdict is Verdict.WRONG_ANSWER
    assert all(c.verdict is Verdict.WRONG_ANSWER for c in result.cases)
    first = result.cases[0]  # the values are right: only the gradient differs
    assert first.message.startswith("gradient of the output w.r.t. x[1, 0]: got 0, expected 60")
    assert first.output is not None and first.output.json_value == [5.0, 14.0]
    hidden = [c for c in result.cases if c.visibility == "hidden"]
    assert all(c.message.startswith("gradient of the output w.r.t. x") for c in hidden)
    assert all("expected" not in c.message and c.output is None for c in hidden)


@pytest.mark.slow
def test_a_backward_rule_that_ignores_the_cotangent_fails(graded: Grader) -> None:
    result = graded(_problem(), BACKWARD_RETURNS_ONES)
    assert result.verdict is Verdict.WRONG_ANSWER
    assert "gradient of the output w.r.t." in result.message


@pytest.mark.slow
def test_a_custom_vjp_with_the_true_backward_rule_is_accepted(graded: Grader) -> None:
    result = graded(_problem(), CUSTOM_VJP)
    assert result.verdict is Verdict.ACCEPTED, result.message


#: A program summary that meets the problem's loop rule (a sum inside the loop).
LOOP = {"ops": {"stablehlo.while": 1}, "loop_ops": {"stablehlo.reduce": 1}}


def test_verdicts_from_a_fabricated_run_with_a_zero_gradient() -> None:
    from judge.core.grader import build_session, interpret
    from sandbox.host.resource_limits import SandboxLimits
    from sandbox.session.reports import CaseReport, ProgramReport, RawRun, decode_compiled, decode_load
    from tests.fabricate import skeletonize

    problem = _problem()
    cases = [problem.public_cases[1], problem.hidden_cases[1]]  # example_2 and its lookalike: one signature
    job = build_session(problem, "def f(): pass\n", cases, [False, True], 1 << 24)
    assert job.gradient == {"wrt": [1], "names": ["x"], "cotangent": "pattern"}
    x = cases[0].inputs[1]  # shape (3, 1), as its lookalike's
    expected = [np.array([2.0, 2.0, -2.0], np.float32) for _ in cases]
    gradients = [{"x": np.array([[0.0], [0.0], [1.75]], np.float32)} for _ in cases]
    raw = RawRun(load=decode_load({"type": "loaded"}), executor_healthy=True)
    for i in range(len(cases)):
        skeleton, leaves = skeletonize((expected[i], {"x": np.zeros(x.shape, np.float32)}))
        raw.programs.setdefault(
            job.cases[i].sig,
            ProgramReport(
                job.cases[i].sig,
                skeleton=skeleton,
                compiled=decode_compiled({"summary": LOOP, "compile_ms": 1.0}),
            ),
        )
        raw.runs[i] = CaseReport(i, outputs=leaves, run_ms=1.0)
    visibility: Any = ["public", "hidden"]
    result = interpret(
        problem,
        cases,
        visibility,
        expected,
        raw,
        SandboxLimits(),
        job,
        backend="fake",
        elapsed_ms=1.0,
        gradients=gradients,
    )
    public, hidden = result.cases
    assert public.verdict is Verdict.WRONG_ANSWER and public.message.startswith(
        PREFIX + "x[2, 0]: got 0, expected 1.75"
    )
    assert public.output is not None and public.output.json_value == [2.0, 2.0, -2.0]
    assert hidden.message.startswith(PREFIX + "x: wrong values") and "expected" not in hidden.message
    # The same run with the right gradient is accepted.
    for i in (0, 1):
        skeleton, leaves = skeletonize((expected[i], gradients[i]))
        raw.runs[i] = CaseReport(i, outputs=leaves, run_ms=1.0)
    fixed = interpret(
        problem,
        cases,
        visibility,
        expected,
        raw,
        SandboxLimits(),
        job,
        backend="fake",
        elapsed_ms=1.0,
        gradients=gradients,
    )
    assert fixed.verdict is Verdict.ACCEPTED, fixed.message


def test_judge_check_reports_a_reference_gradient_that_is_not_finite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judge.check import Severity, run_checks

    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "problems" / STE
    shutil.copytree(FIXTURES / STE, root, ignore=shutil.ignore_patterns("solutions", "__pycache__"))
    (tmp_path / "reference").mkdir()
    reference = (FIXTURES.parent / "reference" / "running_total.py").read_text()
    # The same values, but the square root's slope at 0 is infinite: a non-finite gradient.
    broken = reference.replace("jnp.sum(f(row))", "jnp.sum(f(row) + jnp.sqrt(row * 0.0))")
    assert broken != reference
    (tmp_path / "reference" / "running_total.py").write_text(broken)
    report = run_checks([root], backend=None, concurrency=1)
    found = [f for f in report.findings if f.check == "reference" and f.severity is Severity.ERROR]
    assert found and all("non-finite gradient at gradient" in f.message for f in found), found
