"""The ``forbid_ops`` rule graded on every sandbox backend this host offers: a program without the forbidden
op is accepted, and programs that hold it (directly, or through a library call that lowers to it) are
refused with reason ``rule`` and the rule's words, while a program with the right values is still refused.

The package is written by the test into a temporary folder (``_write_package``), so the suite keeps knowing
no problem of the catalog.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.core.grader import grade
from judge.core.problems import Problem, load_problem
from judge.core.results import GradeResult
from judge.core.spec import ProblemSpec
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.compiled_rules import ForbidOps, rules_for
from sandbox.session.pool import GradingPool
from tests.conftest import available_backends
from tests.program_pool import per_backend_pool, pool_source

pytestmark = pytest.mark.xdist_group("program_features")

#: Tracer slots of this module's pools: 1760 to 1799, 12 per backend.
SLOT_BASE = 1760
SLOTS_PER_BACKEND = 12

TOML = """
slug = "largest-without-sort"
title = "Largest Entry Without Sorting"
difficulty = "easy"
function = "largest"
reference = "largest_without_sort"

[[args]]
name = "x"
kind = "array"
ndim = [1]
description = "a vector"

[output]
kind = "pytree"

[[rules]]
kind = "forbid_ops"
asks = "find the largest entry with a reduction"
ops = ["stablehlo.sort"]
what = "a sort"
"""

REFERENCE = '''"""The largest entry of ``x``, by a max reduction."""
import jax.numpy as jnp


def largest(x):
    return jnp.max(x)
'''

#: Right values, no sort: a reduction written another way.
RIGHT_REDUCE = """
import jax

def largest(x):
    return jax.lax.reduce(x, -jax.numpy.inf, jax.lax.max, (0,))
"""
#: Right values through the forbidden op: sort, then the last entry.
SORTS = """
import jax.numpy as jnp

def largest(x):
    return jnp.sort(x)[-1]
"""
#: Right values through a library call that sorts under the hood (argsort lowers to stablehlo.sort).
ARGSORTS = """
import jax.numpy as jnp

def largest(x):
    return x[jnp.argsort(x)[-1]]
"""


def _case(name: str, visibility: str, x: list[float]) -> dict[str, Any]:
    return {"name": name, "visibility": visibility, "dtype": "float32", "args": {"x": x}}


def _write_package(folder: Path) -> Problem:
    spec = ProblemSpec.model_validate(tomllib.loads(TOML))
    root = folder / "problems" / spec.slug
    (root / "cases").mkdir(parents=True)
    (root / "problem.toml").write_text(TOML)
    (root / "statement.md").write_text(
        f"# {spec.title}\n\n{{{{examples}}}}\n\n## Constraints\n\n{{{{rules}}}}\n"
    )
    (root / "starter.py").write_text("def largest(x):\n    ...\n")
    (root / "validator.py").write_text("def validate(args, dtype):\n    return []\n")
    public = [_case("example", "public", [1.0, 5.0, -2.0])]
    hidden = [_case("negative", "hidden", [-3.0, -1.5, -7.0, -2.0]), _case("one", "hidden", [4.25])]
    (root / "cases" / "public.json").write_text(json.dumps({"cases": public}))
    (root / "cases" / "hidden.json").write_text(json.dumps({"cases": hidden}))
    (folder / "reference").mkdir(exist_ok=True)
    (folder / "reference" / f"{spec.reference}.py").write_text(REFERENCE)
    return load_problem(root)


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    return _write_package(tmp_path_factory.mktemp("forbid_ops"))


def test_the_problem_gets_its_forbid_ops_rule(problem: Problem) -> None:
    forbid = [rule for rule in rules_for(problem) if isinstance(rule, ForbidOps)]
    assert [rule.ops for rule in forbid] == [frozenset({"stablehlo.sort"})]


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with per_backend_pool(str(request.param), SLOT_BASE, SLOTS_PER_BACKEND) as pool:
        yield pool


def _grade(pool: GradingPool, problem: Problem, code: str) -> GradeResult:
    return grade(problem, code, pool_source(pool), feedback=False)


@pytest.mark.slow
def test_forbid_ops_accepts_a_program_without_the_op(pool: GradingPool, problem: Problem) -> None:
    for code in (REFERENCE, RIGHT_REDUCE):
        result = _grade(pool, problem, code)
        assert result.verdict is Verdict.ACCEPTED, result.message


@pytest.mark.slow
def test_forbid_ops_refuses_a_program_with_the_op(pool: GradingPool, problem: Problem) -> None:
    for code in (SORTS, ARGSORTS):
        result = _grade(pool, problem, code)
        assert result.verdict is Verdict.WRONG_ANSWER, (code, result.message)
        # Refused by the rule, though every value is right.
        assert {c.reason for c in result.cases} == {WrongAnswerReason.RULE}, code
        assert "stablehlo.sort" in result.message, result.message
        assert "find the largest entry with a reduction, without a sort" in result.message, result.message
