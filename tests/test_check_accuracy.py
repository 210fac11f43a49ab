"""The ``accuracy`` check: the reference measured against its own float64 evaluation
(``judge.check.float64_run``) on every case and EDGE input, in shares of the tolerance."""

from __future__ import annotations

import json
import re
import shutil
import types
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from judge.check import accuracy_check, cases_check, reference_check, spec_check
from judge.check.context import CheckContext
from judge.check.diagnostics import Diagnostics, Severity
from judge.check.float64_run import widen_inputs, widen_module
from judge.core.grader import grade
from judge.core.problems import Problem, ProblemSet, load_problem
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict
from sandbox.backends.base import Backend
from tests.conftest import FIXTURES, ROOT

#: ``leaf * factor`` through a float32 ``1 - 0.999**t`` (t = 1, traced so nothing folds in Python): 1.3e-5
#: relative off in float32, exact to float64 precision in the float64 path.
INACCURATE = """
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    t = jnp.ones((), jnp.float32)
    correction = (1.0 - 0.999**t) / 0.001
    return jax.tree.map(lambda x: (x.astype(jnp.float32) * factor * correction).astype(x.dtype), tree)
"""


def _copy(tmp_path: Path, slug: str) -> Path:
    root = tmp_path / "problems" / slug
    shutil.copytree(FIXTURES / slug, root)
    shutil.copytree(FIXTURES.parent / "reference", tmp_path / "reference")
    return root


def _run(root: Path) -> CheckContext:
    ctx = CheckContext(
        root=root, diag=Diagnostics(problem=root.name, base=root.parent.parent), separate_runs=False
    )
    for name, step in (
        (spec_check.NAME, spec_check.check),
        (cases_check.NAME, cases_check.check),
        (reference_check.NAME, reference_check.check),
        (accuracy_check.NAME, accuracy_check.check),
    ):
        ctx.diag.check = name
        step(ctx)
    return ctx


def _accuracy_errors(ctx: CheckContext) -> list[str]:
    return [f.message for f in ctx.diag.of(accuracy_check.NAME) if f.severity is Severity.ERROR]


def test_the_float64_path_maps_narrow_floats_and_widens_inputs() -> None:
    module = types.ModuleType("m")
    module.jnp = jnp  # type: ignore[attr-defined]
    module.F32 = jnp.float32  # type: ignore[attr-defined]
    module.other = 3  # type: ignore[attr-defined]
    widen_module(module)
    assert module.jnp.float32 is jnp.float64 and module.jnp.bfloat16 is jnp.float64
    assert module.jnp.sqrt is jnp.sqrt and module.F32 is jnp.float64
    assert module.other == 3
    tree = widen_inputs({"w": [np.ones(2, np.float32), np.array([1, 2], np.int32)], "s": 0.1})
    assert tree["w"][0].dtype == np.float64 and tree["w"][1].dtype == np.int32
    assert tree["s"] == float(np.float32(0.1))  # a number is what a traced program receives


def test_an_accurate_reference_passes_and_notes_its_share(tmp_path: Path) -> None:
    ctx = _run(_copy(tmp_path, "scale-tree"))
    assert _accuracy_errors(ctx) == []
    notes = [n for c, n in ctx.diag.notes if c == accuracy_check.NAME]
    assert any(n.startswith("float32: the reference's own error is at most") for n in notes), notes
    assert any(n.startswith("bfloat16:") for n in notes), notes


def test_a_reference_less_accurate_than_float64_allows_fails_naming_case_leaf_and_fix(tmp_path: Path) -> None:
    root = _copy(tmp_path, "scale-tree")
    (tmp_path / "reference" / "scale_tree.py").write_text(INACCURATE)
    errors = _accuracy_errors(_run(root))
    assert len(errors) == 1, errors
    assert "the reference's own error uses" in errors[0] and "float32 tolerance" in errors[0]
    assert "[accuracy] in problem.toml" in errors[0] and "expm1/log1p" in errors[0]


def test_a_problem_may_state_a_larger_share_but_not_beyond_the_tolerance(tmp_path: Path) -> None:
    root = _copy(tmp_path, "scale-tree")
    (tmp_path / "reference" / "scale_tree.py").write_text(INACCURATE)
    spec = root / "problem.toml"
    spec.write_text(spec.read_text() + "\n[accuracy]\nshare = 1.0\n")
    errors = _accuracy_errors(_run(root))
    assert errors and "the limit is 1x" in errors[0]  # 1.3e-5 relative is over rtol 1e-5 itself


