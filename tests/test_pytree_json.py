"""Tests for judge.core.pytree_json: Run-panel JSON <-> host pytrees and display rendering."""

from __future__ import annotations

import copy
import json
import math
import pickle
import time
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from judge.core.pytree_json import (
    ConversionError,
    ConversionLimits,
    LeafInfo,
    describe_leaves,
    format_value,
    json_to_number,
    json_to_pytree,
    path_str,
    pytree_to_json,
)
from sandbox.shared.tree import NonStrKey, OtherNode

BF16 = np.dtype(ml_dtypes.bfloat16)


def convert(value: object, dtype: str = "float32", **kwargs: Any) -> Any:
    return json_to_pytree(value, dtype, root="grads", **kwargs)


def error_of(value: object, dtype: str = "float32", **kwargs: Any) -> ConversionError:
    with pytest.raises(ConversionError) as info:
        convert(value, dtype, **kwargs)
    return info.value


# ------------------------------------------------------------------------------------------ seed examples


def test_dict_of_leaves() -> None:
    tree = convert({"w": [3.0, 0.0], "b": 4.0})
    assert set(tree) == {"w", "b"}
    assert tree["w"].shape == (2,) and tree["w"].dtype == np.float32
    assert tree["b"].shape == () and tree["b"].dtype == np.float32
    assert tree["w"].tolist() == [3.0, 0.0] and float(tree["b"]) == 4.0


def test_list_of_objects_is_a_list_node() -> None:
    tree = convert({"layers": [{"w": [0.6, 0.6]}, {"w": [1.0, 2.0]}]})
    assert isinstance(tree["layers"], list) and len(tree["layers"]) == 2
    assert tree["layers"][1]["w"].tolist() == [1.0, 2.0]


def test_bare_list_and_empty_lists_are_single_leaves() -> None:
    leaf = convert([1.0, 2.0])
    assert isinstance(leaf, np.ndarray) and leaf.shape == (2,)
    assert convert([]).shape == (0,)
    assert convert([[], []]).shape == (2, 0)
    assert convert(3).shape == () and convert(3).dtype == np.float32


def test_empty_objects_are_valid_nodes() -> None:
    assert convert({}) == {}
    assert convert([{}]) == [{}]
    assert convert({"a": {}, "b": [{}, {"c": 1.0}]})["b"][1]["c"].shape == ()


def test_bfloat16_and_other_dtypes() -> None:
    tree = convert({"w": [[0.1, 2.0]], "b": 1}, "bfloat16")
    assert tree["w"].dtype == BF16 and tree["b"].dtype == BF16
    assert tree["w"].shape == (1, 2)
    assert float(tree["w"][0, 0]) == float(np.array(0.1).astype(BF16))
    assert convert([1.5], "float16").dtype == np.float16
    assert convert([1.5], "float64").dtype == np.float64
    assert convert([1, -2.0], "int32").tolist() == [1, -2]
    with pytest.raises(ValueError, match="unsupported leaf dtype"):
        convert([1.0], "complex64")


def test_large_matrix_is_one_leaf_and_fast() -> None:
    small = np.arange(64 * 64, dtype=np.float64).reshape(64, 64).tolist()
    leaf = convert({"x": small})["x"]
    assert leaf.shape == (64, 64) and describe_leaves({"x": leaf}) == [LeafInfo('["x"]', "float32", (64, 64))]
    big = json.loads(json.dumps(np.random.default_rng(0).random((256, 256)).tolist()))
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        out = convert(big)
        best = min(best, time.perf_counter() - start)
    assert out.shape == (256, 256)
    assert best < 0.1, f"256x256 conversion took {best * 1e3:.1f} ms"


def test_underflow_is_fine() -> None:
    assert convert([1e-50]).tolist() == [0.0]
    assert convert(1e-50, "bfloat16").shape == ()


