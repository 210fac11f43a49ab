"""The data features end to end, through the real sandbox: traced int32 scalars, static ints and tuples of
ints (``static_argnames``), int32 and bool results compared exactly, and hostile or wrong submissions that
lean on them. Each submission here is new (not a shipped solution), so the verdicts are not just the ones
``judge check`` already proves for the solution folders.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from judge.core.grader import grade
from judge.core.problems import Case, Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import GradingPool
from tests.conftest import FIXTURE_SLUG, FIXTURES, KINDS_SLUG, default_backend

pytestmark = pytest.mark.slow

_PROBLEMS = ProblemSet(FIXTURES)
#: Sandbox slots of this module's warm pool (other modules use 300, 600, 650, 700 and 800 up).
SLOT_BASE = 950


@pytest.fixture(scope="module")
def pool() -> Iterator[GradingPool]:
    backend = default_backend()
    pool = GradingPool(backend, SandboxLimits(), size=1, slot_base=SLOT_BASE, slots=16)
    try:
        yield pool
    finally:
        pool.close()
        backend.close()


def _grade(
    pool: GradingPool,
    problem: Problem,
    code: str,
    cases: Sequence[Case] | None = None,
    custom: Sequence[Case] = (),
) -> GradeResult:
    return grade(
        problem,
        code,
        lambda limits: pool.acquire(180, limits),
        cases=cases,
        custom=custom,
    )


def _some(problem: Problem, *names: str) -> list[Case]:
    wanted = set(names)
    return [c for c in problem.cases if c.name in wanted or not c.hidden]


# ------------------------------------------------------------------------------------------ the fixture

KINDS = _PROBLEMS.get(KINDS_SLUG)

#: Correct, and it raises (runtime_error) unless the arguments arrive as the statement says: a traced int32
#: scalar, hashable Python statics, int32 arrays.
PROBE = """
import jax
import jax.numpy as jnp


def shift_tokens(tokens, lengths, offset, widths, pad_id):
    assert isinstance(offset, jax.core.Tracer), type(offset)
    assert offset.dtype == jnp.int32 and offset.shape == (), (offset.dtype, offset.shape)
    assert not offset.aval.weak_type, "an int32 scalar is a real int32 array, not a weak Python int"
    assert type(widths) is tuple and all(type(w) is int for w in widths), repr(widths)
    assert type(pad_id) is int and hash(widths) == hash(tuple(widths))
    assert tokens.dtype == jnp.int32 and lengths.dtype == jnp.int32
    length = tokens.shape[1]
    width = next(w for w in widths if w >= length)
    grown = jnp.pad(tokens, ((0, 0), (0, width - length)))
    mask = jnp.arange(width)[None, :] < lengths[:, None]
    return jnp.where(mask, grown + offset, pad_id), mask
