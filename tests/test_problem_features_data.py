"""The data features end to end, through the real sandbox: traced int32 scalars, static ints and tuples of
ints (``static_argnames``), int32 and bool results compared exactly, and hostile or wrong submissions that
lean on them. Each submission here is new (not a shipped solution), so the verdicts are not just the ones
``judge check`` already proves for the solution folders.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from judge.grader import grade
from judge.problems import Case, Problem, ProblemSet
from judge.results import GradeResult
from judge.verdicts import Verdict
from sandbox.limits import SandboxLimits
from sandbox.pool import GradingPool
from tests.conftest import ROOT, default_backend

pytestmark = pytest.mark.slow

_PROBLEMS = ProblemSet(ROOT / "problems")
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
    return grade(problem, code, lambda limits: pool.acquire(180, limits), cases=cases, custom=custom)


def _some(problem: Problem, *names: str) -> list[Case]:
    wanted = set(names)
    return [c for c in problem.cases if c.name in wanted or not c.hidden]


# ------------------------------------------------------------------------------------------ lr-schedule

LR = _PROBLEMS.get("lr-schedule")

#: Correct, and it raises (runtime_error) unless the arguments arrive as the statement says.
LR_PROBE = """
import jax
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    assert isinstance(step, jax.core.Tracer), type(step)
    assert step.dtype == jnp.int32 and step.shape == (), (step.dtype, step.shape)
    assert not step.aval.weak_type, "a step counter is a real int32 array, not a weak Python int"
    assert type(warmup_steps) is int and type(total_steps) is int, (type(warmup_steps), type(total_steps))
    assert isinstance(peak_lr, jax.core.Tracer) and peak_lr.aval.weak_type
    s = step.astype(jnp.float32)
    warm = peak_lr * s / warmup_steps
    p = jnp.clip((s - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * p))
    return jnp.where(s < warmup_steps, warm, decay)
"""


def test_a_traced_int32_step_and_static_ints_arrive_as_a_training_loop_passes_them(pool: GradingPool) -> None:
    cases = _some(LR, "shortest_start", "realistic_boundary", "long_past_end")
    result = _grade(pool, LR, LR_PROBE, cases)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert result.passed == result.total == len(cases)


def test_a_python_if_on_the_traced_step_is_a_trace_error_naming_the_line(pool: GradingPool) -> None:
    code = (
        "import jax.numpy as jnp\n\n"
        "def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):\n"
        "    s = step.astype(jnp.float32)\n"
        "    if s < warmup_steps:\n"
        "        return peak_lr * s / warmup_steps\n"
        "    return jnp.float32(final_lr)\n"
    )
    result = _grade(pool, LR, code, LR.public_cases)
    assert result.verdict is Verdict.TRACE_ERROR
    assert "line 5" in result.message and "jnp.where" in result.message


def test_branching_on_a_static_value_in_python_is_allowed(pool: GradingPool) -> None:
    # Python `if`s on the static ints are fine: each value is its own trace.
    code = LR_PROBE.replace(
        "    s = step.astype(jnp.float32)\n",
        "    s = step.astype(jnp.float32)\n    if warmup_steps == 1 and total_steps == 2:\n"
        "        return jnp.where(s < 1, 0.0 * s, jnp.where(s < 2, peak_lr + 0.0 * s, final_lr + 0.0 * s))\n",
    )
    result = _grade(pool, LR, code, _some(LR, "shortest_start", "shortest_boundary", "shortest_end"))
    assert result.verdict is Verdict.ACCEPTED, result.message


def test_a_run_panel_step_reaches_the_function_exactly(pool: GradingPool) -> None:
    custom = LR.custom_case(
        {"step": 15, "peak_lr": 0.5, "final_lr": 0.0, "warmup_steps": 10, "total_steps": 20}
    )
    result = _grade(pool, LR, LR_PROBE, [], [custom])
    (case,) = result.cases
    assert case.verdict is Verdict.ACCEPTED and case.visibility == "custom"
    assert case.output is not None and case.output.json_value == pytest.approx(0.25)


def test_jax_debug_print_of_the_int_step_shows_for_public_cases(pool: GradingPool) -> None:
    code = LR_PROBE.replace(
        "    s = step.astype(jnp.float32)\n",
        '    jax.debug.print("at step {}", step)\n    s = step.astype(jnp.float32)\n',
    )
    result = _grade(pool, LR, code, _some(LR, "example_start"))
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert "at step 3" in result.stdout and "at step 55" in result.stdout


# ------------------------------------------------------------------------------------------ pad-to-bucket

PAD = _PROBLEMS.get("pad-to-bucket")

#: Correct, and it raises unless the statics are plain hashable Python values and the arrays int32.
PAD_PROBE = """
import jax.numpy as jnp