@pytest.mark.parametrize("value", [0.0, 1.5])
def test_shares_outside_zero_to_one_are_refused(value: float) -> None:
    from pydantic import ValidationError

    from judge.core.spec import AccuracySpec

    with pytest.raises(ValidationError):
        AccuracySpec(shares={"bfloat16": value})


#: adamw's reference before the accuracy check (issue 27, class 4): the plain float32 bias corrections.
OLD_ADAMW_CORRECTIONS = "    c1 = 1.0 - B1**t\n    c2 = 1.0 - B2**t\n"
ADAMW_CORRECTIONS = (
    "    c1 = -jnp.expm1(t * jnp.log1p(B1 - 1.0))\n    c2 = -jnp.expm1(t * jnp.log1p(B2 - 1.0))\n"
)
#: The hidden cases where the plain corrections use more than the share.
#: (mixed_strong_decay exceeded the share too while the bound was ``rtol |expected|``; its parameter nearly
#: cancels, and with the order-proof magnitudes the old reference's error there is within its share.)
ADAMW_CASES = ("tiny_moments_step_3",)


def _adamw_copy(tmp_path: Path, *, old: bool) -> Path:
    """The shipped adamw package with the two hidden cases where the plain corrections use more than the
    share (the others cost time and say nothing here), its reference as shipped or with those corrections."""
    root = tmp_path / "problems" / "adamw"
    shutil.copytree(ROOT / "problems" / "adamw", root, ignore=shutil.ignore_patterns("solutions"))
    hidden = root / "cases" / "hidden.json"
    cases = json.loads(hidden.read_text())["cases"]
    hidden.write_text(json.dumps({"cases": [c for c in cases if c["name"] in ADAMW_CASES]}))
    source = (ROOT / "reference" / "adamw.py").read_text()
    assert ADAMW_CORRECTIONS in source
    if old:
        source = source.replace(ADAMW_CORRECTIONS, OLD_ADAMW_CORRECTIONS)
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "adamw.py").write_text(source)
    return root


def test_adamw_old_reference_fails_the_accuracy_check_on_a_hidden_case_the_shipped_one_passes(
    tmp_path: Path,
) -> None:
    """The class-4 demonstration on a shipped problem: adamw's old reference (float32 ``1 - 0.999**t``)
    uses more than its share (0.25x) of the tolerance on two hidden cases (tiny_moments_step_3: 0.44x) and
    on the EDGE input where the step nearly cancels the parameter (0.315x: the bound there is order-proof,
    ``[compare] magnitude``, rtol of ``|p| + lr |update|``, 6.6x of the plain ``rtol |p - lr update|``),
    where it would reject a correct solution more accurate than itself; the shipped expm1/log1p one passes
    them all."""
    errors = _accuracy_errors(_run(_adamw_copy(tmp_path / "old", old=True)))
    (old,) = [e for e in errors if "float32 tolerance" in e]
    assert "uses 0.315x the float32 tolerance on validator.py EDGE[1] (the step nearly cancels" in old, old
    assert all(f"case {name}" in old for name in ADAMW_CASES), old
    assert _accuracy_errors(_run(_adamw_copy(tmp_path / "new", old=False))) == []


#: pairwise-distances' reference written as the classic expansion ``|a|^2 + |b|^2 - 2 a.b`` (clamped at 0),
#: the form many references and libraries use: the same formula as the shipped wrong answer
#: ``expansion_clamped.py``, so that solution matches it on every case.
EXPANSION_REFERENCE = '''"""pairwise-distances by the expansion, clamped (it cancels)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp


def pairwise_distances(x: Any, y: Any) -> Any:
    xf, yf = x.astype(jnp.float32), y.astype(jnp.float32)
    sq = jnp.sum(xf * xf, axis=1)[:, None] + jnp.sum(yf * yf, axis=1)[None, :] - 2.0 * xf @ yf.T
    return jnp.sqrt(jnp.maximum(sq, 0.0)).astype(x.dtype)
'''

PAIRWISE = ROOT / "problems" / "pairwise-distances"
EXPANSION_CLAMPED = PAIRWISE / "solutions" / "wrong_answer" / "expansion_clamped.py"
#: The hidden cases that reject ``expansion_clamped.py`` against the shipped reference, in case order: points
#: far from the origin and close together (or identical, or tiny distances apart), where the expansion
#: cancels; each one also where the expansion-form reference uses more than its share of the tolerance.
EXPANSION_KILLS = (
    "copies_of_x_in_y",
    "copies_decimal_points",
    "far_from_origin",
    "far_from_origin_negative",
    "tiny_distances",
    "tiny_distances_cluster",
    "most_points_and_numbers",
)


