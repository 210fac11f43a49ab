"""Tests for judge.core.compare: a table of (expected, got, options) -> verdict and message, then
properties."""

from __future__ import annotations

import copy
import inspect
import math
import re
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from judge.core.compare import CompareResult, accepts, bind, compare, format_path
from judge.core.hidden import hidden_message
from judge.core.spec import CompareSpec, OutputSpec, Tolerance
from judge.core.verdicts import WrongAnswerReason as R
from sandbox.shared.tree import NonStrKey, OtherNode

TOL = CompareSpec().tolerance
ABS_1E6 = {**TOL, "float32": Tolerance(rtol=0.0, atol=1e-6)}
NAN, INF = float("nan"), float("inf")


def f32(*values: Any) -> np.ndarray:
    return np.asarray(values[0] if len(values) == 1 else values, dtype=np.float32)


def bf16(*values: Any) -> np.ndarray:
    return f32(*values).astype(ml_dtypes.bfloat16)


def i32(*values: Any) -> np.ndarray:
    return np.asarray(values[0] if len(values) == 1 else values, dtype=np.int32)


W = f32([[0.5, 0.1], [0.1, 0.3]])
W_BAD = f32([[0.5, 0.15], [0.2, 0.35]])

# (id, expected, got, options, ok, reason, path, message substring)
CASES: list[tuple[str, Any, Any, dict[str, Any], bool, R | None, str | None, str]] = [
    # accepted
    (
        "identical",
        {"a": W, "b": (f32(1), None)},
        {"a": W.copy(), "b": (f32(1), None)},
        {},
        True,
        None,
        None,
        "",
    ),
    ("none-vs-none", None, None, {}, True, None, None, "all 0 elements"),
    ("empty-leaf", {"e": f32(np.zeros((0,)))}, {"e": f32(np.zeros((0,)))}, {}, True, None, None, ""),
    ("nan-vs-nan", f32(1, NAN), f32(1, NAN), {}, True, None, None, ""),
    ("inf-vs-inf", f32(INF, -INF), f32(INF, -INF), {}, True, None, None, ""),
    ("int-equal", i32(1, 2), i32(1, 2), {}, True, None, None, ""),
    ("bool-equal", np.array([True]), np.array([True]), {}, True, None, None, ""),
    ("tuple-as-list", (f32(1), f32(2)), [f32(1), f32(2)], {"tuple_as_list": True}, True, None, None, ""),
    ("list-as-tuple", [f32(1)], (f32(1),), {"tuple_as_list": True}, True, None, None, ""),
    ("bf16-uses-bf16-tol", bf16(1.0), bf16(1.0078125), {}, True, None, None, ""),
    ("other-node", OtherNode("P", (f32(1),)), OtherNode("P", (f32(1),)), {}, True, None, None, ""),
    (
        "nonstr-key",
        {NonStrKey("1", "int"): f32(1)},
        {NonStrKey("1", "int"): f32(1)},
        {},
        True,
        None,
        None,
        "",
    ),
    # structure
    (
        "tuple-vs-list",
        (f32(1), f32(2)),
        [f32(1), f32(2)],
        {},
        False,
        R.STRUCTURE,
        "output",
        "output: expected a tuple of 2, got a list of 2",
    ),
    (
        "list-vs-tuple",
        [f32(1)],
        (f32(1),),
        {},
        False,
        R.STRUCTURE,
        "output",
        "expected a list of 1, got a tuple of 1",
    ),
    (
        "tuple-as-list-length",
        (f32(1), f32(2)),
        [f32(1)] * 3,
        {"tuple_as_list": True},
        False,
        R.STRUCTURE,
        "output",
        "output: expected a tuple of 2, got a list of 3",
    ),
    (
        "list-length",
        {"xs": [f32(1)] * 3},
        {"xs": [f32(1)] * 2},
        {},
        False,
        R.STRUCTURE,
        "xs",
        "xs: expected a list of 3, got a list of 2",
    ),
    ("empty-list", [f32(1)], [], {}, False, R.STRUCTURE, "output", "expected a list of 1, got an empty list"),
    (
        "missing-key",
        {"clipped": {"a": f32(1), "b": f32(1)}},
        {"clipped": {"a": f32(1)}},
        {},
        False,
        R.STRUCTURE,
        "clipped",
        'clipped: missing key "b"',
    ),
    (
        "extra-key",
        {"clipped": {"w": f32(1)}},
        {"clipped": {"w": f32(1), "bias": f32(0)}},
        {},
        False,
        R.STRUCTURE,
        "clipped",
        'clipped: unexpected key "bias"',
    ),
    (
        "missing-and-extra",
        {"a": f32(1), "c": f32(1)},
        {"b": f32(1), "d": f32(1)},
        {},
        False,
        R.STRUCTURE,
        "output",
        'output: missing keys "a", "c"; unexpected keys "b", "d"',
    ),
    (
        "many-missing-capped",
        {k: f32(1) for k in "gfedcba"},
        {},
        {},
        False,
        R.STRUCTURE,
        "output",
        'missing keys "a", "b", "c", "d", "e" and 2 more',
    ),
    (
        "dict-vs-array",
        {"p": {"a": f32(1)}},
        {"p": f32(1, 2)},
        {},
        False,
        R.STRUCTURE,
        "p",
        "p: expected a dict, got an array of shape (2,)",
    ),
    (
        "array-vs-dict",
        {"p": f32(1)},
        {"p": {"a": f32(1)}},
        {},
        False,
        R.STRUCTURE,
        "p",
        'p: expected an array, got a dict with keys ["a"]',
    ),
    (
        "array-vs-none",
        {"p": f32(1)},
        {"p": None},
        {},
        False,
        R.STRUCTURE,
        "p",
        "p: expected an array, got None",
    ),
    (
        "none-vs-array",
        {"p": None},
        {"p": f32(1)},
        {},
        False,
        R.STRUCTURE,
        "p",
        "p: expected None, got an array of shape ()",
    ),
    ("dict-vs-none", {"p": {}}, {"p": None}, {}, False, R.STRUCTURE, "p", "p: expected a dict, got None"),
    (
        "tuple-vs-node",
        (f32(1), f32(2)),
        OtherNode("MyTuple", (f32(1), f32(2))),
        {},
        False,
        R.STRUCTURE,
        "output",
        "expected a tuple of 2, got a MyTuple node",
    ),
    (
        "node-vs-node",
        OtherNode("A", ()),
        OtherNode("Other", ()),
        {},
        False,
        R.STRUCTURE,
        "output",
        "expected an A node, got an Other node",
    ),
    (
        "node-children",
        OtherNode("P", (f32(1),)),
        OtherNode("P", (f32(1), f32(2))),
        {},
        False,
        R.STRUCTURE,
        "output",
        "expected a P node with 1 children, got 2",
    ),
    (
        "nonstr-vs-str-key",
        {NonStrKey("1", "int"): f32(1)},
        {"1": f32(1)},
        {},
        False,
        R.STRUCTURE,
        "output",
        'missing key 1; unexpected key "1"',
    ),
    (
        "dict-vs-python-float",
        {"a": f32(1)},
        1.5,
        {},
        False,
        R.STRUCTURE,
        "output",
        "expected a dict, got a value of type float",
    ),
    ("long-key-clipped", {}, {"k" * 1000: f32(1)}, {}, False, R.STRUCTURE, "output", 'key "kkkkkkkkk'),
    # leaf type, shape, dtype
    (
        "numpy-scalar-leaf",
        {"a": f32(1)},
        {"a": np.float32(1)},
        {},
        False,
        R.TYPE,
        "a",
        "a: expected an array, got a numpy float32 scalar",
    ),
    (
        "string-leaf",
        {"a": f32(1)},
        {"a": "1.0"},
        {},
        False,
        R.TYPE,
        "a",
        "expected an array, got a value of type str",
    ),
    (
        "shape",
        {"clipped": {"w": f32(np.zeros((3, 2)))}},
        {"clipped": {"w": f32(np.zeros((2, 3)))}},
        {},
        False,
        R.SHAPE,
        'clipped["w"]',
        'clipped["w"]: shape (2, 3), expected (3, 2)',
    ),
    (
        "dtype",
        {"clipped": {"w": bf16(1, 2)}},
        {"clipped": {"w": f32(1, 2)}},
        {},
        False,
        R.DTYPE,
        'clipped["w"]',
        'clipped["w"]: dtype float32, expected bfloat16',
    ),
    (
        "dtype-int",
        {"n": i32(1)},
        {"n": np.asarray(1, np.int64)},
        {},
        False,
        R.DTYPE,
        "n",
        "n: dtype int64, expected int32",
    ),
    (
        "structure-before-shape",
        {"a": f32(1, 2), "b": {"x": f32(1)}},
        {"a": f32(1), "b": {}},
        {},
        False,
        R.STRUCTURE,
        "b",
        'b: missing key "x"',
    ),
    (
        "shape-before-value",
        {"a": f32(1, 2), "b": f32(1)},
        {"a": f32(9, 9), "b": f32(1, 2)},
        {},
        False,
        R.SHAPE,
        "b",
        "b: shape (2,), expected ()",
    ),
    # values
    (
        "value",
        {"clipped": {"dense": {"w": W}}},
        {"clipped": {"dense": {"w": W_BAD}}},
        {"tolerance": ABS_1E6},
        False,
        R.VALUE,
        'clipped["dense"]["w"]',
        'clipped["dense"]["w"][1, 0]: got 0.2, expected 0.1 (abs err 0.1 > tol 1e-06); '
        "3 of 4 elements differ",
    ),
    (
        "value-0d",
        {"global_norm": f32(1.0)},
        {"global_norm": f32(2.0)},
        {},
        False,
        R.VALUE,
        "global_norm",
        "global_norm: got 2, expected 1 (abs err 1 > tol 1.1e-05); 1 of 1 elements differ",
    ),
    (
        "value-root-names",
        (f32(1), {"w": f32(1, 2)}),
        (f32(1), {"w": f32(1, 3)}),
        {"root_names": ("new_params", "new_velocity")},
        False,
        R.VALUE,
        'new_velocity["w"]',
        'new_velocity["w"][1]: got 3, expected 2',
    ),
    (
        "value-no-root-names",
        [f32(1), f32(5)],
        [f32(1), f32(6)],
        {},
        False,
        R.VALUE,
        "output[1]",
        "output[1]: got 6, expected 5",
    ),
    (
        "value-nonstr-key",
        {NonStrKey("1", "int"): f32(1)},
        {NonStrKey("1", "int"): f32(2)},
        {},
        False,
        R.VALUE,
        "output[1]",
        "output[1]: got 2",
    ),
    (
        "value-in-node",
        OtherNode("P", (f32(1), f32(1))),
        OtherNode("P", (f32(1), f32(3))),
        {},
        False,
        R.VALUE,
        "output[1]",
        "output[1]: got 3",
    ),
    (
        "nan-vs-number",
        f32(1, 2),
        f32(1, NAN),
        {},
        False,
        R.VALUE,
        "output",
        "output[1]: got nan, expected 2 (NaN only matches NaN); 1 of 2 elements differ",
    ),
    ("number-vs-nan", f32(NAN), f32(0), {}, False, R.VALUE, "output", "output: got 0, expected nan"),
    ("inf-vs-finite", f32(1), f32(INF), {}, False, R.VALUE, "output", "got inf, expected 1 (an infinity"),
    ("inf-vs-neg-inf", f32(INF), f32(-INF), {}, False, R.VALUE, "output", "got -inf, expected inf"),
    ("finite-vs-inf", f32(INF), f32(3e38), {}, False, R.VALUE, "output", "got 3e+38, expected inf"),
    (
        "bf16-outside-bf16-tol",
        bf16(1.0),
        bf16(1.0625),
        {},
        False,
        R.VALUE,
        "output",
        "got 1.0625, expected 1 (abs err 0.0625 = 8 ulp > tol 3 ulp, 2.67x the tolerance)",
    ),
    ("f32-tol-is-tighter", f32(1.0), f32(1.0078125), {}, False, R.VALUE, "output", "1 of 1 elements differ"),
    (
        "int-exact",
        {"idx": i32(1, 2, 3)},
        {"idx": i32(1, 3, 4)},
        {},
        False,
        R.VALUE,
        "idx",
        "idx[1]: got 3, expected 2; 2 of 3 elements differ",
    ),
    (
        "bool-exact",
        np.array([True, False]),
        np.array([True, True]),
        {},
        False,
        R.VALUE,
        "output",
        "output[1]: got True, expected False",
    ),
    (
        "first-failing-leaf",
        {"a": f32(1), "b": f32(1)},
        {"a": f32(1.1), "b": f32(100)},
        {},
        False,
        R.VALUE,
        "a",
        "a: got 1.1",
    ),
]