# ------------------------------------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("value", "dtype", "message"),
    [
        (
            {"layers": [{"w": [0.6]}, {"w": [0.6]}, 3.0]},
            "float32",
            'grads["layers"][2]: list mixes objects and numbers',
        ),
        (
            {"layers": [3.0, {"w": [0.6]}, {"w": [0.6]}]},
            "float32",
            'grads["layers"][0]: list mixes objects and numbers',
        ),
        ({"layers": [{"w": [0.6]}, [1.0]]}, "float32", 'grads["layers"][1]: list mixes objects and lists'),
        ({"w": [[1.0, 2.0], 3.0, [4.0, 5.0]]}, "float32", 'grads["w"][1]: list mixes numbers and lists'),
        ({"w": [[1.0, 2.0], ["x", 3.0]]}, "float32", 'grads["w"][1][0]: expected a number, got a string'),
        ({"w": [1.0, True]}, "float32", 'grads["w"][1]: expected a number, got a boolean'),
        ({"w": [False]}, "float32", 'grads["w"][0]: expected a number, got a boolean'),
        ({"w": [[1.0], None]}, "float32", 'grads["w"][1]: expected an array, got null'),
        ({"l": [{"a": 1}, "s"]}, "float32", 'grads["l"][1]: expected an object, got a string'),
        (
            {"w": [[{"a": 1.0}], [{"b": 2.0}]]},
            "float32",
            'grads["w"][0][0]: expected a number, got an object',
        ),
        (
            {"w": [[1.0, 2.0], [1.0, 2.0, 3.0]]},
            "float32",
            'grads["w"]: ragged list: item 1 has length 3, item 0 has length 2',
        ),
        (
            {"w": [[[1.0, 2.0]], [[1.0]]]},
            "float32",
            'grads["w"]: ragged list: item 1 has shape (1, 1), item 0 has shape (1, 2)',
        ),
        ({"w": [[], [1.0]]}, "float32", 'grads["w"]: ragged list: item 1 has length 1, item 0 has length 0'),
        ({"a": "text"}, "float32", 'grads["a"]: expected an object, array or number, got a string'),
        ({"a": True}, "float32", 'grads["a"]: expected an object, array or number, got a boolean'),
        ({"a": None}, "float32", 'grads["a"]: expected an object, array or number, got null'),
        (None, "float32", "grads: expected an object, array or number, got null"),
        ({"w": [1e39]}, "float32", 'grads["w"][0]: 1e+39 overflows float32'),
        ({"w": 4e38}, "bfloat16", 'grads["w"]: 4e+38 overflows bfloat16'),
        ({"w": [[1.0], [70000]]}, "float16", 'grads["w"][1][0]: 70000 overflows float16'),
        ({"w": [1.0, 10**400]}, "float32", 'grads["w"][1]: 1e+400 overflows float32'),
        ({"w": -(10**39)}, "float32", 'grads["w"]: -1e+39 overflows float32'),
        ({"w": [[0.0, float("nan")]]}, "float32", 'grads["w"][0][1]: non-finite value nan'),
        ({"w": float("inf")}, "float32", 'grads["w"]: non-finite value inf'),
        ({"w": [float("-inf")]}, "bfloat16", 'grads["w"][0]: non-finite value -inf'),
        ({"w": [1.0, 2.5]}, "int32", 'grads["w"][1]: 2.5 is not an integer'),
        ({"w": [2**31]}, "int32", 'grads["w"][0]: 2147483648 overflows int32'),
        ({'we"ird': "x"}, "float32", 'grads["we\\"ird"]: expected an object, array or number, got a string'),
    ],
)
def test_rejections(value: object, dtype: str, message: str) -> None:
    error = error_of(value, dtype)
    assert str(error) == message
    assert f"{error.path}: {error.reason}" == message


def test_error_is_value_error_and_picklable() -> None:
    error = error_of({"a": None})
    assert isinstance(error, ValueError)
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.path, clone.reason, str(clone)) == (error.path, error.reason, str(error))


def test_limits() -> None:
    nested: dict[str, Any] = {}
    cursor = nested
    for _ in range(40):
        cursor["a"] = {}
        cursor = cursor["a"]
    error = error_of(nested)
    assert error.reason == "nesting deeper than 32 levels" and error.path.count('["a"]') == 33
    assert convert(nested, limits=ConversionLimits(max_depth=64)) is not None

    error = error_of([[[[1.0]]]], limits=ConversionLimits(max_ndim=3))
    assert (error.path, error.reason) == ("grads", "array has more than 3 dimensions")
    assert convert([[[1.0]]], limits=ConversionLimits(max_ndim=3)).shape == (1, 1, 1)

    error = error_of({"a": [[1.0]] * 3}, limits=ConversionLimits(max_depth=2))
    assert error.reason == "nesting deeper than 2 levels"

    error = error_of({f"k{i:03d}": 1.0 for i in range(257)})
    assert (error.path, error.reason) == ('grads["k256"]', "too many leaves (more than 256)")

    error = error_of({"a": [1.0] * 60000, "b": [1.0] * 6000})
    assert (error.path, error.reason) == ('grads["b"]', "too many elements (more than 65536 in total)")
    assert convert({"a": [1.0] * 60000, "b": [1.0] * 5536})["b"].shape == (5536,)

    # A huge ragged or malformed input is stopped by the element budget, not walked in full.
    error = error_of([[1.0], [[1.0] * 100] * 1000], limits=ConversionLimits(max_elements=1000))
    assert error.reason == "too many elements (more than 1000 in total)"

    with pytest.raises(ValueError):
        ConversionLimits(max_depth=-1)
    with pytest.raises(ValueError):
        ConversionLimits(max_depth=10_000)