def pad_to_bucket(tokens, lengths, buckets, pad_id):
    assert type(buckets) is tuple and all(type(b) is int for b in buckets), repr(buckets)
    assert type(pad_id) is int and hash(buckets) == hash(tuple(buckets))
    assert tokens.dtype == jnp.int32 and lengths.dtype == jnp.int32
    length = tokens.shape[1]
    bucket = next((b for b in buckets if b >= length), buckets[-1])
    kept = tokens[:, :bucket]
    grown = jnp.pad(kept, ((0, 0), (0, bucket - kept.shape[1])), constant_values=pad_id)
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    return jnp.where(mask, grown, pad_id), mask
"""


def test_static_tuples_and_ints_arrive_hashable_and_bool_masks_come_back_exact(pool: GradingPool) -> None:
    cases = _some(PAD, "cut_lengths_past_bucket", "empty_rows", "negative_pad_id")
    result = _grade(pool, PAD, PAD_PROBE, cases)
    assert result.verdict is Verdict.ACCEPTED, result.message
    first = result.cases[0]
    assert first.output is not None and first.expected is not None
    assert first.output.json_value == [
        [[5, 6, 7, 0], [8, 0, 0, 0]],
        [[True, True, True, False], [True, False, False, False]],
    ]
    assert first.output.json_value == first.expected.json_value


def test_each_static_value_compiles_on_its_own(pool: GradingPool) -> None:
    # The same tokens with three bucket tuples: three signatures, three output widths.
    base = {"tokens": [[1, 2, 3]], "lengths": [2], "pad_id": 0}
    custom = [
        PAD.custom_case({**base, "buckets": buckets}, f"b{i}") for i, buckets in enumerate([[4], [3, 8], [2]])
    ]
    result = _grade(pool, PAD, PAD_PROBE, [], custom)
    assert result.verdict is Verdict.ACCEPTED, result.message
    widths = [len(c.output.json_value[0][0]) for c in result.cases if c.output is not None]
    assert widths == [4, 3, 2]


def test_a_bucket_remembered_across_calls_is_wrong(pool: GradingPool) -> None:
    # Keeps the first bucket it saw in a global: the next static value gets a stale width.
    code = PAD_PROBE.replace(
        "    bucket = next((b for b in buckets if b >= length), buckets[-1])\n",
        "    if not _SEEN:\n        _SEEN.append(next((b for b in buckets if b >= length), buckets[-1]))\n"
        "    bucket = _SEEN[0]\n",
    ).replace("def pad_to_bucket", "_SEEN = []\n\n\ndef pad_to_bucket")
    result = _grade(pool, PAD, code, _some(PAD, "length_equals_bucket"))
    assert result.verdict is Verdict.WRONG_ANSWER
    assert "shape" in result.message


def test_a_mask_of_zeros_and_ones_is_a_dtype_mismatch_on_hidden_cases_too(pool: GradingPool) -> None:
    code = PAD_PROBE.replace(
        "return jnp.where(mask, grown, pad_id), mask", "return jnp.where(mask, grown, pad_id), mask * 1"
    )
    result = _grade(pool, PAD, code, _some(PAD, "empty_rows"))
    assert result.verdict is Verdict.WRONG_ANSWER
    hidden = next(c for c in result.cases if c.visibility == "hidden")
    assert hidden.verdict is Verdict.WRONG_ANSWER and "mask" in hidden.message and "bool" in hidden.message
    assert hidden.output is None and hidden.expected is None


def test_a_submission_that_cannot_handle_a_missing_bucket_fails_only_there(pool: GradingPool) -> None:
    code = PAD_PROBE.replace(
        "next((b for b in buckets if b >= length), buckets[-1])", "min(b for b in buckets if b >= length)"
    )
    result = _grade(pool, PAD, code, _some(PAD, "length_equals_bucket"))
    verdicts = {c.name: c.verdict for c in result.cases}
    assert verdicts["example_1"] is Verdict.ACCEPTED and verdicts["example_2"] is Verdict.ACCEPTED
    assert verdicts["example_3"] is Verdict.RUNTIME_ERROR  # no bucket holds 5 tokens: min() of nothing
    assert result.verdict is Verdict.RUNTIME_ERROR


# ------------------------------------------------------------------------------------------ adamw

ADAMW = _PROBLEMS.get("adamw")


def test_adamw_step_zero_off_by_one_is_wrong_not_a_crash(pool: GradingPool) -> None:
    # t = step gives 1 - 0.9**0 = 0: a division by zero in the program, which is a wrong (non-finite) value.
    code = (ROOT / "problems/adamw/solutions/wrong_answer/step_off_by_one.py").read_text()
    result = _grade(pool, ADAMW, code, _some(ADAMW, "mixed_step_0"))
    assert result.verdict is Verdict.WRONG_ANSWER
    assert result.cases[0].verdict is Verdict.WRONG_ANSWER
    assert "new_params" in result.cases[0].message
