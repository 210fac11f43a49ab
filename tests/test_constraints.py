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
from judge.errors import InputError, ProblemError
from judge.problems import Problem, ProblemSet
from tests.conftest import ROOT

PROBLEMS = ProblemSet(ROOT / "problems")


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
    problem = PROBLEMS.get("global-norm-clipping")
    with pytest.raises(InputError) as caught:
        problem.custom_case({"grads": {"w": [1e20, 1e20]}, "max_norm": 1.0})
    assert caught.value.path == 'grads["w"][0]'
    assert caught.value.reason == "1e+20 is larger in magnitude than 1e+15"
    with pytest.raises(InputError) as caught:
        problem.custom_case({"grads": {"w": [1.0]}, "max_norm": 0.0})
    assert (caught.value.path, caught.value.reason) == ("max_norm", "0.0, must be greater than 0.0")
    case = problem.custom_case({"grads": {"w": [1e15, -1e15]}, "max_norm": 1.0})
    assert case.visibility == "public" and case.dtype == "float32"


def test_custom_input_constraints_of_sgd() -> None:
    problem = PROBLEMS.get("sgd-momentum")
    ok = {"params": {"w": [1.0]}, "grads": {"w": [0.5]}, "velocity": {"w": [0.0]}, "momentum": 0.9}
    with pytest.raises(InputError) as caught:
        problem.custom_case({**ok, "learning_rate": 1e20})
    assert caught.value.path == "learning_rate"
    with pytest.raises(InputError) as caught:
        problem.custom_case({**ok, "learning_rate": 0.1, "grads": {"v": [0.5]}})
    assert caught.value.path == "grads" and "keys differ from params" in caught.value.reason
    problem.custom_case({**ok, "learning_rate": 0.1})


def test_a_validator_that_crashes_is_the_judges_fault() -> None:
    problem = PROBLEMS.get("global-norm-clipping")

    def broken(args: dict[str, object], dtype: str) -> list[str]:
        raise KeyError("oops")

    crashing = Problem(
        problem.spec, problem.root, problem.statement_source, problem.starter, problem.cases, broken
    )
    with pytest.raises(ProblemError, match="validate\\(\\) failed: KeyError"):
        crashing.custom_case({"grads": {"w": [1.0]}, "max_norm": 1.0})
