"""Validator helpers (judge.constraints) and custom Run inputs held to a problem's constraints."""

from __future__ import annotations

import numpy as np
import pytest

from judge.constraints import (
    check_max_abs,
    longest_list,
    nesting_depth,
    split_violation,
    tree_signature,
)
from judge.core.errors import InputError, ProblemError
from judge.core.problems import Problem, ProblemSet
from tests.conftest import FIXTURE_SLUG, FIXTURES, TUPLE_SLUG

#: The test fixture package (its validator bounds every value by 1e15).
FIXTURE = ProblemSet(FIXTURES).get(FIXTURE_SLUG)


def f32(*values: float) -> np.ndarray:
    return np.asarray(values, np.float32)


@pytest.mark.parametrize(
    ("text", "path", "reason"),
    [
        (
            'grads["w"][0]: 1e+20 is larger in magnitude than 1e+15',
            'grads["w"][0]',
            "1e+20 is larger in magnitude than 1e+15",
        ),
        ('grads["a: b"][0, 1]: too big: really', 'grads["a: b"][0, 1]', "too big: really"),
        ('g["q\\"]: x"]: bad', 'g["q\\"]: x"]', "bad"),
        ("max_norm: -1.0, must be greater than 0.0", "max_norm", "-1.0, must be greater than 0.0"),
        ("params, grads: 5000 elements in total", "params, grads", "5000 elements in total"),
        ("no path here", "args", "no path here"),
    ],
)
def test_split_violation(text: str, path: str, reason: str) -> None:
    assert split_violation(text) == (path, reason)


def test_check_max_abs_names_the_first_element_past_the_bound() -> None:
    tree = {"a": f32(1.0, -3e15), "b": [{"w": np.zeros((2, 2), np.float32)}], "e": f32()}
    assert check_max_abs(tree, "grads", 1e15) == ['grads["a"][1]: -3e+15 is larger in magnitude than 1e+15']
    assert check_max_abs(tree, "grads", 1e16) == []
    assert check_max_abs(f32(np.inf), "x", 1.0) == ["x[0]: inf is larger in magnitude than 1"]


def test_tree_facts() -> None:
    tree = {"a": [{"w": f32(1, 2)}, {"w": f32(3)}, {"w": f32(4)}], "b": {"c": {"d": f32(0)}}, "e": []}
    assert longest_list(tree) == 3 and longest_list(f32(1)) == 0
    assert nesting_depth(tree) == 3 and nesting_depth(f32(1)) == 0 and nesting_depth({"a": {}}) == 2
    same = {"b": {"c": {"d": f32(7)}}, "a": [{"w": f32(5, 6)}, {"w": f32(0)}, {"w": f32(9)}], "e": []}
    assert tree_signature(tree) == tree_signature(same)
    assert tree_signature(tree) != tree_signature({**same, "e": {}})
    assert tree_signature(f32(1, 2)) != tree_signature(f32(1, 2).astype(np.float64))
    assert tree_signature([f32(1)]) != tree_signature(f32(1))


# ----------------------------------------------------------------------------------- custom Run inputs


def test_a_custom_input_past_the_bound_is_refused_with_its_path() -> None:
    problem = FIXTURE
    with pytest.raises(InputError) as caught:
        problem.custom_case({"tree": {"w": [1e20, 1e20]}, "factor": 1.0})
    assert caught.value.path == 'tree["w"][0]'
    assert caught.value.reason == "1e+20 is larger in magnitude than 1e+15"
    with pytest.raises(InputError) as caught:
        problem.custom_case({"tree": {"w": [1.0]}, "factor": 1e20})
    assert caught.value.path == "factor" and caught.value.reason.startswith("1e+20, must be")
    case = problem.custom_case({"tree": {"w": [1e15, -1e15]}, "factor": 1.0})
    assert case.visibility == "public" and case.dtype == "float32"


def test_custom_inputs_are_held_to_constraints_across_arguments() -> None:
    problem = ProblemSet(FIXTURES).get(TUPLE_SLUG)  # end must have the structure of start
    ok = {"start": {"w": [1.0]}, "end": {"w": [0.5]}}
    with pytest.raises(InputError) as caught:
        problem.custom_case({**ok, "weight": 1e20})
    assert caught.value.path == "weight"
    with pytest.raises(InputError) as caught:
        problem.custom_case({**ok, "weight": 0.1, "end": {"v": [0.5]}})
    assert caught.value.path == "end" and "keys differ from start" in caught.value.reason
    problem.custom_case({**ok, "weight": 0.1})


def test_a_validator_that_crashes_is_the_judges_fault() -> None:
    problem = FIXTURE

    def broken(args: dict[str, object], dtype: str) -> list[str]:
        raise KeyError("oops")

    crashing = Problem(
        problem.spec, problem.root, problem.statement_source, problem.starter, problem.cases, broken
    )
    with pytest.raises(ProblemError, match="validate\\(\\) failed: KeyError"):
        crashing.custom_case({"tree": {"w": [1.0]}, "factor": 1.0})
