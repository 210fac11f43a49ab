"""The ``accuracy`` check: the reference measured against its own float64 evaluation
(``judge.check.float64_run``) on every case and EDGE input, in shares of the tolerance."""

from __future__ import annotations

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
from tests.conftest import FIXTURES

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

    from judge.spec import AccuracySpec

    with pytest.raises(ValidationError):
        AccuracySpec(shares={"bfloat16": value})