def _pairwise_copy(tmp_path: Path, *, expansion: bool) -> Path:
    """The shipped pairwise-distances package (no solutions), its reference as shipped or as the expansion."""
    root = tmp_path / "problems" / "pairwise-distances"
    shutil.copytree(PAIRWISE, root, ignore=shutil.ignore_patterns("solutions"))
    (tmp_path / "reference").mkdir()
    source = (ROOT / "reference" / "pairwise_distances.py").read_text()
    (tmp_path / "reference" / "pairwise_distances.py").write_text(
        EXPANSION_REFERENCE if expansion else source
    )
    return root


def _grade(backend: Backend, problem: Problem, solution: Path) -> GradeResult:
    """``solution`` graded on every case as ``judge check`` grades it (hidden cases' error ratios kept)."""
    return grade(problem, solution.read_text(), lambda limits, **_: backend.start_pair(limits), author=True)


def _hidden_rejections(result: GradeResult) -> list[str]:
    return [c.name for c in result.cases if c.visibility == "hidden" and c.verdict is not Verdict.ACCEPTED]


def test_pairwise_expansion_reference_fails_the_accuracy_check_on_the_cases_that_kill_expansion_clamped(
    tmp_path: Path,
) -> None:
    """Class 4 (references as accurate as the best solution), pairwise-distances: a reference written as
    the expansion uses about 6e5x the float32 tolerance (limit 0.25x) on far_from_origin, where it gives
    0.707 for a distance of 0.0103, and more than its share on exactly the seven hidden cases that reject
    ``expansion_clamped.py`` today; the shipped reference, from the difference, passes."""
    errors = _accuracy_errors(_run(_pairwise_copy(tmp_path / "expansion", expansion=True)))
    (float32,) = [e for e in errors if "float32 tolerance" in e]
    share = re.search(r"uses ([0-9.e+]+)x the float32 tolerance on case far_from_origin at output", float32)
    assert share is not None and float(share.group(1)) > 1e5, float32
    assert "the limit is 0.25x" in float32, float32
    named = "; ".join(f"case {name}" for name in EXPANSION_KILLS[:5])
    assert f"exceeded on {len(EXPANSION_KILLS)} inputs ({named} and 2 more)" in float32, float32
    assert _accuracy_errors(_run(_pairwise_copy(tmp_path / "shipped", expansion=False))) == []


@pytest.mark.slow
def test_expansion_clamped_is_killed_by_the_shipped_reference_and_matches_an_expansion_reference(
    tmp_path: Path, backend: Backend
) -> None:
    """What the accuracy check guarantees, on a shipped wrong answer: against the shipped reference
    ``expansion_clamped.py`` is rejected by seven hidden cases, each well outside the float32 tolerance
    (10x or more, the margins check's 'strong' kill); with the expansion-form reference it passes every
    case (it is that reference's own formula), so it would be accepted. A correct solution, from the
    difference, is then the one rejected, on those same seven cases: what the accuracy check's message
    says. Without the accuracy check, only an accurate accepted solution shipped beside the reference
    would show it, and only where its error exceeds the whole tolerance; the check needs none."""
    problem = ProblemSet(ROOT / "problems").get("pairwise-distances")
    shipped = _grade(backend, problem, EXPANSION_CLAMPED)
    assert shipped.verdict is Verdict.WRONG_ANSWER, shipped.message
    assert _hidden_rejections(shipped) == list(EXPANSION_KILLS)
    dtypes = {c.name: c.dtype for c in problem.cases}
    assert {dtypes[name] for name in EXPANSION_KILLS} == {"float32"}
    well_outside = problem.spec.compare.tolerance["float32"].well_outside
    ratios = {c.name: c.error_ratio for c in shipped.cases if c.name in EXPANSION_KILLS}
    assert all(r is not None and r >= well_outside for r in ratios.values()), ratios

    expansion = load_problem(_pairwise_copy(tmp_path, expansion=True))
    graded = _grade(backend, expansion, EXPANSION_CLAMPED)
    assert graded.verdict is Verdict.ACCEPTED, graded.message
    assert graded.passed == graded.total, [(c.name, c.verdict) for c in graded.cases]
    correct = _grade(backend, expansion, PAIRWISE / "solutions" / "accepted" / "broadcast_linalg_norm.py")
    assert _hidden_rejections(correct) == list(EXPANSION_KILLS)