def test_json_to_number() -> None:
    assert json_to_number(3, root="lr") == 3.0 and isinstance(json_to_number(3, root="lr"), float)
    assert json_to_number(-0.5, root="lr") == -0.5
    cases = [
        ({}, "max_norm: expected a number, got an object"),
        ([1.0], "max_norm: expected a number, got an array"),
        ("1", "max_norm: expected a number, got a string"),
        (True, "max_norm: expected a number, got a boolean"),
        (None, "max_norm: expected a number, got null"),
        (float("nan"), "max_norm: non-finite value nan"),
        (float("-inf"), "max_norm: non-finite value -inf"),
        (10**400, "max_norm: 1e+400 overflows float64"),
    ]
    for value, message in cases:
        with pytest.raises(ConversionError) as info:
            json_to_number(value, root="max_norm")
        assert str(info.value) == message


def test_path_str() -> None:
    assert path_str("grads", ["layers", 2, "w"]) == 'grads["layers"][2]["w"]'
    assert path_str("x", []) == "x"
    assert path_str("", ["é", NonStrKey("(1, 2)", "tuple")]) == '["é"][(1, 2)]'


# --------------------------------------------------------------------------------------------- rendering


def _sample_output() -> dict[str, Any]:
    f32 = np.float32
    return {
        "w": np.array([0.6, 0.0], f32),
        "b": np.array(0.8, f32),
        "pair": (np.array(5.0, f32), np.array([0.40824829, -1.04], f32)),
        "none": None,
        "point": OtherNode("Point", (np.array(3, np.int32), np.array([True, False]))),
        "empty": np.zeros((2, 0), f32),
        "special": np.array([np.nan, np.inf, -np.inf, -1e-9]),
        "one": (np.array([[1.0, 2.0]], BF16),),
    }


def test_format_value() -> None:
    assert format_value({"w": np.array([0.6, 0.0], np.float32), "b": np.array(0.8, np.float32)}) == (
        '{"b": 0.8, "w": [0.6, 0.0]}'
    )
    assert format_value(_sample_output()) == (
        '{"b": 0.8, "empty": [[], []], "none": None, "one": ([[1.0, 2.0]],), '
        '"pair": (5.0, [0.408248, -1.04]), '
        '"point": Point(3, [True, False]), "special": [nan, inf, -inf, 0.0], "w": [0.6, 0.0]}'
    )
    assert format_value(np.array(1.23456789), decimals=2) == "1.23"
    assert format_value(()) == "()" and format_value([]) == "[]"
    assert format_value({NonStrKey("1", "int"): np.array(2, np.int32)}) == "{1: 2}"
    assert format_value(np.array(1e300)) == "1e+300"


def test_pytree_to_json() -> None:
    out = pytree_to_json(_sample_output(), decimals=6)
    assert out == {
        "b": 0.8,
        "empty": [[], []],
        "none": None,
        "one": [[[1.0, 2.0]]],
        "pair": [5.0, [0.408248, -1.04]],
        "point": [3, [True, False]],
        "special": ["NaN", "Infinity", "-Infinity", 0.0],
        "w": [0.6, 0.0],
    }
    assert isinstance(out, dict) and list(out) == sorted(out)
    full: Any = pytree_to_json(_sample_output())
    assert full["b"] == float(np.float32(0.8)) and full["special"][3] == -1e-9
    json.dumps(full, allow_nan=False)


def test_describe_leaves() -> None:
    leaves = describe_leaves(_sample_output(), root="out")
    assert [(leaf.path, leaf.dtype, leaf.shape) for leaf in leaves] == [
        ('out["b"]', "float32", ()),
        ('out["empty"]', "float32", (2, 0)),
        ('out["one"][0]', "bfloat16", (1, 2)),
        ('out["pair"][0]', "float32", ()),
        ('out["pair"][1]', "float32", (2,)),
        ('out["point"][0]', "int32", ()),
        ('out["point"][1]', "bool", (2,)),
        ('out["special"]', "float64", (4,)),
        ('out["w"]', "float32", (2,)),
    ]


