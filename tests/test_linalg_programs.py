"""Programs that call LAPACK (``det``, ``solve``, ``svd``...) run in the executor, which compiles programs
lowered in the tracer: it must register jaxlib's LAPACK kernels itself (it once died with SIGSEGV, so a
correct solution using ``jnp.linalg`` got ``runtime_error``)."""

from __future__ import annotations

import pytest

from judge.problems import ProblemSet
from judge.verdicts import Verdict
from tests.conftest import FIXTURE_SLUG, FIXTURES, Grader

pytestmark = pytest.mark.slow

#: Correct for the fixture problem: every factor below is 1 (the identity's determinant, its 2-norm and
#: the first entry of the solution of I x = e1), computed by LAPACK kernels.
LINALG = """
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    eye = jnp.eye(3, dtype=jnp.float32)
    one = jnp.linalg.det(eye) * jnp.linalg.norm(eye, 2) * jnp.linalg.solve(eye, eye[0])[0]
    return jax.tree_util.tree_map(lambda leaf: (factor * one * leaf).astype(leaf.dtype), tree)
"""


def test_a_solution_calling_lapack_is_graded_not_crashed(grade_with: Grader) -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    result = grade_with(problem, LINALG)
    assert result.verdict is Verdict.ACCEPTED, f"{result.verdict}: {result.message}"