@pytest.mark.parametrize(
    ("expected", "got", "options", "ok", "reason", "path", "message"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_table(
    expected: Any,
    got: Any,
    options: dict[str, Any],
    ok: bool,
    reason: R | None,
    path: str | None,
    message: str,
) -> None:
    result = compare(expected, got, **{"tolerance": TOL, **options})
    assert (result.ok, result.reason, result.path) == (ok, reason, path), result.message
    verdict_only = {k: v for k, v in {"tolerance": TOL, **options}.items() if k != "root_names"}
    if "reveal" not in verdict_only:
        assert accepts(expected, got, **verdict_only) is ok
    assert message in result.message
    assert result.ok == (result.max_error_ratio <= 1.0)
    if reason in (R.STRUCTURE, R.TYPE, R.SHAPE, R.DTYPE):
        assert result.max_error_ratio == math.inf
        assert result.worst is None


def test_identical_ratio_zero() -> None:
    tree = {"a": W, "b": [bf16(1, 2), i32(3)]}
    result = compare(tree, copy.deepcopy(tree), tolerance=TOL)
    assert result.ok and result.max_error_ratio == 0.0
    assert result.message == "all 7 elements match (worst error is 0x the tolerance)"


def test_within_tolerance_reports_margin() -> None:
    result = compare({"w": f32(1.0, 2.0)}, {"w": f32(1.0, 2.0 + 1e-5)}, tolerance=TOL)
    assert result.ok and 0.0 < result.max_error_ratio < 1.0
    assert result.worst is not None and result.worst.path == "w" and result.worst.index == (1,)


def test_max_ratio_covers_all_leaves() -> None:
    result = compare({"a": f32(1), "b": f32(1)}, {"a": f32(1.1), "b": f32(100)}, tolerance=TOL)
    assert result.path == "a"
    assert result.worst is not None and result.worst.path == "b"
    assert result.max_error_ratio == pytest.approx(99 / 1.1e-5)


def test_nan_mismatch_ratio_is_inf() -> None:
    assert compare(f32(1, 2), f32(1, NAN), tolerance=TOL).max_error_ratio == math.inf


HIDDEN = [
    ({"global_norm": f32(0.123456)}, {"global_norm": f32(0.654321)}, "global_norm", "more than 1000x"),
    ({"w": W}, {"w": W_BAD}, "w", "the tolerance"),
    ({"w": f32(0.123456)}, {"w": f32(NAN)}, "w", "NaN, an infinity or an exact mismatch"),
    ({"w": f32(NAN)}, {"w": f32(0.654321)}, "w", "NaN, an infinity or an exact mismatch"),
    ({"w": f32(0.123456)}, {"w": f32(INF)}, "w", "NaN, an infinity or an exact mismatch"),
    ({"w": f32(-INF)}, {"w": f32(0.654321)}, "w", "NaN, an infinity or an exact mismatch"),
    ({"n": i32(123456, 7)}, {"n": i32(654321, 7)}, "n", "NaN, an infinity or an exact mismatch"),
]


@pytest.mark.parametrize(("expected", "got", "path", "bucket"), HIDDEN)
def test_hidden_wording_reveals_no_values(expected: Any, got: Any, path: str, bucket: str) -> None:
    """A hidden case is worded by judge.core.hidden alone: the leaf and a coarse bucket, no value, count,
    index or exact ratio (compare itself has no hidden wording left to call by mistake)."""
    result = compare(expected, got, tolerance=TOL)
    assert not result.ok and result.reason is R.VALUE
    message = hidden_message(result)
    assert message.startswith(f"{path}: wrong values, the worst error is ") and bucket in message
    for number in ("0.1", "0.2", "0.3", "0.5", "123456", "654321", "0.65", "nan", "inf, expected", "of "):
        assert number not in message
    assert not re.search(r"\[\d", message), "no element index"


def test_compare_has_no_hidden_wording_of_its_own() -> None:
    assert "reveal" not in inspect.signature(compare).parameters
    with pytest.raises(TypeError):
        compare(f32(1.0), f32(2.0), tolerance=TOL, reveal=False)  # type: ignore[call-arg]


def test_hidden_wording_buckets_the_ratio() -> None:
    message = hidden_message(compare(f32(1.0), f32(1.0 + 37 * 1.1e-5), tolerance=TOL))
    assert message == "output: wrong values, the worst error is more than 10x the tolerance"


@pytest.mark.parametrize(
    ("entries", "root_names", "text"),
    [
        ((), (), "output"),
        ((0,), (), "output[0]"),
        ((0, "w"), ("new_params", "new_velocity"), 'new_params["w"]'),
        ((2, "w"), ("a", "b"), 'output[2]["w"]'),
        (("clipped", "dense", "w"), (), 'clipped["dense"]["w"]'),
        (("global_norm",), ("a",), "global_norm"),
        (("not an id", 1), (), 'output["not an id"][1]'),
        ((NonStrKey("3", "int"), "x"), (), 'output[3]["x"]'),
        (("a", 'q"uote'), (), 'a["q\\"uote"]'),
    ],
)
def test_format_path(entries: tuple[Any, ...], root_names: tuple[str, ...], text: str) -> None:
    assert format_path(entries, root_names) == text


def test_bind_uses_output_names_and_spec() -> None:
    spec = CompareSpec(tuple_as_list=True, tolerance={"float32": Tolerance(rtol=0, atol=0.5)})
    check = bind(spec, OutputSpec(kind="tuple", names=["new_params", "new_velocity"]))
    assert check((f32(1), {"w": f32(1)}), [f32(1.4), {"w": f32(1)}]).ok
    result = check((f32(1), {"w": f32(1)}), [f32(1), {"w": f32(2)}])
    assert (result.reason, result.path) == (R.VALUE, 'new_velocity["w"]')
    assert bind(CompareSpec(), OutputSpec(kind="dict"))({"x": f32(1)}, {"x": f32(1)}).ok


@pytest.mark.parametrize(
    ("expected", "error"),
    [
        ({"a": 1.0}, TypeError),
        ({"a": np.float32(1)}, TypeError),
        (np.array([1 + 2j]), TypeError),
        (np.array(["x"]), TypeError),
        (np.zeros(2, ml_dtypes.float8_e4m3fn), KeyError),
    ],
)
def test_bad_expected_tree_raises(expected: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        compare(expected, expected, tolerance=TOL)


# --- properties ---------------------------------------------------------------------------------------

_FLOATS = st.floats(-100, 100, width=32, allow_subnormal=False)
_SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
_F32 = hnp.arrays(np.float32, _SHAPES, elements=_FLOATS)
_LEAVES = st.one_of(
    _F32,
    _F32.map(lambda a: a.astype(ml_dtypes.bfloat16)),
    hnp.arrays(np.int32, _SHAPES, elements=st.integers(-50, 50)),
    st.none(),
)
_KEYS = st.one_of(st.text(max_size=3), st.integers(0, 9).map(lambda i: NonStrKey(str(i), "int")))
_TREES = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(_KEYS, children, max_size=3),
        st.lists(children, max_size=2).map(lambda c: OtherNode("Node", tuple(c))),
    ),
    max_leaves=8,
)


def _float_leaves(tree: Any, at: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], np.ndarray]]:
    if isinstance(tree, np.ndarray):
        return [(at, tree)] if tree.dtype != np.int32 and tree.size else []
    children: Any = {}
    if isinstance(tree, dict):
        children = tree
    elif isinstance(tree, list | tuple):
        children = dict(enumerate(tree))
    elif isinstance(tree, OtherNode):
        children = dict(enumerate(tree.children))
    return [leaf for key, child in children.items() for leaf in _float_leaves(child, (*at, key))]