# ------------------------------------------------------------------------------------ property: round trip

KEYS = st.text(max_size=4)
FLOAT32S = st.floats(width=32, allow_nan=False, allow_infinity=False)
NUMBERS = FLOAT32S | st.integers(-(2**24), 2**24)


@st.composite
def json_leaves(draw: st.DrawFn, numbers: st.SearchStrategy[float] = NUMBERS) -> Any:
    shape = draw(st.lists(st.integers(0, 3), max_size=3))

    def build(dims: list[int]) -> Any:
        if not dims:
            return draw(numbers)
        return [build(dims[1:]) for _ in range(dims[0])]

    return build(shape)


def json_trees(numbers: st.SearchStrategy[float] = NUMBERS) -> st.SearchStrategy[Any]:
    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        objects = st.dictionaries(KEYS, children, max_size=3)
        return objects | st.lists(objects, min_size=1, max_size=3)

    return st.recursive(json_leaves(numbers), extend, max_leaves=8)


def _round_numbers(value: Any, dtype: np.dtype[Any]) -> Any:
    if isinstance(value, dict):
        return {k: _round_numbers(v, dtype) for k, v in value.items()}
    if isinstance(value, list):
        return [_round_numbers(v, dtype) for v in value]
    return float(np.array(value, np.float64).astype(dtype))


def _count_leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_count_leaves(v) for v in value.values())
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return sum(_count_leaves(v) for v in value)
    return 1


def _keys_sorted(value: Any) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(_keys_sorted(v) for v in value.values())
    if isinstance(value, list):
        return all(_keys_sorted(v) for v in value)
    return True


@settings(max_examples=100, deadline=None)
@given(json_trees())
def test_round_trip_float32(value: Any) -> None:
    tree = json_to_pytree(value, "float32", root="x")
    back = pytree_to_json(tree)
    assert back == _round_numbers(value, np.dtype(np.float32))
    assert _keys_sorted(back)
    leaves = describe_leaves(tree, root="x")
    assert len(leaves) == _count_leaves(value)
    assert all(leaf.dtype == "float32" for leaf in leaves)


@settings(max_examples=60, deadline=None)
@given(json_trees(st.floats(-1e38, 1e38) | st.integers(-1000, 1000)))
def test_round_trip_bfloat16(value: Any) -> None:
    tree = json_to_pytree(value, "bfloat16", root="x")
    assert pytree_to_json(tree) == _round_numbers(value, BF16)
    assert all(leaf.dtype == "bfloat16" for leaf in describe_leaves(tree))


# ------------------------------------------------------------------------------------- property: rejection

Path = tuple[str | int, ...]


@dataclass
class Sites:
    """Places in a valid JSON tree where a malformed item can be injected."""

    values: list[Path] = field(default_factory=list)  # the root and every dict child
    node_items: list[tuple[Path, int]] = field(default_factory=list)  # items of list nodes, with list length
    numbers: list[tuple[Path, int]] = field(default_factory=list)  # numbers in leaves, with list length or 0
    rows: list[tuple[Path, Path]] = field(
        default_factory=list
    )  # sub-lists of leaves, with where raggedness shows


def _collect(value: Any, path: Path, sites: Sites) -> None:
    if isinstance(value, dict):
        for key, child in value.items():
            sites.values.append((*path, key))
            _collect(child, (*path, key), sites)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            sites.node_items.append(((*path, i), len(value)))
            _collect(item, (*path, i), sites)
    else:
        _collect_leaf(value, path, 0, None, sites)


def _collect_leaf(value: Any, path: Path, siblings: int, shows_at: Path | None, sites: Sites) -> None:
    if not isinstance(value, list):
        sites.numbers.append((path, siblings))
        return
    if siblings and shows_at is not None:
        sites.rows.append((path, shows_at))
    deeper = path if len(value) >= 2 else shows_at
    for i, item in enumerate(value):
        _collect_leaf(item, (*path, i), len(value), deeper, sites)


