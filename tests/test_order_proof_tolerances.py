"""Order-proof tolerances (``[compare] magnitude``, ``judge.core.compare.element_bounds``): on inputs whose
terms cancel, within each problem's constraints, a correct solution that adds in another order than the
reference (reversed, normalising first, another association) is accepted, where the plain ``rtol *
|expected|`` bound refused it; and the bound stays tight enough for a wrong formula on the same inputs.

The reordered solutions are computed here in float32 numpy, one addition at a time in the stated order, and
compared with the checker the grader uses, with the expected output and its magnitudes as the grader gets
them (``judge.core.expected``): the verdict's arithmetic without a sandbox, one cancelling case per
problem."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import ArrayLike

from judge.core.compare import bind
from judge.core.expected import expected_magnitudes, expected_outputs
from judge.core.problems import Case, Problem, convert_args, load_problem
from judge.core.spec import CaseDef

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


def _seq_sum(terms: list[Any]) -> np.ndarray:
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


# --------------------------------------------- every other problem that sums: candidates in several orders


def _f64(*arrays: Any) -> list[np.ndarray]:
    return [np.asarray(a, np.float64) for a in arrays]


def _two_ways(a: ArrayLike, b: ArrayLike, c: ArrayLike, d: ArrayLike) -> list[np.ndarray]:
    """``a * b + c * d`` in float32 as two rounded products then a rounded sum, and fused (one rounding)."""
    a, b, c, d = (np.asarray(v, F32) for v in (a, b, c, d))
    separate = ((a * b).astype(F32) + (c * d).astype(F32)).astype(F32)
    fa, fb, fc, fd = _f64(a, b, c, d)
    return [separate, (fa * fb + fc * fd).astype(F32)]


def _static_args_jit(inputs: tuple[Any, ...]) -> list[Any]:
    """A sum over the last axis, left to right and right to left."""
    x = inputs[0]
    return [_seq_sum([x[..., j] for j in order(x.shape[-1])]) for order in (range, _reversed)]


def _ema_scan(inputs: tuple[Any, ...]) -> list[Any]:
    """``decay * m + (1 - decay) * x`` with separate roundings and fused, and the lerp
    ``m + (1 - decay)(x - m)``."""
    xs, init, decay = inputs
    d = F32(decay)
    out = []
    for form in ("separate", "fused", "lerp"):
        m, history = init.astype(F32), []
        for x in xs:
            if form == "lerp":
                m = (m + ((F32(1) - d) * (x - m).astype(F32)).astype(F32)).astype(F32)
            else:
                m = _two_ways(d, m, F32(1) - d, x)[0 if form == "separate" else 1]
            history.append(m)
        out.append(np.stack(history))
    return out


def _sgd_momentum(inputs: tuple[Any, ...]) -> list[Any]:
    """The velocity with separate roundings and fused, then ``p - lr * v``."""
    params, grads, velocity, lr, momentum = inputs
    out = []
    for way in (0, 1):
        v2 = _two_ways(F32(momentum), velocity["w"], F32(1), grads["w"])[way]
        p2 = (params["w"] - (F32(lr) * v2).astype(F32)).astype(F32)
        out.append(({"w": p2}, {"w": v2}))
    return out


def _adamw(inputs: tuple[Any, ...]) -> list[Any]:
    """The first moment with separate roundings and fused; the rest as the reference (step 0)."""
    params, grads, mu, nu, _step, lr, wd = inputs
    p, g, m0, v0 = params["w"], grads["w"], mu["w"], nu["w"]
    out = []
    for way in (0, 1):
        m = _two_ways(F32(0.9), m0, F32(1 - 0.9), g)[way]
        v = (F32(0.999) * v0 + F32(1 - 0.999) * g * g).astype(F32)
        c1, c2 = F32(1 - 0.9), F32(1 - 0.999)
        update = ((m / c1) / (np.sqrt(v / c2) + F32(1e-8)) + F32(wd) * p).astype(F32)
        out.append(({"w": (p - F32(lr) * update).astype(F32)}, {"w": m}, {"w": v}))
    return out


def _per_example_clipping(inputs: tuple[Any, ...]) -> list[Any]:
    """One example, unclipped: its residual as separate products and fused."""
    w, x, y, _max_norm = inputs
    out = []
    for way in (0, 1):
        r = (_two_ways(x[0, 0], w[0], x[0, 1], w[1])[way] - y[0]).astype(F32)
        out.append((r * x[0]).astype(F32))
    return out


def _grad_accumulation_scan(inputs: tuple[Any, ...]) -> list[Any]:
    """One microbatch of one example: the prediction as separate products and fused."""
    params, xs, target = inputs
    w, x = params["w"], xs["w"][0, 0]
    out = []
    for way in (0, 1):
        r = (_two_ways(x[0], w[0], x[1], w[1])[way] - F32(target)).astype(F32)
        out.append((np.asarray(F32(0.5) * r * r, F32), {"w": (r * x).astype(F32)}))
    return out


def _batched_attention(inputs: tuple[Any, ...]) -> list[Any]:
    """Uniform weights over three keys (zero queries), the values added in both orders."""
    _q, _k, v, _mask = inputs
    p = F32(1) / F32(3)
    terms = [(p * v[0, j]).astype(F32) for j in range(v.shape[1])]
    return [_seq_sum(terms)[None, None, :], _seq_sum(terms[::-1])[None, None, :]]


def _rotary_embedding(inputs: tuple[Any, ...]) -> list[Any]:
    """``x1 cos - x2 sin`` (and ``x1 sin + x2 cos``) with separate roundings and fused."""
    x, positions = inputs
    angle = F32(positions[0])
    cos, sin = F32(np.cos(angle)), F32(np.sin(angle))
    x1, x2 = x[0, 0, 0], x[0, 0, 1]
    out = []
    for way in (0, 1):
        first = _two_ways(x1, cos, -x2, sin)[way]
        second = _two_ways(x1, sin, x2, cos)[way]
        out.append(np.array([[[first, second]]], F32))
    return out


def _hessian_vector_product(inputs: tuple[Any, ...]) -> list[Any]:
    """coupled_cosine at x = 0: ``H v = -v + sum(v)``, the sum left to right, right to left and from the
    smallest magnitude up."""
    _f, _x, v = inputs
    out = []
    for order in (range, _reversed, lambda n: list(np.argsort(np.abs(v["w"]), kind="stable"))):
        total = _seq_sum([v["w"][j] for j in order(v["w"].shape[0])])
        out.append({"w": (total - v["w"]).astype(F32)})
    return out


def _spectral_norm(inputs: tuple[Any, ...]) -> list[Any]:
    """One power iteration, every two-term dot product with separate roundings and fused."""
    w, u0, _iters = inputs

    def matvec(a: np.ndarray, x: np.ndarray, way: int) -> np.ndarray:
        return np.array([_two_ways(row[0], x[0], row[1], x[1])[way] for row in a], F32)

    def normalize(x: np.ndarray) -> np.ndarray:
        scaled: np.ndarray = x / np.sqrt(np.sum(x * x, dtype=F32))
        return scaled.astype(F32)

    out = []
    for way in (0, 1):
        v = normalize(matvec(w.T, u0, way))
        wv = matvec(w, v, way)
        u = normalize(wv)
        sigma = _two_ways(u[0], wv[0], u[1], wv[1])[way]
        out.append((np.asarray(sigma, F32), u, v))
    return out


REORDERED: dict[str, tuple[dict[str, Any], Callable[[tuple[Any, ...]], list[Any]]]] = {
    "static-args-jit": (
        {"x": [[4096.0, 0.0001, -4096.0, 0.0001]], "axis": 1, "mode": "sum", "keepdims": False},
        _static_args_jit,
    ),
    "ema-scan": ({"xs": [[-9000.0, 405.0]], "init": [1000.0, -45.0], "decay": 0.9}, _ema_scan),
    "sgd-momentum": (
        {
            "params": {"w": [1.0, 2.0]},
            "grads": {"w": [-900.0, 1.0]},
            "velocity": {"w": [1000.0, 1.0]},
            "learning_rate": 0.1,
            "momentum": 0.9,
        },
        _sgd_momentum,
    ),
    "adamw": (
        {
            "params": {"w": [1.0, 2.0]},
            "grads": {"w": [-863.7322387695312, 1.0]},
            "mu": {"w": [95.97024536132812, 1.0]},
            "nu": {"w": [1.0, 1.0]},
            "step": 0,
            "learning_rate": 0.001,
            "weight_decay": 0.0,
        },
        _adamw,
    ),
    "per-example-clipping": (
        {"w": [1000.0, -900.0], "x": [[0.9, 1.0]], "y": [0.0], "max_norm": 10.0},
        _per_example_clipping,
    ),
    "grad-accumulation-scan": (
        {"params": {"w": [1000.0, -900.0]}, "xs": {"w": [[[0.9, 1.0]]]}, "target": 0.0},
        _grad_accumulation_scan,
    ),
    "batched-attention": (
        {
            "q": [[[0.0, 0.0]]],
            "k": [[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]],
            "v": [[[100.0], [-99.99], [0.001]]],
            "mask": [[True, True, True]],
        },
        _batched_attention,
    ),
    "spectral-norm": (
        # The second row nearly orthogonal to the first, far larger: u's second entry cancels.
        {"w": [[1.2, 1.6], [853.7937622070312, -640.3453979492188]], "u0": [1.0, 0.0], "num_iters": 1},
        _spectral_norm,
    ),
    "rotary-embedding": ({"x": [[[1557.4077, 1000.0]]], "positions": [1]}, _rotary_embedding),
    "hessian-vector-product": (
        {
            "f": "coupled_cosine",
            "x": {"w": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]},
            "v": {"w": [9.99, 4.5e-7, 4.5e-7, 4.5e-7, 4.5e-7, -9.99]},
        },
        _hessian_vector_product,
    ),
}


#: Problems whose own tolerance already covers every order on valid inputs, magnitudes or not:
#: batched-attention's widened float32 rtol (1e-4, with |v| <= 100), rotary-embedding's floor of 32768
#: ulps of the result's largest magnitude (a rotation keeps the norm: its two outputs cannot both cancel).
PLAIN_COVERS = {"batched-attention", "rotary-embedding"}


@pytest.mark.parametrize("slug", sorted(REORDERED))
def test_every_order_passes_a_cancelling_case(slug: str) -> None:
    """Each candidate order (separate or fused roundings, sums left to right, right to left or from the
    smallest term up) is accepted far inside the bound; the plain bound refuses at least one, or is close
    to it, except where the problem's own tolerance is already wide enough (``PLAIN_COVERS``)."""
    problem = load_problem(ROOT / "problems" / slug)
    args, orders = REORDERED[slug]
    case = _case(problem, args)
    assert problem.violations(case) == []
    (expected,) = expected_outputs(problem, [case])
    scales = expected_magnitudes(problem, [case])
    assert scales is not None, f"{slug} declares no magnitude function"
    checker = bind(problem.spec.compare, problem.spec.output)
    plain_worst = 0.0
    for got in orders(case.inputs):
        if problem.spec.output.kind == "tuple":
            got = tuple(got)
        graded = checker(expected, got, scale=scales[0])
        assert graded.ok and graded.max_error_ratio < 0.1, f"{slug}: {graded.message}"
        plain = checker(expected, got)
        plain_worst = max(plain_worst, plain.max_error_ratio)
    if slug in PLAIN_COVERS:
        assert plain_worst < 1.0, f"{slug}: the problem's own tolerance no longer covers the orders"
    else:
        assert plain_worst > 0.5, f"{slug}: the case does not cancel enough to show anything ({plain_worst})"