def _leaf_at(tree: Any, at: tuple[Any, ...]) -> np.ndarray:
    for key in at:
        tree = tree.children[key] if isinstance(tree, OtherNode) else tree[key]
    assert isinstance(tree, np.ndarray)
    return tree


def _bound(tree: Any, leaf: np.ndarray, index: tuple[Any, ...]) -> float:
    """An upper bound of the element's tolerance, from the Tolerance docstring (independent of compare):
    the floor's magnitude is taken over every leaf of the dtype in the whole tree."""
    tol = TOL[leaf.dtype.name]
    info: Any = ml_dtypes.finfo(leaf.dtype)  # type: ignore[no-untyped-call]

    def spacing(x: float) -> float:
        return float(2.0 ** math.floor(math.log2(max(abs(x), float(info.smallest_normal))))) * float(info.eps)

    value = float(leaf[index])
    largest = max(
        float(np.max(np.abs(other.astype(np.float64))))
        for _, other in _float_leaves(tree)
        if other.dtype == leaf.dtype
    )
    return max(tol.atol + tol.rtol * abs(value), tol.ulps * spacing(value), tol.floor_ulps * spacing(largest))


@settings(max_examples=60, deadline=None)
@given(_TREES)
def test_tree_equals_its_copy(tree: Any) -> None:
    result = compare(tree, copy.deepcopy(tree), tolerance=TOL, root_names=("first",))
    assert result.ok and result.max_error_ratio == 0.0, result.message


