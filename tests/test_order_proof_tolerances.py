"""Order-proof tolerances (``[compare] magnitude``, ``judge.compare.element_bounds``): on inputs whose terms
cancel, within each problem's constraints, a correct solution that adds in another order than the reference
(reversed, normalising first, another association) is accepted, where the plain ``rtol * |expected|``
bound refused it; and the bound stays tight enough for a wrong formula on the same inputs.

The reordered solutions are computed here in float32 numpy, one addition at a time in the stated order, and
compared with the checker the grader uses, with the expected output and its magnitudes as the grader gets
them (``judge.expected``): the verdict's arithmetic without a sandbox, one cancelling case per problem."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.compare import bind
from judge.expected import expected_magnitudes, expected_outputs
from judge.problems import Case, Problem, convert_args, load_problem
from judge.spec import CaseDef

ROOT = Path(__file__).resolve().parent.parent
F32 = np.float32

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path))
    yield


def _case(problem: Problem, args: dict[str, Any]) -> Case:
    definition = CaseDef.model_construct(
        name="cancelling", visibility="hidden", dtype="float32", args=args, explanation=None
    )
    return Case(definition, convert_args(problem.spec, args, "float32"))


def _seq_sum(terms: list[Any]) -> Any:
    """Float32 terms added one at a time, left to right."""
    total = np.zeros_like(np.asarray(terms[0], F32))
    for term in terms:
        total = (total + np.asarray(term, F32)).astype(F32)
    return total


def _seq_dot(a: np.ndarray, b: np.ndarray, order: Callable[[int], range]) -> np.ndarray:
    """``a @ b`` in float32, the products added one at a time over the contracted axis in ``order``."""
    return _seq_sum([np.multiply.outer(a[..., j], b[j]).astype(F32) for j in order(a.shape[-1])])


def _reversed(n: int) -> range:
    return range(n - 1, -1, -1)


# ------------------------------------------------------------------------------------------- the cases


def _functional_array_update(inputs: tuple[Any, ...]) -> Any:
    """Set, then add the rows in reverse order."""
    x, set_idx, set_rows, add_idx, add_rows = inputs
    out = x.copy()
    n = x.shape[0]
    for i, row in zip(set_idx, set_rows, strict=True):
        if -n <= i < n:
            out[i] = row
    for i, row in reversed(list(zip(add_idx, add_rows, strict=True))):
        if -n <= i < n:
            out[i] = (out[i] + row).astype(F32)
    return out


def _masked_mean(inputs: tuple[Any, ...]) -> Any:
    """Normalise the weights first: ``sum(x * (mask / count))``."""
    x, mask = inputs
    count = np.maximum(mask.sum(-1), 1).astype(F32)
    weights = (mask / count[..., None]).astype(F32)
    return _seq_sum([(x[..., j] * weights[..., j]).astype(F32) for j in range(x.shape[-1])])


def _model_ensemble(inputs: tuple[Any, ...]) -> Any:
    """Biases first, products in reverse order."""
    params, x = inputs
    out = []
    for e in range(params["w1"].shape[0]):
        pre = (params["b1"][e] + _seq_dot(x, params["w1"][e], _reversed)).astype(F32)
        hidden = np.maximum(pre, F32(0))
        out.append((params["b2"][e] + _seq_dot(hidden, params["w2"][e], _reversed)).astype(F32))
    return np.stack(out)


def _value_and_grad(inputs: tuple[Any, ...]) -> Any:
    """The residual as ``(b - y) + x W`` summed in reverse, then the loss and the gradients in reverse."""
    params, x, y = inputs
    n = x.shape[0]
    r = ((params["b"] - y).astype(F32) + _seq_dot(x, params["w"], _reversed)).astype(F32)
    loss = _seq_sum([(F32(0.5) * r[i] * r[i]).astype(F32).sum(dtype=F32) for i in _reversed(n)]) / F32(n)
    gw = _seq_sum([np.multiply.outer(x[i], r[i]).astype(F32) for i in _reversed(n)]) / F32(n)
    gb = _seq_sum([r[i] for i in _reversed(n)]) / F32(n)
    return (np.asarray(loss, F32), {"b": gb.astype(F32), "w": gw.astype(F32)})


def _device_mesh_sharding(inputs: tuple[Any, ...]) -> Any:
    x, w = inputs
    y = _seq_dot(x, w, _reversed)
    return {"top": y.max(axis=1), "y": y}


CASES: dict[str, tuple[dict[str, Any], Callable[[tuple[Any, ...]], Any]]] = {
    "functional-array-update": (
        {
            "x": [[0.0, 1.0]],
            "set_idx": [1],
            "set_rows": [[0.0, 0.0]],
            "add_idx": [0, 0, 0],
            "add_rows": [[0.001, 1.0], [-999.999, 2.0], [1000.0, 3.0]],
        },
        _functional_array_update,
    ),
    "masked-mean": (
        {"x": [[0.395, 1000000.43, -1000000.0, 0.696, -1.184]], "mask": [[True] * 5]},
        _masked_mean,
    ),
    "model-ensemble": (
        # Two hidden units of nearly equal value weighted +99.9 and -99.9.
        {
            "params": {
                "w1": [[[0.9594, 0.9606, 0.5]], [[1.0, -1.0, 0.5]]],
                "b1": [[0.34, 0.424, 0.1], [0.0, 0.25, 0.0]],
                "w2": [[[99.9], [-99.9], [0.37]], [[1.0], [2.0], [1.0]]],
                "b2": [[0.371], [0.0]],
            },
            "x": [[95.526], [1.0]],
        },
        _model_ensemble,
    ),
    "value-and-grad": (
        # A residual near zero made of products near 90 (a near-perfect fit of the first example).
        {
            "params": {"w": [[0.9366], [-0.8846], [-0.2434]], "b": [-0.317]},
            "x": [[90.779, 96.246, 1.896], [1.0, 1.0, 1.0]],
            "y": [[-0.897], [0.02]],
        },
        _value_and_grad,
    ),
    "device-mesh-sharding": (
        {
            "x": [[99.99, -99.98, 0.01, 0.0]] * 4,
            "w": [[99.97, 1.0], [99.98, 1.0], [3.0, 1.0], [1.0, 1.0]],
        },
        _device_mesh_sharding,
    ),
}


@pytest.mark.parametrize("slug", sorted(CASES))
def test_a_reordered_solution_passes_a_cancelling_case(slug: str) -> None:
    problem = load_problem(ROOT / "problems" / slug)
    args, reordered = CASES[slug]
    case = _case(problem, args)
    assert problem.violations(case) == []  # a valid input: the Run panel takes it
    (expected,) = expected_outputs(problem, [case])
    scales = expected_magnitudes(problem, [case])
    assert scales is not None, f"{slug} declares no [compare] magnitude"
    checker = bind(problem.spec.compare, problem.spec.output)
    got = reordered(case.inputs)
    if problem.spec.output.kind == "tuple":
        got = tuple(got)
    plain = checker(expected, got)
    graded = checker(expected, got, scale=scales[0])
    # Without the magnitudes the float32 reference's own order decides: the reordered solution fails.
    assert not plain.ok, f"{slug}: the case does not cancel enough to show anything: {plain.message}"
    assert graded.ok, f"{slug}: {graded.message} (without magnitudes: {plain.message})"
    assert graded.max_error_ratio < 0.1  # far inside: the bound is not tuned to this order


def test_a_small_value_written_over_a_large_one_is_still_refused() -> None:
    """functional-array-update: ``old + (new - old)`` loses the new value's digits when ``old`` is large;
    a set keeps only the new value, so its magnitude is ``|new|`` and the bound stays tight."""
    problem = load_problem(ROOT / "problems" / "functional-array-update")
    args = {
        "x": [[1000.0], [3.0]],
        "set_idx": [0],
        "set_rows": [[0.001]],
        "add_idx": [1],
        "add_rows": [[1.0]],
    }
    case = _case(problem, args)
    assert problem.violations(case) == []
    (expected,) = expected_outputs(problem, [case])
    scales = expected_magnitudes(problem, [case])
    assert scales is not None
    x = case.inputs[0]
    got = x.copy()
    got[0] = (x[0] + (F32(0.001) - x[0]).astype(F32)).astype(F32)
    got[1] = x[1] + F32(1.0)
    result = bind(problem.spec.compare, problem.spec.output)(expected, got, scale=scales[0])
    assert not result.ok and result.max_error_ratio > 10, result.message
