"""Static bool and str arguments, and the in-place update rule (donated arguments).

The spec, the Run-panel conversion (malformed inputs refused naming the JSON path), the session plan (each
static value its own signature; the donated leaves' indices), the statement, the rule object, and gradings
on every sandbox backend this host offers: a static bool and str handled right and wrong, and an in-place
cache update accepted while lookalikes that rebuild or loop over the cache are refused by the rule. The
packages are written by the tests into a temporary folder (``_write_package``), so the suite keeps knowing
no problem of the catalog.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.authoring.statement import render_rules
from judge.core.errors import InputError
from judge.core.grader import build_session, grade
from judge.core.problems import Problem, load_problem
from judge.core.results import GradeResult
from judge.core.spec import ArgSpec, ProblemSpec
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.compiled_rules import ProgramSummary, UpdateInPlace, rules_for
from sandbox.session.pool import GradingPool
from tests.conftest import available_backends
from tests.program_pool import per_backend_pool, pool_source

#: Tracer slots of this module's pools: 1620 to 1659, 12 per backend.
SLOT_BASE = 1620
SLOTS_PER_BACKEND = 12

PICK_TOML = """
slug = "pick-reduce"
title = "Pick a Reduction"
difficulty = "easy"
function = "pick_reduce"
reference = "pick_reduce"

[[args]]
name = "x"
kind = "array"
ndim = [1, 2]

[[args]]
name = "mode"
kind = "str"
choices = ["sum", "max"]

[[args]]
name = "keepdims"
kind = "bool"

[output]
kind = "pytree"
"""

PICK_REFERENCE = '''"""Reduce the last axis with the named reduction."""

import jax.numpy as jnp


def pick_reduce(x, mode, keepdims):
    reduce = jnp.sum if mode == "sum" else jnp.max
    return reduce(x, axis=-1, keepdims=keepdims)
'''

CACHE_TOML = """
slug = "cache-write"
title = "Write a Cache Row"
difficulty = "easy"
function = "cache_write"
reference = "cache_write"

[[args]]
name = "cache"
kind = "array"
ndim = [3]

[[args]]
name = "row"
kind = "array"
ndim = [2]

[[args]]
name = "pos"
kind = "array"
dtype = "int32"
ndim = [0]

[output]
kind = "pytree"