@settings(max_examples=60, deadline=None)
@given(_TREES, st.data())
def test_perturbed_element_fails_at_its_path(tree: Any, data: st.DataObject) -> None:
    leaves = _float_leaves(tree)
    assume(leaves)
    at, leaf = data.draw(st.sampled_from(leaves))
    flat = data.draw(st.integers(0, leaf.size - 1))
    got = copy.deepcopy(tree)
    target = _leaf_at(got, at)
    index = np.unravel_index(flat, leaf.shape)
    value = float(leaf[index])
    target[index] = value + 10 * _bound(tree, leaf, index)
    result: CompareResult = compare(tree, got, tolerance=TOL, root_names=("first",))
    assert not result.ok and result.reason is R.VALUE
    assert not accepts(tree, got, tolerance=TOL)
    target[index] = value + 0.5 * _bound(tree, leaf, index) if math.isfinite(value) else value
    assert accepts(tree, got, tolerance=TOL) is compare(tree, got, tolerance=TOL).ok
    assert result.path == format_path(at, ("first",))
    assert result.max_error_ratio > 5
    suffix = str([int(i) for i in index]) if leaf.ndim else ""
    assert result.message.startswith(f"{result.path}{suffix}: got ")


# --- bfloat16: ulps of the element plus a floor scaled to the leaf's magnitude ------------------------