"""


def test_a_traced_int32_scalar_and_static_values_arrive_as_declared(pool: GradingPool) -> None:
    cases = _some(KINDS, "width_equals_length", "empty_rows", "many_widths")
    result = _grade(pool, KINDS, PROBE, cases)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert result.passed == result.total == len(cases)
    first = result.cases[0]  # example_1: int32 ids and a bool mask, compared exactly
    assert first.output is not None and first.expected is not None
    assert first.output.json_value == [
        [[15, 16, 17, 0], [18, 0, 0, 0]],
        [[True, True, True, False], [True, False, False, False]],
    ]
    assert first.output.json_value == first.expected.json_value


def test_a_python_if_on_the_traced_scalar_is_a_trace_error_naming_the_line(pool: GradingPool) -> None:
    code = PROBE.replace(
        "    length = tokens.shape[1]\n",
        "    length = tokens.shape[1]\n    if offset > 0:\n        tokens = tokens + 0\n",
    )
    line = code.splitlines().index("    if offset > 0:") + 1
    result = _grade(pool, KINDS, code, KINDS.public_cases)
    assert result.verdict is Verdict.TRACE_ERROR
    assert f"line {line}" in result.message and "jnp.where" in result.message


def test_branching_on_a_static_value_in_python_is_allowed(pool: GradingPool) -> None:
    # Python `if`s on the statics are fine: each value is its own trace.
    code = PROBE.replace(
        "    mask = jnp.arange(width)",
        "    if pad_id == -1 and widths == (2,):\n        grown = grown + 0\n    mask = jnp.arange(width)",
    )
    result = _grade(pool, KINDS, code, _some(KINDS, "example_2_lookalike", "widest"))
    assert result.verdict is Verdict.ACCEPTED, result.message


def test_a_run_panel_int_reaches_the_function_exactly(pool: GradingPool) -> None:
    custom = KINDS.custom_case({"tokens": [[1, 2]], "lengths": [2], "offset": 15, "widths": [2], "pad_id": 0})
    result = _grade(pool, KINDS, PROBE, [], [custom])
    (case,) = result.cases
    assert case.verdict is Verdict.ACCEPTED and case.visibility == "custom"
    assert case.output is not None and case.output.json_value == [[[16, 17]], [[True, True]]]


def test_jax_debug_print_of_the_int_scalar_shows_for_public_cases(pool: GradingPool) -> None:
    code = PROBE.replace("    length = ", '    jax.debug.print("offset {}", offset)\n    length = ')
    result = _grade(pool, KINDS, code, KINDS.public_cases)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert "offset 10" in result.stdout and "offset -1" in result.stdout


def test_each_static_value_compiles_on_its_own(pool: GradingPool) -> None:
    # The same tokens with three width tuples: three signatures, three output widths.
    base = {"tokens": [[1, 2]], "lengths": [2], "offset": 0, "pad_id": 0}
    custom = [
        KINDS.custom_case({**base, "widths": widths}, f"w{i}") for i, widths in enumerate([[4], [3, 8], [2]])
    ]
    result = _grade(pool, KINDS, PROBE, [], custom)
    assert result.verdict is Verdict.ACCEPTED, result.message
    widths = [len(c.output.json_value[0][0]) for c in result.cases if c.output is not None]
    assert widths == [4, 3, 2]


def test_a_width_remembered_across_calls_is_wrong(pool: GradingPool) -> None:
    # Keeps the first width it saw in a global: the next static value gets a stale width.
    code = PROBE.replace(
        "    width = next(w for w in widths if w >= length)\n",
        "    if not _SEEN:\n"
        "        _SEEN.append(next(w for w in widths if w >= length))\n"
        "    width = _SEEN[0]\n",
    ).replace("def shift_tokens", "_SEEN = []\n\n\ndef shift_tokens")
    result = _grade(pool, KINDS, code, _some(KINDS, "width_equals_length"))
    assert result.verdict is Verdict.WRONG_ANSWER
    assert "shape" in result.message


def test_a_mask_of_zeros_and_ones_is_a_dtype_mismatch_on_hidden_cases_too(pool: GradingPool) -> None:
    code = PROBE.replace("grown + offset, pad_id), mask", "grown + offset, pad_id), mask * 1")
    assert code != PROBE
    result = _grade(pool, KINDS, code, _some(KINDS, "empty_rows"))
    assert result.verdict is Verdict.WRONG_ANSWER
    hidden = next(c for c in result.cases if c.visibility == "hidden")
    assert hidden.verdict is Verdict.WRONG_ANSWER and "mask" in hidden.message and "bool" in hidden.message
    assert hidden.output is None and hidden.expected is None


def test_a_submission_that_fails_on_one_static_value_fails_only_there(pool: GradingPool) -> None:
    # widths[1] does not exist when widths has one item (example 2): an IndexError there only.
    code = PROBE.replace("next(w for w in widths if w >= length)", "widths[1]")
    result = _grade(pool, KINDS, code, KINDS.public_cases)
    verdicts = {c.name: c.verdict for c in result.cases}
    assert verdicts["example_1"] is Verdict.ACCEPTED
    assert verdicts["example_2"] is Verdict.RUNTIME_ERROR
    assert result.verdict is Verdict.RUNTIME_ERROR


# ------------------------------------------------------------------------------------------ non-finite values


def test_a_division_by_zero_in_the_program_is_a_wrong_answer_not_a_crash(pool: GradingPool) -> None:
    # Infinities and NaNs computed by the program are wrong values, named by their leaf.
    scale = _PROBLEMS.get(FIXTURE_SLUG)
    code = (
        "import jax\n\n\ndef scale_tree(tree, factor):\n"
        "    return jax.tree.map(lambda x: x * factor / 0.0, tree)\n"
    )
    result = _grade(pool, scale, code, scale.public_cases)
    assert result.verdict is Verdict.WRONG_ANSWER
    assert result.cases[0].verdict is Verdict.WRONG_ANSWER
    assert result.cases[0].message.startswith("b: got inf")