[[rules]]
kind = "update_in_place"
asks = "write the new row into the cache in place"
donate = ["cache"]
"""

CACHE_REFERENCE = '''"""Write ``row`` at position ``pos`` of ``cache``."""


def cache_write(cache, row, pos):
    return cache.at[pos].set(row)
'''


def _case(name: str, visibility: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "visibility": visibility, "dtype": "float32", "args": args}


def _pick_cases() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    public = [_case("example", "public", {"x": [[1.0, 5.0], [2.0, -3.0]], "mode": "sum", "keepdims": True})]
    hidden = [
        _case("sum_flat", "hidden", {"x": [[1.5, 2.0, -4.0]], "mode": "sum", "keepdims": False}),
        _case("max_kept", "hidden", {"x": [[1.0, 7.0], [-2.0, -1.0]], "mode": "max", "keepdims": True}),
        _case("max_vector", "hidden", {"x": [3.0, -1.0, 2.5], "mode": "max", "keepdims": False}),
    ]
    return public, hidden


def _cache_cases() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def cache(rows: int, shift: float) -> list[Any]:
        return [
            [[shift + r + 0.25 * h + 0.0625 * d for d in range(4)] for h in range(2)] for r in range(rows)
        ]

    row = [[9.0, 8.0, 7.0, 6.0], [5.0, 4.0, 3.0, 2.0]]
    public = [_case("example", "public", {"cache": cache(16, 0.0), "row": row, "pos": 3})]
    hidden = [
        _case("first", "hidden", {"cache": cache(32, 1.0), "row": row, "pos": 0}),
        _case("last", "hidden", {"cache": cache(32, -2.0), "row": row, "pos": 31}),
    ]
    return public, hidden


def _write_package(
    folder: Path, toml: str, reference: str, cases: tuple[list[dict[str, Any]], list[dict[str, Any]]]
) -> Problem:
    spec = ProblemSpec.model_validate(__import__("tomllib").loads(toml))
    root = folder / "problems" / spec.slug
    (root / "cases").mkdir(parents=True)
    (root / "problem.toml").write_text(toml)
    (root / "statement.md").write_text(
        f"# {spec.title}\n\n{{{{examples}}}}\n\n## Constraints\n\n{{{{rules}}}}\n"
    )
    (root / "starter.py").write_text(
        f"def {spec.function}({', '.join(a.name for a in spec.args)}):\n    ...\n"
    )
    (root / "validator.py").write_text("def validate(args, dtype):\n    return []\n")
    public, hidden = cases
    (root / "cases" / "public.json").write_text(json.dumps({"cases": public}))
    (root / "cases" / "hidden.json").write_text(json.dumps({"cases": hidden}))
    (folder / "reference").mkdir(exist_ok=True)
    (folder / "reference" / f"{spec.reference}.py").write_text(reference)
    return load_problem(root)


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Problem]:
    folder = tmp_path_factory.mktemp("static_donation")
    return {
        "pick": _write_package(folder, PICK_TOML, PICK_REFERENCE, _pick_cases()),
        "cache": _write_package(folder, CACHE_TOML, CACHE_REFERENCE, _cache_cases()),
    }


# ------------------------------------------------------------------------------------- spec


def test_bool_and_str_arguments_are_static_and_str_ones_name_their_choices() -> None:
    flag = ArgSpec.model_validate({"name": "flag", "kind": "bool"})
    mode = ArgSpec.model_validate({"name": "mode", "kind": "str", "choices": ["sum", "max"]})
    assert flag.static and mode.static
    assert flag.accepts == ("boolean",) and mode.accepts == ("string",)
    assert mode.describe_kind() == "a Python str (static), one of 'sum', 'max'"


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ({"name": "m", "kind": "str"}, "needs choices"),
        ({"name": "m", "kind": "str", "choices": ["a", "a"]}, "repeat"),
        ({"name": "b", "kind": "bool", "traced": True}, "kind 'array' with dtype 'bool'"),
        ({"name": "b", "kind": "bool", "choices": ["yes"]}, "only for function arguments and str"),
        ({"name": "m", "kind": "str", "choices": ["two words"]}, "pattern"),
    ],
)
def test_malformed_static_arguments_are_refused(arg: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        ArgSpec.model_validate(arg)


@pytest.mark.parametrize(
    ("donate", "words"),
    [(["missing"], "not an argument"), (["cache", "cache"], "repeats"), ([], "at least 1")],
)
def test_an_in_place_rule_must_donate_traced_arguments(
    packages: dict[str, Problem], donate: list[str], words: str
) -> None:
    base = packages["cache"].spec.model_dump()
    rule = {"kind": "update_in_place", "asks": "x", "donate": donate}
    with pytest.raises(ValidationError, match=words):
        ProblemSpec.model_validate({**base, "rules": [rule]})


def test_a_static_argument_cannot_be_donated(packages: dict[str, Problem]) -> None:
    base = packages["pick"].spec.model_dump()
    rule = {"kind": "update_in_place", "asks": "x", "donate": ["mode"]}
    with pytest.raises(ValidationError, match="not a traced array or pytree argument"):
        ProblemSpec.model_validate({**base, "rules": [rule]})


# ------------------------------------------------------------------------------------- conversion and plan


def test_run_inputs_of_static_kinds_arrive_as_python_values(packages: dict[str, Problem]) -> None:
    case = packages["pick"].custom_case({"x": [1.0, 2.0], "mode": "max", "keepdims": False})
    assert case.inputs[1] == "max" and case.inputs[2] is False


@pytest.mark.parametrize(
    ("changed", "path", "reason"),
    [
        ({"keepdims": 1}, "keepdims", "expected true or false, got a number"),
        ({"keepdims": "true"}, "keepdims", "expected true or false, got a string"),
        ({"mode": "median"}, "mode", "'median' is not one of 'sum', 'max'"),
        ({"mode": ["sum"]}, "mode", "expected a string (one of 'sum', 'max'), got an array"),
    ],
)
def test_malformed_run_inputs_are_refused_naming_the_path(
    packages: dict[str, Problem], changed: dict[str, Any], path: str, reason: str
) -> None:
    with pytest.raises(InputError) as caught:
        packages["pick"].custom_case({"x": [1.0, 2.0], "mode": "sum", "keepdims": True, **changed})
    assert caught.value.path == path
    assert reason in caught.value.reason


def test_each_static_value_is_its_own_signature(packages: dict[str, Problem]) -> None:
    problem = packages["pick"]
    cases = list(problem.cases)
    job = build_session(problem, "", cases, [c.hidden for c in cases], 1 << 20)
    statics = [(sig.args[1], sig.args[2]) for sig in job.sigs]
    assert ({"static": "sum"}, {"static": True}) in statics
    assert ({"static": "max"}, {"static": False}) in statics
    assert len(job.sigs) == 4 and all(sig.donate == () for sig in job.sigs)


def test_the_plan_donates_the_leaves_of_the_declared_arguments(packages: dict[str, Problem]) -> None:
    problem = packages["cache"]
    cases = list(problem.cases)
    job = build_session(problem, "", cases, [c.hidden for c in cases], 1 << 20)
    assert {sig.donate for sig in job.sigs} == {(0,)}


def test_the_statement_states_static_kinds_and_donation(packages: dict[str, Problem]) -> None:
    pick = render_rules(packages["pick"].spec)
    assert '`mode` is a Python str, one of `"sum"`, `"max"`' in pick
    assert "`keepdims` is a Python bool" in pick
    cache = render_rules(packages["cache"].spec)
    assert 'donate_argnames=("cache",)' in cache and "at most 0.5 times the bytes of `cache`" in cache


# ------------------------------------------------------------------------------------- the rule


IN_PLACE = UpdateInPlace("write the row in place", ("cache",), 0.5)
DONATED = {"donated_bytes": 8192, "aliased_bytes": 8192}


@pytest.mark.parametrize(
    ("summary", "words"),
    [
        (ProgramSummary(bytes_accessed=438.0, donation=DONATED), None),
        (ProgramSummary(bytes_accessed=16516.0, donation=DONATED), "reads and writes 2 times the bytes"),
        (
            ProgramSummary(bytes_accessed=438.0, donation={"donated_bytes": 8192, "aliased_bytes": 0}),
            "does not reuse the donated buffers",
        ),
        (ProgramSummary(bytes_accessed=438.0), "could not see"),
        (ProgramSummary(bytes_accessed=None, donation=DONATED), "could not see"),
        (ProgramSummary(bytes_accessed=438.0, donation={"donated_bytes": 8192, "aliased_bytes": -1}), "see"),
        (
            ProgramSummary(ops={"stablehlo.while": 1}, bytes_accessed=807.0, donation=DONATED),
            "your program has a loop",
        ),
        (
            ProgramSummary(custom_calls=("lapack_sgesdd_ffi",), bytes_accessed=1.0, donation=DONATED),
            "custom call (lapack_sgesdd_ffi)",
        ),
    ],
)
def test_the_in_place_rule_decides_from_the_compiled_program(
    summary: ProgramSummary, words: str | None
) -> None:
    message = IN_PLACE.check(summary)
    if words is None:
        assert message is None
    else:
        assert message is not None and words in message
        assert message.startswith("this problem asks you to write the row in place")


def test_a_problem_gets_its_in_place_rule(packages: dict[str, Problem]) -> None:
    assert any(isinstance(rule, UpdateInPlace) for rule in rules_for(packages["cache"]))
    assert not any(isinstance(rule, UpdateInPlace) for rule in rules_for(packages["pick"]))


# ------------------------------------------------------------------------------------- in the sandbox


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with per_backend_pool(str(request.param), SLOT_BASE, SLOTS_PER_BACKEND) as pool:
        yield pool


def _grade(pool: GradingPool, problem: Problem, code: str) -> GradeResult:
    return grade(problem, code, pool_source(pool), feedback=False)


PICK_RIGHT = """
import jax.numpy as jnp

