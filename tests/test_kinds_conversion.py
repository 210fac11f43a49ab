"""Argument kinds without a sandbox: the spec's kinds, Run-panel conversion of int32/bool arrays and static
values with path-named errors, the session plan's static encoding, coverage and validator helpers, and exact
comparison of int32/bool outputs."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from judge.check.coverage_check import signature
from judge.constraints import check_int, check_int_range, check_int_tuple
from judge.core.compare import bind
from judge.core.errors import InputError
from judge.core.grader import build_session
from judge.core.hidden import hidden_message
from judge.core.problems import Problem, ProblemSet
from judge.core.pytree_json import (
    ConversionError,
    json_to_array,
    json_to_int,
    json_to_int_tuple,
    pytree_to_json,
)
from judge.core.spec import ArgSpec, CompareSpec, OutputSpec
from judge.core.verdicts import WrongAnswerReason
from sandbox.inside.tracer import static_value
from tests.conftest import FIXTURE_SLUG, FIXTURES, KINDS_SLUG

_PROBLEMS = ProblemSet(FIXTURES)


@pytest.fixture(scope="module")
def scale() -> Problem:
    """A pytree and a traced number: no int, static or exact argument."""
    return _PROBLEMS.get(FIXTURE_SLUG)


@pytest.fixture(scope="module")
def pad() -> Problem:
    """int32 arrays of rank 2 and 1, a traced int32 scalar, a static tuple and int, exact outputs."""
    return _PROBLEMS.get(KINDS_SLUG)


BASE = {"tokens": [[5, 6, 7], [8, 9, 1]], "lengths": [3, 1], "offset": 0, "widths": [2, 4, 8], "pad_id": 0}


# ---------------------------------------------------------------------------------------------- the spec


def test_static_kinds_default_to_static_and_cannot_be_traced() -> None:
    assert ArgSpec(name="n", kind="int").traced is False
    assert ArgSpec(name="b", kind="int_tuple").static
    with pytest.raises(ValidationError, match="static_argnames"):
        ArgSpec(name="n", kind="int", traced=True)


def test_array_kind_is_traced_and_only_it_takes_dtype_and_ndim() -> None:
    step = ArgSpec(name="step", kind="array", dtype="int32", ndim=[0])
    assert step.traced and step.accepts == ("integer",)
    assert step.describe_kind() == "an int32 array with 0 dimensions (a scalar)"
    assert ArgSpec(name="m", kind="array", dtype="bool", ndim=[1, 2]).accepts == ("array",)
    with pytest.raises(ValidationError, match="always traced"):
        ArgSpec(name="x", kind="array", traced=False)
    with pytest.raises(ValidationError, match="cannot be static"):
        ArgSpec(name="x", kind="pytree", traced=False)
    with pytest.raises(ValidationError, match="apply to kind 'array' only"):
        ArgSpec(name="x", kind="pytree", dtype="int32")
    with pytest.raises(ValidationError, match="repeats"):
        ArgSpec(name="x", kind="array", ndim=[1, 1])


# ---------------------------------------------------------------------------------------------- Run panel


@pytest.mark.parametrize(
    ("value", "dtype", "ndim", "message"),
    [
        (1.5, "int32", [0], "step: 1.5 is not an integer"),
        (True, "int32", [0], "step: expected an integer or an array, got a boolean"),
        ([3], "int32", [0], "step: expected an integer, got an array of shape (1,) (1 dimension)"),
        ("3", "int32", [0], "step: expected an integer or an array, got a string"),
        ([[1, 2], [3, 4.25]], "int32", [2], "step[1][1]: 4.25 is not an integer"),
        ([1, 2**31], "int32", [1], "step[1]: 2147483648 overflows int32"),
        ([[1, True]], "int32", [2], "step[0][1]: expected an integer, got a boolean"),
        ([True, 1], "bool", [1], "step[1]: expected true or false, got a number"),
        (0, "bool", [0], "step: expected true or false or an array, got a number"),
        ({"a": 1}, "int32", [], "step: expected an array, got an object"),
        ([{"a": 1}], "int32", [], "step: expected an array, got a list of objects"),
        ([[[1]]], "int32", [1, 2], "step: expected an array with 1 or 2 dimensions, got an array of shape"),
    ],
)
def test_array_arguments_refuse_bad_json_naming_the_path(
    value: Any, dtype: str, ndim: list[int], message: str
) -> None:
    with pytest.raises(ConversionError) as caught:
        json_to_array(value, dtype, root="step", ndim=ndim)
    assert str(caught.value).startswith(message), str(caught.value)


def test_array_arguments_convert_to_one_exact_leaf() -> None:
    step = json_to_array(7, "int32", root="step", ndim=[0])
    assert step.dtype == np.int32 and step.shape == () and int(step) == 7
    assert json_to_array(2.0, "int32", root="step").dtype == np.int32  # integral value: accepted
    mask = json_to_array([[True, False]], "bool", root="mask", ndim=[2])
    assert mask.dtype == np.bool_ and mask.tolist() == [[True, False]]
    empty = json_to_array([[], []], "int32", root="tokens", ndim=[2])
    assert empty.shape == (2, 0) and empty.dtype == np.int32
    assert json_to_array([0.5], "bfloat16", root="x").dtype.name == "bfloat16"


def test_static_values_are_python_ints_and_tuples() -> None:
    assert json_to_int(3, root="n") == 3 and type(json_to_int(3.0, root="n")) is int
    buckets = json_to_int_tuple([2, 4, 8], root="buckets")
    assert buckets == (2, 4, 8) and hash(buckets) == hash((2, 4, 8))
    for value, message in [
        ([1, 2], "n: expected an integer, got an array"),
        (2.5, "n: 2.5 is not an integer"),
        (False, "n: expected an integer, got a boolean"),
        (2**40, "n: 1099511627776 overflows int32"),
        (None, "n: expected an integer, got null"),
    ]:
        with pytest.raises(ConversionError, match=message.replace("(", r"\(")):
            json_to_int(value, root="n")
    for value, message in [
        ([2, [4], 8], r"buckets\[1\]: expected an integer, got an array"),
        ([2, 4.5], r"buckets\[1\]: 4.5 is not an integer"),
        (4, "buckets: expected an array of integers, got a number"),
        ({"a": 1}, "buckets: expected an array of integers, got an object"),
        (list(range(65)), r"buckets: too many items \(65, at most 64\)"),
    ]:
        with pytest.raises(ConversionError, match=message):
            json_to_int_tuple(value, root="buckets")


@pytest.mark.parametrize(
    ("args", "path", "reason"),
    [
        ({"offset": 1.5}, "offset", "1.5 is not an integer"),
        ({"offset": [3]}, "offset", "expected an integer, got an array"),
        ({"pad_id": [10]}, "pad_id", "expected an integer, got an array"),
        ({"pad_id": -2}, "pad_id", "-2, must be at least -1"),
        ({"widths": [2]}, "widths[0]", "2, must be at least the length 3"),
        ({"offset": 1001}, "offset", "1001, must be at least -1000 and at most 1000"),
    ],
)
def test_run_panel_ints_and_statics_are_refused_by_path(
    pad: Problem, args: dict[str, Any], path: str, reason: str
) -> None:
    with pytest.raises(InputError) as caught:
        pad.custom_case({**BASE, **args})
    assert caught.value.path == path and reason in caught.value.reason, str(caught.value)


@pytest.mark.parametrize(
    ("args", "path", "reason"),
    [
        ({"widths": [2, [4], 8]}, "widths[1]", "expected an integer, got an array"),
        ({"widths": 4}, "widths", "expected an array of integers"),
        ({"widths": [4, 2]}, "widths[1]", "must be larger than widths[0] = 4"),
        ({"pad_id": [0]}, "pad_id", "expected an integer, got an array"),
        ({"tokens": [[5, 6.5, 7], [8, 9, 1]]}, "tokens[0][1]", "6.5 is not an integer"),
        ({"tokens": [5, 6, 7]}, "tokens", "expected an array with 2 dimensions"),
        ({"lengths": [True, 1]}, "lengths[0]", "expected an integer, got a boolean"),
        ({"lengths": [4, 1]}, "lengths[0]", "4, must be at least 0 and at most 3"),
    ],
)
def test_run_panel_arrays_are_refused_by_path(
    pad: Problem, args: dict[str, Any], path: str, reason: str
) -> None:
    with pytest.raises(InputError) as caught:
        pad.custom_case({**BASE, **args})
    assert caught.value.path == path and reason in caught.value.reason, str(caught.value)


def test_a_valid_custom_case_carries_python_statics(pad: Problem) -> None:
    case = pad.custom_case({"tokens": [[1, 2]], "lengths": [1], "offset": 3, "widths": [2, 4], "pad_id": -1})
    tokens, lengths, offset, widths, pad_id = case.inputs
    assert tokens.dtype == np.int32 and lengths.shape == (1,) and offset.shape == ()
    assert widths == (2, 4) and type(pad_id) is int


# ---------------------------------------------------------------------------------------------- the plan


def test_static_values_are_part_of_the_signature_and_tuples_survive_the_wire(pad: Problem) -> None:
    make = pad.custom_case
    a = make({"tokens": [[1, 2]], "lengths": [1], "offset": 0, "widths": [2, 4], "pad_id": 0}, "a")
    b = make({"tokens": [[3, 4]], "lengths": [2], "offset": 1, "widths": [2, 4], "pad_id": 0}, "b")
    c = make({"tokens": [[3, 4]], "lengths": [2], "offset": 1, "widths": [4, 8], "pad_id": 0}, "c")
    d = make({"tokens": [[3, 4]], "lengths": [2], "offset": 1, "widths": [2, 4], "pad_id": 5}, "d")
    job = build_session(pad, "x = 1\n", [a, b, c, d], [False] * 4, 1 << 20)
    assert [plan.sig for plan in job.cases] == [0, 0, 1, 2]  # same statics share a compile; others do not
    args = job.sigs[1].args
    assert args[3] == {"static": [4, 8], "tuple": True} and args[4] == {"static": 0}
    assert static_value(args[3]) == (4, 8) and static_value(args[4]) == 0
    # Only traced leaves reach the executor: tokens, lengths and offset, never the statics.
    assert [leaf.dtype.name for leaf in job.cases[2].leaves] == ["int32", "int32", "int32"]
    assert signature(pad.spec.args, a.inputs, "float32") != signature(pad.spec.args, d.inputs, "float32")
    assert signature(pad.spec.args, a.inputs, "float32") == signature(pad.spec.args, b.inputs, "float32")


def test_a_traced_int_step_is_an_int32_leaf_not_a_weak_number(pad: Problem, scale: Problem) -> None:
    case = pad.custom_case({**BASE, "offset": 3, "pad_id": 10})
    job = build_session(pad, "x = 1\n", [case], [False], 1 << 20)
    (sig,) = job.sigs
    assert sig.args[2] == {"tree": {"aval": {"dtype": "int32", "shape": []}}}
    assert sig.args[4] == {"static": 10}
    assert [x["dtype"] for x in sig.inputs] == ["int32", "int32", "int32"]
    # A number argument is a weakly typed float, not an array.
    number = build_session(
        scale, "x = 1\n", [scale.custom_case({"tree": [1.0], "factor": 2.0})], [False], 1 << 20
    )
    assert number.sigs[0].args[1] == {"number": True}
    assert [x["dtype"] for x in number.sigs[0].inputs] == ["float32", "float32"]


def test_a_cases_wire_form_is_made_once_per_problem_and_shared_read_only(pad: Problem) -> None:
    """Every grading of a problem sends a case's same leaves (made once, read-only: no grading can change
    what the next one sends); the same case planned for another problem's spec is converted again."""
    case = pad.custom_case({**BASE, "offset": 3, "pad_id": 10})
    first = build_session(pad, "x = 1\n", [case], [False], 1 << 20)
    again = build_session(pad, "x = 1\n", [case], [False], 1 << 20)
    assert all(a is b for a, b in zip(first.cases[0].leaves, again.cases[0].leaves, strict=True))
    assert again.sigs[0].args == first.sigs[0].args
    with pytest.raises(ValueError, match="read-only"):
        first.cases[0].leaves[0][...] = 0
    other = dataclasses.replace(pad, spec=pad.spec.model_copy())
    assert case.__dict__["_wire"][0] is pad.spec
    fresh = build_session(other, "x = 1\n", [case], [False], 1 << 20)
    assert case.__dict__["_wire"][0] is other.spec  # made again for the other spec
    assert fresh.sigs[0].args == first.sigs[0].args