def _bf16_values(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=n).astype(ml_dtypes.bfloat16)


def test_float32_semantics_are_unchanged() -> None:
    tol = TOL["float32"]
    assert (tol.rtol, tol.atol, tol.ulps, tol.floor_ulps) == (1e-5, 1e-6, 0.0, 0.0)
    assert compare(f32(100.0), f32(100.0 + 1e-3 + 0.9e-6), tolerance=TOL).ok
    assert not compare(f32(100.0), f32(100.0 + 1e-3 + 1.1e-6 + 1e-5), tolerance=TOL).ok
    assert tol.describe() == "rtol 1e-05 + atol 1e-06"
    assert TOL["bfloat16"].describe() == (
        "the larger of 3 ulp of the element and 1.5 ulp of the largest magnitude in its result"
    )


@pytest.mark.parametrize("error", [0.02, 0.03, -0.02])
def test_a_systematic_two_percent_error_on_bf16_fails(error: float) -> None:
    x = np.random.default_rng(0).normal(size=256)
    exp = (x * 0.37).astype(np.float32).astype(ml_dtypes.bfloat16)
    got = (exp.astype(np.float32) * np.float32(1 + error)).astype(ml_dtypes.bfloat16)
    result = compare({"clipped": {"w": exp}}, {"clipped": {"w": got}}, tolerance=TOL)
    assert not result.ok and result.reason is R.VALUE and result.path == 'clipped["w"]'
    assert result.max_error_ratio >= 1.5, result.message
    assert re.search(r"= \d+ ulp > tol 3 ulp, [\d.]+x the tolerance\)", result.message), result.message
    hidden = hidden_message(compare({"clipped": {"w": exp}}, {"clipped": {"w": got}}, tolerance=TOL))
    assert hidden.startswith('clipped["w"]: wrong values, the worst error is ')