def pick_reduce(x, mode, keepdims):
    if mode == "max":
        out = jnp.max(x, axis=-1)
    else:
        out = jnp.sum(x, axis=-1)
    return out[..., None] if keepdims else out
"""
#: Ignores keepdims (always drops the axis).
PICK_WRONG_BOOL = """
import jax.numpy as jnp

def pick_reduce(x, mode, keepdims):
    return jnp.sum(x, axis=-1) if mode == "sum" else jnp.max(x, axis=-1)
"""
#: Reads the choice the wrong way round.
PICK_WRONG_CHOICE = """
import jax.numpy as jnp

def pick_reduce(x, mode, keepdims):
    reduce = jnp.max if mode == "sum" else jnp.sum
    return reduce(x, axis=-1, keepdims=keepdims)
"""


@pytest.mark.slow
def test_static_bool_and_str_arguments_graded(pool: GradingPool, packages: dict[str, Problem]) -> None:
    problem = packages["pick"]
    assert _grade(pool, problem, PICK_RIGHT).verdict is Verdict.ACCEPTED
    wrong_bool = _grade(pool, problem, PICK_WRONG_BOOL)
    assert wrong_bool.verdict is Verdict.WRONG_ANSWER
    # The example keeps the axis; the one case with keepdims=False and a matrix is right by accident.
    assert [c.verdict for c in wrong_bool.cases].count(Verdict.ACCEPTED) == 2
    wrong_choice = _grade(pool, problem, PICK_WRONG_CHOICE)
    assert wrong_choice.verdict is Verdict.WRONG_ANSWER
    assert all(c.verdict is Verdict.WRONG_ANSWER for c in wrong_choice.cases)


CACHE_DUS = """
import jax