# ---------------------------------------------------------------------------------------------- helpers


def test_validator_helpers_for_ints() -> None:
    assert check_int(3, "n", ge=1, le=5) == []
    assert check_int(True, "n") == ["n: expected an integer, got bool"]
    assert check_int(0, "n", ge=1) == ["n: 0, must be at least 1"]
    assert check_int_tuple((1, 2, 2), "b", increasing=True) == ["b[2]: 2, must be larger than b[1] = 2"]
    assert check_int_tuple([1, 2], "b") == ["b: expected a tuple of integers, got list"]
    assert check_int_tuple((), "b", min_items=1) == ["b: 0 items, at least 1 required"]
    assert check_int_range(np.array([[0, 5], [9, 2]], np.int32), "t", ge=0, le=8) == [
        "t[1, 0]: 9, must be at least 0 and at most 8"
    ]


# ---------------------------------------------------------------------------------------------- compare


def test_int32_and_bool_leaves_compare_exactly_with_their_dtype() -> None:
    checker = bind(CompareSpec(), OutputSpec(kind="tuple", names=["padded", "mask"]))
    padded = np.array([[5, 6, 0]], np.int32)
    mask = np.array([[True, True, False]])
    assert checker((padded, mask), (padded.copy(), mask.copy())).ok
    off = checker((padded, mask), (padded, ~mask))
    assert not off.ok and off.reason is WrongAnswerReason.VALUE and off.path == "mask"
    assert "mask[0, 0]" in off.message
    ids = hidden_message(checker((padded, mask), (padded + np.int32(1), mask)))
    assert ids.startswith("padded: wrong values") and "[0, 0]" not in ids
    as_int = checker((padded, mask), (padded, mask.astype(np.int32)))
    assert as_int.reason is WrongAnswerReason.DTYPE and "dtype int32, expected bool" in as_int.message
    assert pytree_to_json((padded, mask)) == [[[5, 6, 0]], [[True, True, False]]]


# ---------------------------------------------------------------------------------------------- statement


def test_the_generated_rules_describe_int_steps_statics_and_exact_outputs(
    scale: Problem, pad: Problem
) -> None:
    from judge.authoring.statement import stated_rules

    pad_rules = " ".join(stated_rules(pad.spec))
    assert "`offset` arrives traced as an int32 array with 0 dimensions" in pad_rules
    assert "`widths` and `pad_id` arrive as plain Python values" in pad_rules
    assert "static_argnames" in pad_rules and "compiled on its own" in pad_rules
    assert "Integer and boolean leaves" not in " ".join(stated_rules(scale.spec))  # float output only
    assert "`widths` is a tuple of Python ints" in pad_rules
    assert "its shape (`tokens.shape`) is a plain tuple of ints" in pad_rules
    assert "Integer and boolean leaves (int32 ids, bool masks) must match exactly" in pad_rules
