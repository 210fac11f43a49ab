"""The ``reach`` check: validators' helpers note each stated bound and the extreme the cases reach, and
the check warns when no hidden case approaches a bound (``judge.constraints.recording_bounds``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from judge.check import reach_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Severity
from judge.constraints import (
    Bound,
    check_int,
    check_int_range,
    check_int_tuple,
    check_max_abs,
    check_max_elements,
    check_ndim,
    check_number,
    recording_bounds,
)
from judge.core.problems import load_problem
from judge.core.spec import ReachSpec
from tests.conftest import FIXTURES


def test_helpers_note_nothing_outside_a_recorder_and_the_same_violations_inside() -> None:
    tree = {"w": np.array([1.0, -5.0]), "b": np.array(2.0)}
    outside = check_max_abs(tree, "grads", 4.0)
    with recording_bounds() as recorder:
        inside = check_max_abs(tree, "grads", 4.0)
    assert outside == inside == ['grads["w"][1]: -5 is larger in magnitude than 4']
    assert recorder.bounds["grads: magnitude at most"].reached == 5.0
    with recording_bounds() as again:
        pass
    assert again.bounds == {}


def test_every_bounding_helper_notes_its_bounds_and_extremes() -> None:
    with recording_bounds() as recorder:
        check_ndim({"a": np.zeros((2, 2)), "b": np.zeros(3)}, "x", max_ndim=3)
        check_max_elements({"x": np.zeros(5), "y": np.zeros(7)}, 100)
        check_number(0.25, "lr", gt=0.0, le=1.0)
        check_number(0.75, "lr", gt=0.0, le=1.0)
        check_int(7, "n", ge=1, le=64)
        check_int_tuple((2, 9), "buckets", min_items=1, max_items=4, ge=1, le=4096)
        check_int_range(np.array([[3, -2], [40, 5]], dtype=np.int32), "ids", ge=-10, le=50)
    got = {key: (b.side, b.limit, b.reached) for key, b in recorder.bounds.items()}
    assert got == {
        "x: leaf dimensions at most": ("count_max", 3, 2),
        "x: leaf dimensions at least": ("count_min", 0, 1),
        "x, y: elements in total at most": ("upper", 100, 12),
        "lr: greater than": ("lower", 0.0, 0.25),
        "lr: at most": ("upper", 1.0, 0.75),
        "n: at least": ("lower", 1, 7),
        "n: at most": ("upper", 64, 7),
        "buckets: items at least": ("lower", 1, 2),
        "buckets: items at most": ("upper", 4, 2),
        "buckets[*]: at least": ("lower", 1, 2),
        "buckets[*]: at most": ("upper", 4096, 9),
        "ids: at least": ("lower", -10, -2),
        "ids: at most": ("upper", 50, 40),
    }
    assert recorder.bounds["lr: greater than"].strict


def test_a_case_dependent_limit_keeps_the_case_that_came_closest_in_proportion() -> None:
    with recording_bounds() as recorder:
        check_int_range(np.array([3]), "lengths", ge=0, le=8)  # 3/8
        check_int_range(np.array([2]), "lengths", ge=0, le=2)  # 2/2: at the bound
        check_int_range(np.array([5]), "lengths", ge=0, le=16)  # 5/16
    bound = recorder.bounds["lengths: at most"]
    assert (bound.limit, bound.reached, bound.varies) == (2, 2, True)
    assert reach_check.approached(bound, 10.0, 1e-3)
    assert "the case's own limit" in reach_check.describe(bound, 10.0, 1e-3)


@pytest.mark.parametrize(
    ("side", "limit", "reached", "ok"),
    [
        ("upper", 1e7, 1e6, True),  # reached limit / 10
        ("upper", 1e7, 9.9e5, False),  # hidden steps stop near 10^6 of 10^7: the miss, factor 10
        ("upper", 1e15, 3e4, False),
        ("upper", -4.0, -40.0, True),
        ("upper", -4.0, -41.0, False),
        ("lower", 1.0, 10.0, True),
        ("lower", 1.0, 11.0, False),
        ("lower", -1e3, -100.0, True),
        ("lower", -1e3, -99.0, False),
        ("lower", 0.0, 1e-3, True),  # within the zero band
        ("lower", 0.0, 1e-2, False),  # distances down to 0, none under 1e-2 tested
        ("count_max", 3, 2, False),
        ("count_max", 3, 3, True),
        ("count_max", 3, 4, True),  # past the bound: the cases check reports the violation, once
        ("upper", 1e3, 2e3, True),
    ],
)
def test_approached_within_the_factor_or_the_zero_band(
    side: str, limit: float, reached: float, ok: bool
) -> None:
    bound = Bound("b", side, limit, reached)  # type: ignore[arg-type]
    assert reach_check.approached(bound, 10.0, 1e-3) is ok


def test_a_bound_never_noted_is_not_approached() -> None:
    assert not reach_check.approached(Bound("b", "upper", 1.0), 10.0, 1e-3)


def test_a_problem_sets_the_factor_of_one_bound() -> None:
    reach = ReachSpec(factor=10.0, factors={"step: at most": 2.0})
    assert reach_check.factor_for(reach, "step: at most") == 2.0
    assert reach_check.factor_for(reach, "lr: at most") == 10.0


# ------------------------------------------------------------------------------------- the check itself


def _package(tmp_path: Path, slug: str) -> Path:
    root = tmp_path / "problems" / slug
    shutil.copytree(FIXTURES / slug, root)
    shutil.copytree(FIXTURES.parent / "reference", tmp_path / "reference")
    return root


def _run(root: Path) -> Diagnostics:
    diag = Diagnostics(problem=root.name, base=root.parent.parent, check=reach_check.NAME)
    ctx = CheckContext(root=root, diag=diag, problem=load_problem(root))
    reach_check.check(ctx)
    return diag


def _small_ids(root: Path) -> None:
    """Every hidden token id taken modulo 50 (still valid, far from the bound 999)."""
    path = root / "cases" / "hidden.json"
    data = json.loads(path.read_text())
    for case in data["cases"]:
        case["args"]["tokens"] = (np.asarray(case["args"]["tokens"]) % 50).tolist()
    path.write_text(json.dumps(data))


def test_hidden_cases_that_stop_short_of_a_bound_warn_and_name_it(tmp_path: Path) -> None:
    root = _package(tmp_path, "shift-tokens")
    assert [f for f in _run(root).findings if f.severity is Severity.WARNING] == []
    # Ids like those of a small vocabulary: the stated bound `tokens <= 999` is never approached.
    _small_ids(root)
    warnings = [f for f in _run(root).findings if f.severity is Severity.WARNING]
    assert any("tokens: at most 999" in f.message and "wanted 99.9 or more" in f.message for f in warnings), [
        f.message for f in warnings
    ]
    assert all(f.at.startswith("bound ") and f.path.endswith("validator.py") for f in warnings)


def test_a_factor_for_a_bound_the_validator_does_not_check_is_an_error(tmp_path: Path) -> None:
    root = _package(tmp_path, "shift-tokens")
    toml = root / "problem.toml"
    toml.write_text(toml.read_text() + '\n[reach]\nfactors = { "tokens: at mots" = 2.0 }\n')
    errors = [f for f in _run(root).findings if f.severity is Severity.ERROR]
    assert (
        len(errors) == 1
        and "'tokens: at mots'" in errors[0].message
        and "tokens: at most" in errors[0].message
    )


def test_the_check_notes_every_bound_and_how_close_the_cases_come(tmp_path: Path) -> None:
    root = _package(tmp_path, "shift-tokens")
    diag = _run(root)
    (note,) = diag.notes_of(reach_check.NAME)
    assert "pad_id: at most 999: hidden cases reach 999" in note