def _replace(tree: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    tree = copy.deepcopy(tree)
    parent = tree
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return tree


def _mixed_error_path(path: Path, siblings: int) -> Path:
    """Where the converter reports a mixed list: the odd item, i.e. the minority kind; ties go to the kind
    seen first, so in a two-item list whose first item was replaced the other item is the odd one."""
    if siblings == 2 and path[-1] == 0:
        return (*path[:-1], 1)
    return path


@settings(max_examples=150, deadline=None)
@given(json_trees(), st.data())
def test_rejection_names_the_injected_place(value: Any, data: st.DataObject) -> None:
    sites = Sites(values=[()])
    _collect(value, (), sites)
    choices: list[str] = ["bad_scalar", "nan"]
    if sites.rows:
        choices.append("ragged")
    mixable_numbers = [(p, n) for p, n in sites.numbers if n >= 2]
    mixable_items = [(p, n) for p, n in sites.node_items if n >= 2]
    if mixable_numbers or mixable_items:
        choices.append("mixed")
    kind = data.draw(st.sampled_from(choices), label="kind")
    bad: Any

    if kind == "bad_scalar":
        anywhere = (
            sites.values
            + [p for p, _ in sites.node_items]
            + [p for p, _ in sites.numbers]
            + [p for p, _ in sites.rows]
        )
        where = data.draw(st.sampled_from(anywhere), label="where")
        bad = data.draw(st.sampled_from(["text", True, False, None]), label="bad")
        broken, expected_path, reason_part = _replace(value, where, bad), where, "got "
    elif kind == "nan":
        where = data.draw(st.sampled_from(sites.values + [p for p, _ in sites.numbers]), label="where")
        bad = data.draw(st.sampled_from([math.nan, math.inf, -math.inf]), label="bad")
        broken, expected_path, reason_part = _replace(value, where, bad), where, "non-finite value"
    elif kind == "ragged":
        where, expected_path = data.draw(st.sampled_from(sites.rows), label="where")
        broken = copy.deepcopy(value)
        row = broken
        for key in where:
            row = row[key]
        if row:
            row.pop()
        else:
            row.append(0.0)
        reason_part = "ragged list: "
    else:
        where, siblings = data.draw(st.sampled_from(mixable_numbers + mixable_items), label="where")
        if (where, siblings) in mixable_items:
            bad = data.draw(st.sampled_from([1.0, [1.0]]), label="bad")
        else:
            bad = data.draw(st.sampled_from([{"a": 1.0}, [1.0]]), label="bad")
        broken, expected_path, reason_part = (
            _replace(value, where, bad),
            _mixed_error_path(where, siblings),
            "mixes",
        )

    with pytest.raises(ConversionError) as info:
        json_to_pytree(broken, "float32", root="arg")
    assert info.value.path == path_str("arg", expected_path), (kind, where, str(info.value))
    assert reason_part in info.value.reason


# ------------------------------------------------------------------------------ property: rendering is total

_DTYPE_CHOICES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]


@st.composite
def output_arrays(draw: st.DrawFn) -> np.ndarray[Any, Any]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    kind = draw(st.sampled_from(["float", "int", "bool"]))
    if kind == "int":
        return draw(hnp.arrays(np.int32, shape))
    if kind == "bool":
        return draw(hnp.arrays(np.bool_, shape))
    values = draw(hnp.arrays(np.float64, shape, elements=st.floats(allow_nan=True, allow_infinity=True)))
    with np.errstate(all="ignore"):
        return values.astype(draw(st.sampled_from(_DTYPE_CHOICES)))


_DICT_KEYS = KEYS | st.builds(NonStrKey, st.integers(-5, 5).map(repr), st.just("int"))


def _other_node(children: list[Any]) -> OtherNode:
    return OtherNode("Node", tuple(children))


def output_trees() -> st.SearchStrategy[Any]:
    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return (
            st.dictionaries(_DICT_KEYS, children, max_size=3)
            | st.lists(children, max_size=3)
            | st.lists(children, max_size=3).map(tuple)
            | st.lists(children, max_size=3).map(_other_node)
        )

    return st.recursive(output_arrays() | st.none(), extend, max_leaves=8)


def _count_arrays(tree: Any) -> int:
    if isinstance(tree, np.ndarray):
        return 1
    if isinstance(tree, dict):
        return sum(_count_arrays(v) for v in tree.values())
    if isinstance(tree, list | tuple):
        return sum(_count_arrays(v) for v in tree)
    if isinstance(tree, OtherNode):
        return sum(_count_arrays(v) for v in tree.children)
    return 0


@settings(max_examples=100, deadline=None)
@given(output_trees(), st.sampled_from([None, 0, 3, 6]))
def test_rendering_never_crashes(tree: Any, decimals: int | None) -> None:
    text = format_value(tree) if decimals is None else format_value(tree, decimals=decimals)
    assert isinstance(text, str)
    out = pytree_to_json(tree, decimals=decimals)
    json.dumps(out, allow_nan=False)
    assert len(describe_leaves(tree, root="out")) == _count_arrays(tree)