def test_the_old_bf16_tolerance_accepted_three_percent_off() -> None:
    # Values near 0.1 (clipped gradients): 3% is 0.003, under the old absolute tolerance of 1e-2.
    exp = (np.linspace(0.06, 0.12, 64)).astype(np.float32).astype(ml_dtypes.bfloat16)
    got = (exp.astype(np.float32) * np.float32(1.03)).astype(ml_dtypes.bfloat16)
    old = {**TOL, "bfloat16": Tolerance(rtol=1.6e-2, atol=1e-2)}
    assert compare(exp, got, tolerance=old).ok
    assert not compare(exp, got, tolerance=TOL).ok


def test_honest_bf16_roundings_pass_well_inside() -> None:
    x = _bf16_values(256, seed=1)
    scale = np.float32(0.4142)
    exp = (x.astype(np.float32) * scale).astype(ml_dtypes.bfloat16)  # scale in float32, cast once
    variants = {
        "scale in bf16": x * np.asarray(scale).astype(ml_dtypes.bfloat16),
        "divide then multiply in bf16": (x / np.asarray(1 / scale).astype(ml_dtypes.bfloat16)).astype(
            ml_dtypes.bfloat16
        ),
    }
    for name, got in variants.items():
        result = compare(exp, got.astype(ml_dtypes.bfloat16), tolerance=TOL)
        assert result.ok and result.max_error_ratio <= TOL["bfloat16"].well_inside, (name, result.message)


