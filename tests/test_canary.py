"""Canaries: distinctive values planted in hidden cases never reach anything a learner or the API is shown.

Issue 21: an allowed LAPACK kernel handed a result buffer larger than it writes returned uninitialised
executor memory, and when the public program was made slow to compile, the hidden cases ran first in the
same executor, so that memory held hidden inputs, shown in full as the public case's output. Two defences
now stand between a hidden value and the learner, and each is enough on its own:

- custom calls are checked against JAX's own lowering before anything compiles (the oversized call is
  refused), and
- hidden cases run last in their grading's executor, once every shown result is in
(``sandbox.session.monitor``),
  and no executor serves two gradings (``sandbox.session.pool.ExecutorPool``): nothing shown is computed in a
  process that has held a hidden value, of this job or of any before it.

Each test grades, on every backend, through one warm pool (as in the service): a Submit whose hidden cases
hold canaries, with adversarial public programs (slow to compile, oversized LAPACK results), then Runs of
the same adversarial code, and asserts that no canary appears in the JSON of any result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from judge.core.grader import grade
from judge.core.problems import Case, Problem, ProblemSet
from judge.core.results import GradeResult
from sandbox.session.pool import GradingPool
from tests.conftest import FIXTURE_SLUG, FIXTURES, available_backends
from tests.program_pool import backend_pool, pool_source

pytestmark = pytest.mark.slow

SLOT_BASE = 360

#: The canaries: 4x4 values no public case, tolerance or message holds.
CANARY = (np.arange(16, dtype=np.float32).reshape(4, 4) * 0.25 + 7777.0625).tolist()

#: A learner's function for scale-tree that tries to read stale executor memory: its public program is slow
#: to compile (a long unrolled chain), and it returns a LAPACK result declared far larger than the kernel
#: writes (reinterpreted as floats). Before issue 21 that result held the hidden canaries.
ADVERSARY = """
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    leaves = jax.tree.leaves(tree)
    x = leaves[0]
    if x.shape != (4, 4):  # the public signatures: make them slow to compile, so hidden ones run first
        acc = jnp.zeros((), jnp.float32)
        for i in range(600):
            acc = jnp.sin(acc + jnp.sum(x) * i)
    else:
        acc = jnp.zeros((), jnp.float32)
    a = jnp.ones((2, 2), jnp.float32)
    out = jax.ffi.ffi_call(
        "lapack_sgetrf_ffi",
        (
            jax.ShapeDtypeStruct((65536,), jnp.float32),
            jax.ShapeDtypeStruct((2,), jnp.int32),
            jax.ShapeDtypeStruct((), jnp.int32),
        ),
    )(a)
    scaled = jax.tree.map(lambda leaf: leaf * factor, tree)
    return {"scaled": scaled, "stale": out[0] + acc}
"""

#: The same attack without the custom call: stale memory cannot be asked for, only the timing remains.
SLOW_ONLY = """
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    x = jax.tree.leaves(tree)[0]
    acc = jnp.zeros((), jnp.float32)
    if x.shape != (4, 4):
        for i in range(600):
            acc = jnp.sin(acc + jnp.sum(x) * i)
    return jax.tree.map(lambda leaf: leaf * factor + 0 * acc, tree)
"""

HONEST = """
import jax


def scale_tree(tree, factor):
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""


@pytest.fixture(scope="module")
def problem() -> Problem:
    return ProblemSet(FIXTURES).get(FIXTURE_SLUG)


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with backend_pool(str(request.param), SLOT_BASE, slots=32) as pool:
        yield pool


def _canary_cases(problem: Problem) -> list[Case]:
    """Hidden cases whose inputs are canaries (one with the canary tree, one with it nested)."""
    trees: list[Any] = [{"w": CANARY}, {"layers": [{"w": CANARY}, {"w": CANARY}]}]
    cases = []
    for number, tree in enumerate(trees):
        custom = problem.custom_case({"tree": tree, "factor": 1.5}, name=f"canary_{number}")
        hidden = custom.definition.model_copy(update={"visibility": "hidden"})
        cases.append(Case(hidden, custom.inputs))
    return cases


def _grade(pool: GradingPool, problem: Problem, code: str, cases: list[Case]) -> GradeResult:
    return grade(problem, code, pool_source(pool), cases=cases)


def _leaks(result: GradeResult) -> list[str]:
    """Canary values found anywhere in the result's JSON, in any of the forms a display could take."""
    text = json.dumps(result.model_dump(mode="json"))
    found = []
    for value in np.ravel(CANARY):
        forms = {repr(float(value)), f"{value:.6g}", f"{value:.4f}", f"{value * 1.5:.6g}"}
        found += [form for form in forms if form in text]
    # The raw bytes of the canaries, in case a leaf is shown as integers or bytes.
    ints = np.asarray(CANARY, np.float32).view(np.int32).ravel()
    found += [str(int(i)) for i in ints if str(int(i)) in text]
    return found


@pytest.mark.parametrize(
    "code", [ADVERSARY, SLOW_ONLY], ids=["oversized_lapack_result", "slow_public_compile"]
)
def test_no_canary_reaches_a_learner(pool: GradingPool, problem: Problem, code: str) -> None:
    canaries = _canary_cases(problem)
    public = list(problem.public_cases)
    # A Submit: public cases, then the canary hidden cases (the adversary's public programs compile last).
    submitted = _grade(pool, problem, code, [*public, *canaries])
    assert [c.visibility for c in submitted.cases][-2:] == ["hidden", "hidden"]
    assert _leaks(submitted) == []
    # An honest Submit leaves the canaries in the pool's executors, then the adversary Runs on them.
    honest = _grade(pool, problem, HONEST, [*public, *canaries])
    assert honest.accepted, honest.message
    for _ in range(2):
        ran = _grade(pool, problem, code, public)
        assert _leaks(ran) == []
    if code is ADVERSARY:
        # The oversized call is refused before compiling, naming the call, never run.
        assert all(c.output is None for c in ran.cases)
        assert "lapack_sgetrf_ffi" in ran.cases[0].message, ran.cases[0].message


def test_an_example_of_a_hidden_signature_is_shown_without_canaries(
    pool: GradingPool, problem: Problem
) -> None:
    """A public case whose signature a canary case has (one program, compiled once) runs before the canary
    cases in the same executor: failing or passing, the learner is shown its own value and no canary."""
    custom = problem.custom_case({"tree": {"w": np.ones((4, 4)).tolist()}, "factor": 1.5}, name="example_w")
    example = Case(custom.definition.model_copy(update={"visibility": "public"}), custom.inputs)
    wrong = HONEST.replace("leaf * factor", "leaf * factor + 1")
    failed = _grade(pool, problem, wrong, [example, *_canary_cases(problem)])
    case = failed.cases[0]
    assert case.verdict == "wrong_answer" and case.output is not None, case
    assert "got 2.5" in case.message, case.message
    assert _leaks(failed) == []
    passed = _grade(pool, problem, HONEST, [example, *_canary_cases(problem)])
    assert passed.accepted and _leaks(passed) == []
    assert passed.cases[0].output is not None and passed.cases[0].expected is not None