def cache_write(cache, row, pos):
    return jax.lax.dynamic_update_slice(cache, row[None], (pos, 0, 0))
"""
CACHE_WHERE = """
import jax.numpy as jnp

def cache_write(cache, row, pos):
    hit = jnp.arange(cache.shape[0]) == pos
    return jnp.where(hit[:, None, None], row[None], cache)
"""
CACHE_ONE_HOT = """
import jax
import jax.numpy as jnp

def cache_write(cache, row, pos):
    hot = jax.nn.one_hot(pos, cache.shape[0], dtype=cache.dtype)[:, None, None]
    return cache * (1 - hot) + hot * row[None]
"""
CACHE_CONCATENATE = """
import jax
import jax.numpy as jnp

def cache_write(cache, row, pos):
    padded = jnp.concatenate([cache, cache])
    shifted = jax.lax.dynamic_slice_in_dim(padded, pos + 1, cache.shape[0] - 1)
    rebuilt = jnp.concatenate([row[None], shifted])
    return jnp.roll(rebuilt, pos, axis=0)
"""
#: In place, one row per step: every row rewritten, which XLA's cost analysis would count once.
CACHE_LOOP = """
import jax
import jax.numpy as jnp

def cache_write(cache, row, pos):
    def step(i, c):
        return c.at[i].set(jnp.where(i == pos, row, c[i]))
    return jax.lax.fori_loop(0, cache.shape[0], step, cache)
"""


@pytest.mark.slow
def test_an_in_place_update_is_accepted_and_a_rebuild_refused(
    pool: GradingPool, packages: dict[str, Problem]
) -> None:
    problem = packages["cache"]
    for code in (CACHE_REFERENCE, CACHE_DUS):
        result = _grade(pool, problem, code)
        assert result.verdict is Verdict.ACCEPTED, result.message
    for code, words in (
        (CACHE_WHERE, "reads and writes"),
        (CACHE_ONE_HOT, "reads and writes"),
        (CACHE_CONCATENATE, "reads and writes"),
        (CACHE_LOOP, "your program has a loop"),
    ):
        result = _grade(pool, problem, code)
        assert result.verdict is Verdict.WRONG_ANSWER, code
        assert {c.reason for c in result.cases} == {WrongAnswerReason.RULE}, code
        assert "write the new row into the cache in place" in result.message and words in result.message
