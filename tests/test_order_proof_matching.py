"""The order-proof bound (``[compare] magnitude``) wherever the judge compares float results, not only the
output against the reference: known-mistake matching (``judge.feedback.mistakes``), the gradient of a
``[gradient]`` problem (``judge.core.gradients``), and the autodiff-seed comparison of ``require_autodiff``
(``judge.grading.transform_rules.autodiff_broken``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from judge.authoring.statement import statement_markdown
from judge.core.compare import Checker
from judge.core.expected import expected_magnitudes, expected_outputs
from judge.core.gradients import accepts_with_gradient, compare_with_gradient, split_scale
from judge.core.problems import load_problem
from judge.core.spec import default_tolerances
from judge.feedback.mistakes import MistakeFinder, same_as
from judge.grading.transform_rules import autodiff_broken, autodiff_rule
from tests.conftest import ROOT
from tests.test_order_proof_tolerances import CASES, _case

F32 = np.float32


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path))
    yield


@pytest.mark.slow
def test_a_reordered_right_output_is_right_for_the_mistake_matcher_too() -> None:
    """masked-mean on a cancelling row: the reordered solution is accepted with magnitudes; the matcher,
    given the same magnitudes, calls it right (names no mistake) where the plain bound called it wrong."""
    problem = load_problem(ROOT / "problems" / "masked-mean")
    args, reordered = CASES["masked-mean"]
    case = _case(problem, args)
    (expected,) = expected_outputs(problem, [case])
    scales = expected_magnitudes(problem, [case])
    assert scales is not None
    got = reordered(case.inputs)
    assert not same_as(problem)(expected, got)
    assert same_as(problem, scales[0])(expected, got)
    finder = MistakeFinder(problem, [case], [expected], None, scales)
    assert finder.match(0, got) is None


def _checker() -> Checker:
    return Checker(tolerance=default_tolerances())


def test_the_gradient_half_of_the_magnitudes_scales_the_gradient() -> None:
    """A ``[gradient]`` problem's magnitude function returns the pair a program returns; the gradient's
    half widens the gradient's bound (and only it)."""
    expected, gradient = np.array([1.0], F32), {"x": np.array([1e-6], F32)}
    got = (np.array([1.0], F32), {"x": np.array([5e-5], F32)})
    scale = (np.array([1.0], F32), {"x": np.array([100.0], F32)})
    assert split_scale(scale) == (scale[0], scale[1]) and split_scale(None) == (None, None)
    assert not compare_with_gradient(_checker(), expected, gradient, got)[0].ok
    assert not accepts_with_gradient(_checker(), expected, gradient, got)
    result, _ = compare_with_gradient(_checker(), expected, gradient, got, scale=scale)
    assert result.ok and result.max_error_ratio < 0.1
    assert accepts_with_gradient(_checker(), expected, gradient, got, scale)
    # The output's half stays its own: a wrong output is still refused.
    wrong = (np.array([1.1], F32), got[1])
    assert not accepts_with_gradient(_checker(), expected, gradient, wrong, scale)


def test_the_autodiff_seed_comparison_uses_the_scaled_magnitudes() -> None:
    """value-and-grad: the second call (seeds times 2) compiled into another order of additions differs
    from twice the first by a rounding of the terms; with the case's magnitudes it is within the bound,
    a gradient that does not scale is still refused."""
    problem = load_problem(ROOT / "problems" / "value-and-grad")
    rule = autodiff_rule(problem.spec)
    assert rule is not None
    grads = {"b": np.array([0.5], F32), "w": np.array([[0.25]], F32)}
    output = (np.array(0.5, F32), grads)
    again = (np.array(0.5, F32), {"b": np.array([1.0 + 3e-5], F32), "w": np.array([[0.5 - 3e-5]], F32)})
    magnitude = (np.array(1.0, F32), {"b": np.array([90.0], F32), "w": np.array([[90.0]], F32)})
    plain = autodiff_broken(rule, problem.spec, _checker(), output, again, hidden=False, scale=2.0)
    assert plain is not None and "does not come from autodiff" in plain
    scaled = autodiff_broken(
        rule, problem.spec, _checker(), output, again, hidden=False, scale=2.0, magnitude=magnitude
    )
    assert scaled is None
    unscaled = (np.array(0.5, F32), grads)  # the seeds' factor did not reach the gradient
    broken = autodiff_broken(
        rule, problem.spec, _checker(), output, unscaled, hidden=False, scale=4.0, magnitude=magnitude
    )
    assert broken is not None


def test_the_statement_says_what_the_relative_tolerance_is_relative_to() -> None:
    sentence = "the relative part of the tolerance is taken of the sum of the terms' absolute values"
    assert sentence in statement_markdown(load_problem(ROOT / "problems" / "masked-mean"))
    assert sentence not in statement_markdown(load_problem(ROOT / "problems" / "kv-cache-update"))
