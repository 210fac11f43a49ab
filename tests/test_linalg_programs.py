"""Programs that call LAPACK (``det``, ``solve``, ``svd``...) run in the executor, which compiles programs
lowered in the tracer: it must register jaxlib's LAPACK kernels itself (it once died with SIGSEGV, so a
correct solution using ``jnp.linalg`` got ``runtime_error``), and each LAPACK call must keep the contract
JAX's own lowering gives it (``sandbox.inside.contracts``): the linear algebra learners write, batched and
on bfloat16 inputs cast to float32, still compiles and gives the right answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from judge.core.problems import ProblemSet
from judge.core.verdicts import Verdict
from tests.conftest import FIXTURE_SLUG, FIXTURES, Grader
from tests.program_pool import pooled_grader

pytestmark = pytest.mark.slow

#: Tracer slots of the warm pool below (others are skipped while busy).
SLOT_BASE = 360

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


#: ``scale_tree`` scaled by ``one``, a product of factors that are each 1 when computed right: every
#: linear-algebra program below goes through LAPACK kernels (float32; batched; bfloat16 cast to float32).
SCALED = """
import jax
import jax.numpy as jnp

F32 = jnp.float32


def scale_tree(tree, factor):
    eye = jnp.eye(3, dtype=F32)
    one = {one}
    return jax.tree_util.tree_map(lambda leaf: (factor * one * leaf).astype(leaf.dtype), tree)
"""

ONES = {
    "svd": (
        "jnp.linalg.svd(2 * eye)[1][0] / 2"
        " * jnp.linalg.svd(jnp.ones((2, 3), F32), compute_uv=False)[0] ** 2 / 6"
    ),
    "norm 2": "jnp.linalg.norm(eye * (2 + jnp.abs(factor)), 2) / (2 + jnp.abs(factor))",
    "solve": "jnp.linalg.solve(3 * eye, 3 * eye[0])[0] * jnp.linalg.solve(eye, eye)[1, 1]",
    "det": "jnp.linalg.det(jnp.eye(5, dtype=F32) * 2) / 32",
    "eigh": "jnp.max(jnp.linalg.eigh(eye * 4)[0]) / 4",
    "qr": "jnp.abs(jnp.linalg.qr(eye * 2)[1][0, 0]) / 2",
    "cholesky": "jnp.linalg.cholesky(4 * eye)[0, 0] / 2",
    "batched": (
        "jnp.mean(jnp.linalg.norm(jnp.stack([eye, 2 * eye]), 2, axis=(1, 2))) / 1.5"
        " * jnp.linalg.solve(jnp.stack([eye, 2 * eye]), jnp.stack([eye, 2 * eye]))[1, 2, 2]"
        " * jnp.mean(jnp.linalg.eigh(jnp.stack([eye, eye]))[0])"
    ),
    "bfloat16 cast": (
        "jnp.linalg.norm(jnp.eye(3, dtype=jnp.bfloat16).astype(F32), 2)"
        " * jnp.linalg.det(jnp.eye(4, dtype=jnp.bfloat16).astype(F32))"
    ),
}


@pytest.fixture(scope="module")
def pooled() -> Iterator[Grader]:
    with pooled_grader(SLOT_BASE) as grader:
        yield grader


@pytest.mark.parametrize("name", sorted(ONES))
def test_linear_algebra_keeps_its_contract_and_its_answer(pooled: Grader, name: str) -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    result = pooled(problem, SCALED.replace("{one}", ONES[name]))
    assert result.verdict is Verdict.ACCEPTED, f"{result.verdict}: {result.message}"
