"""Sizes and derived quantities go through the constraint helpers, so the ``reach`` check sees them: the
size bounds and the attention scores of ``batched-attention``, the smallest nonzero distance of
``pairwise-distances`` (issue 27, class 1: hidden cases that stop far short of a stated bound)."""

from __future__ import annotations

import numpy as np

from judge.check import reach_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics
from judge.constraints import check_derived, check_size, recording_bounds
from judge.core.problems import load_problem
from tests.conftest import ROOT


def test_check_size_notes_count_bounds_that_the_cases_must_reach_exactly() -> None:
    with recording_bounds() as recorder:
        assert check_size(3, "q", "the batch size B", ge=1, le=8) == []
        assert check_size(9, "q", "the batch size B", ge=1, le=8) == [
            "q: the batch size B is 9, 1 to 8 allowed"
        ]
        assert check_size(0, "k", "the number of keys S", ge=1) == [
            "k: the number of keys S is 0, at least 1 required"
        ]
    got = {key: (b.side, b.limit, b.reached) for key, b in recorder.bounds.items()}
    assert got == {
        "q: the batch size B at least": ("count_min", 1, 3),
        "q: the batch size B at most": ("count_max", 8, 9),
        "k: the number of keys S at least": ("count_min", 1, 0),
    }
    assert reach_check.approached(recorder.bounds["q: the batch size B at most"], 10.0, 1e-3)


def test_check_derived_notes_a_derived_quantity_and_reports_a_violation() -> None:
    with recording_bounds() as recorder:
        assert check_derived(409.0, "q, k", "the largest score", le=80000.0) == []
        assert check_derived(0.0098, "x, y", "the smallest nonzero distance", gt=0.0) == []
        assert check_derived(9e4, "q, k", "the largest score", le=80000.0) == [
            "q, k: the largest score is 90000, must be at most 80000"
        ]
        assert check_derived(float("nan"), "x, y", "d") == ["x, y: d is nan, a finite value is required"]
    score, distance = (
        recorder.bounds["q, k: the largest score at most"],
        recorder.bounds["x, y: the smallest nonzero distance greater than"],
    )
    assert (score.side, score.reached, distance.side, distance.strict) == ("upper", 9e4, "lower", True)
    distance.reached = 0.0098  # what the audit found: no distance between 0 and ~1e-2 was tested
    assert not reach_check.approached(distance, 10.0, 1e-3)
    score.reached = 409.0  # ... and hidden scores topping out near 409
    assert not reach_check.approached(score, 10.0, 1e-3)


def _reach(slug: str) -> tuple[Diagnostics, dict[str, dict[str, float]]]:
    """The reach check's findings on a shipped problem, and per dtype the extremes its validator notes."""
    root = ROOT / "problems" / slug
    problem = load_problem(root)
    diag = Diagnostics(problem=slug, base=ROOT, check=reach_check.NAME)
    reach_check.check(CheckContext(root=root, diag=diag, problem=problem))
    names = [arg.name for arg in problem.spec.args]
    extremes: dict[str, dict[str, float]] = {}
    for dtype in problem.spec.dtypes.allowed:
        with recording_bounds() as recorder:
            for case in problem.hidden_cases:
                if case.dtype == dtype:
                    assert problem.validator is not None
                    assert problem.validator(dict(zip(names, case.inputs, strict=True)), case.dtype) == []
        extremes[dtype] = {key: b.reached for key, b in recorder.bounds.items() if b.reached is not None}
    return diag, extremes


def test_batched_attention_reaches_every_size_and_scores_in_the_tens_of_thousands_in_both_dtypes() -> None:
    diag, extremes = _reach("batched-attention")
    assert [f.message for f in diag.findings] == []
    (note,) = diag.notes_of(reach_check.NAME)
    for size in (
        "the batch size B at most 8",
        "the number of queries T at most 64",
        "the feature size d at most 64",
    ):
        assert size in note
    assert "k: the number of keys S at least 1: hidden cases reach 1" in note
    assert "v: the value size dv at most 64: hidden cases reach 64" in note
    for dtype in ("float32", "bfloat16"):
        assert extremes[dtype]["q, k: the largest score |q.k|/sqrt(d) at most"] >= 2e4, dtype


def test_batched_attention_has_bfloat16_scores_large_and_close_together() -> None:
    problem = load_problem(ROOT / "problems" / "batched-attention")
    close = []
    for case in problem.hidden_cases:
        if case.dtype != "bfloat16":
            continue
        q, k, _, mask = (np.asarray(x, dtype=np.float64) for x in case.inputs)
        scores = np.einsum("btd,bsd->bts", q, k) / np.sqrt(q.shape[-1])
        allowed = np.broadcast_to(mask[:, None, :] if mask.ndim == 2 else mask, scores.shape).astype(bool)
        top = np.sort(np.where(allowed, scores, -np.inf), axis=-1)
        # Rows whose two largest allowed scores are past 1e4 in magnitude and within 4 of each other, where
        # bfloat16's spacing is 64 or more: scores rounded to bfloat16 collapse.
        with np.errstate(invalid="ignore"):  # rows with fewer than two allowed keys: -inf - -inf
            pairs = (np.abs(top[..., -2]) > 1e4) & (top[..., -1] - top[..., -2] <= 4)
        close.append(int(pairs.sum()))
    assert sum(1 for rows in close if rows >= 3) >= 2, close


def test_pairwise_distances_tests_tiny_nonzero_distances_in_both_dtypes() -> None:
    diag, extremes = _reach("pairwise-distances")
    assert [f.message for f in diag.findings] == []
    for dtype in ("float32", "bfloat16"):
        assert extremes[dtype]["x, y: the smallest nonzero distance greater than"] <= 5e-4, dtype


def test_pairwise_distances_sizes_are_checked_by_the_reach_check_and_reached() -> None:
    diag, _ = _reach("pairwise-distances")
    assert [f.message for f in diag.findings] == []
    (note,) = diag.notes_of(reach_check.NAME)
    for size in (
        "x: the number of points n at least 1: hidden cases reach 1",
        "x: the number of points n at most 256: hidden cases reach 256",
        "y: the number of points m at least 1: hidden cases reach 1",
        "y: the number of points m at most 256: hidden cases reach 256",
        "x: the number of coordinates d at least 1: hidden cases reach 1",
        "x: the number of coordinates d at most 64: hidden cases reach 64",
        "x, y: elements in total at most 4096: hidden cases reach 4096",
    ):
        assert size in note, size
    # Without the case of 256 points on each side, the sizes stop at 32 and 20 points: the check warns.
    problem = load_problem(ROOT / "problems" / "pairwise-distances")
    names = [arg.name for arg in problem.spec.args]
    assert problem.validator is not None
    with recording_bounds() as recorder:
        for case in problem.hidden_cases:
            if case.name != "most_points_and_numbers":
                problem.validator(dict(zip(names, case.inputs, strict=True)), case.dtype)
    short = [key for key, bound in recorder.bounds.items() if not reach_check.approached(bound, 10.0, 1e-3)]
    assert short == ["x: the number of points n at most", "y: the number of points m at most"]