def test_a_cancellation_near_zero_is_covered_by_the_results_magnitude() -> None:
    exp = bf16(1.5, -0.75, 0.001953125)  # the last element is p - lr * v after cancelling
    got = bf16(1.5, -0.75, 0.001953125 + 0.0078125)  # off by one ulp of the result's largest magnitude
    assert compare(exp, got, tolerance=TOL).ok
    assert not compare(exp, bf16(1.5, -0.75, 0.001953125 + 0.03125), tolerance=TOL).ok


def test_the_floor_takes_the_magnitude_of_the_whole_result_not_of_other_results() -> None:
    # new_params["b"] is a 0-d leaf that cancelled to nearly 0; its result's other leaf gives the scale.
    exp = ({"w": bf16(1.5, -0.75), "b": bf16(0.001953125)}, {"w": bf16(0.01), "b": bf16(0.01)})
    near = ({"w": bf16(1.5, -0.75), "b": bf16(0.001953125 + 0.0078125)}, exp[1])
    assert compare(exp, near, tolerance=TOL).ok
    # The second result is small: its floor is its own, not the first result's.
    off = (exp[0], {"w": bf16(0.01), "b": bf16(0.01 + 0.0078125)})
    result = compare(exp, off, tolerance=TOL, root_names=("new_params", "new_velocity"))
    assert not result.ok and result.path == 'new_velocity["b"]'


def test_zero_leaf_in_bf16_must_stay_zero() -> None:
    assert compare(bf16(0.0, 0.0), bf16(0.0, 0.0), tolerance=TOL).ok
    assert not compare(bf16(0.0, 0.0), bf16(0.0, 0.001), tolerance=TOL).ok


# ------------------------------------------------------------------------------------------ identical leaves

_SPECIAL = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan, 1e-40, 3.4e38, 65504.0, 1e-8]


@settings(max_examples=200, deadline=None)
@given(
    dtype=st.sampled_from(["float16", "bfloat16", "float32", "float64", "int32", "uint8", "bool"]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
    data=st.data(),
    magnitude=st.sampled_from([0.0, 1.0, 1e6, math.inf]),
)
def test_a_leaf_bit_for_bit_the_expected_is_checked_as_element_by_element(
    dtype: str, shape: tuple[int, ...], data: st.DataObject, magnitude: float
) -> None:
    """The shortcut for identical values (the usual right answer) finds exactly what the element-by-element
    check finds: nothing failing, the first element as the worst, its bound and ulp (NaN, infinities,
    signed zeros and subnormals included)."""
    from judge.core.compare import _check_leaf, _check_values, _Pair

    kind = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    values: list[bool] | list[int] | list[float]
    if dtype == "bool":
        values = data.draw(st.lists(st.booleans(), min_size=1, max_size=64))
    elif kind.kind in "iu":
        values = data.draw(st.lists(st.integers(0, 120), min_size=1, max_size=64))
    else:
        values = data.draw(
            st.lists(st.one_of(st.sampled_from(_SPECIAL), st.floats(-1e4, 1e4)), min_size=1, max_size=64)
        )
    size = int(np.prod(shape))
    with np.errstate(over="ignore"):
        exp = np.resize(
            np.asarray(values, dtype=np.float64 if kind.kind == "f" or kind.kind == "V" else None), size
        )
        exp = exp.astype(kind).reshape(shape)
    got = exp.copy()
    tolerance = {
        **TOL,
        "bfloat16": Tolerance(rtol=1.6e-2, atol=1e-2),
        "float16": Tolerance(rtol=1e-3, atol=1e-5),
    }
    shortcut = _check_leaf(_Pair((), exp, got), "out", tolerance, magnitude)
    full = _check_values(exp, got, "out", tolerance, magnitude)
    assert repr(shortcut) == repr(full)


def test_a_magnitude_tree_widens_rtol_to_the_terms_of_each_element() -> None:
    """``scale`` (``[compare] magnitude``): rtol applies to max(|expected|, scale) element by element, so an
    element whose terms of size 1000 cancel to 0.002 allows 1000's rounding, and its neighbour does not."""
    from judge.core.compare import compare as plain_compare
    from judge.core.spec import default_tolerances

    tol = default_tolerances()
    expected = {"y": np.array([0.002, 0.002], np.float32)}
    got = {"y": np.array([0.0020234, 0.0020234], np.float32)}
    scale = {"y": np.array([2000.0, 0.002], np.float32)}
    result = plain_compare(expected, got, tolerance=tol, scale=scale)
    assert not result.ok and result.path == "y" and "1 of 2 elements differ" in result.message
    assert plain_compare(expected, got, tolerance=tol, scale={"y": np.array([2000.0, 2000.0], np.float32)}).ok
    assert not plain_compare(expected, got, tolerance=tol).ok
    # A magnitude of another shape, or for another leaf, is left out: the plain bound.
    assert not plain_compare(expected, got, tolerance=tol, scale={"y": np.ones(3, np.float32) * 1e4}).ok
    assert not plain_compare(expected, got, tolerance=tol, scale={"z": np.ones(2, np.float32) * 1e4}).ok
