"""The ``require_remat`` rule (``sandbox.inside.remat`` from the module the executor parses, decided by
``judge.grading.compiled_rules.remat_message``) and ``require_loop``'s bound on steps
(``judge.grading.transform_rules``), on programs lowered here exactly as the tracer exports them and the
executor reads them. The catalog's problems that use them (remat-tanh-stack, matrix-power-loop) grade their
shipped solutions in the sandbox in ``judge check``."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from judge.authoring.statement import render_rules
from judge.core.problems import ProblemSet
from judge.core.spec import LoopRule, ProblemSpec
from judge.grading.compiled_rules import ProgramSummary, remat_message
from judge.grading.transform_rules import StepPeer, loop_steps, outside_loops, unrolled_broken
from sandbox.session.reports import decode_summary

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ProblemSet(ROOT / "problems")
REMAT = PROBLEMS.get("remat-tanh-stack")
POWER = PROBLEMS.get("matrix-power-loop")


def _summary_of(fn: Callable[..., Any], *args: Any, static: tuple[int, ...] = ()) -> ProgramSummary:
    """Lower ``fn`` as the tracer does, summarize it as the executor does and pass the summary through the
    monitor's bounded copy, as the judge receives it."""
    import jax
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    from sandbox.inside.lowering import Lowerer, parse
    from sandbox.inside.program_checks import loop_ops
    from sandbox.inside.remat import remat_summary

    data = Lowerer()(jax.jit(fn, static_argnums=static).trace(*args).jaxpr)
    with mlir.make_ir_context():
        module = parse(ir, data)
        ops: dict[str, int] = {}

        def visit(op: Any) -> Any:
            ops[op.name] = ops.get(op.name, 0) + 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        wire = {"ops": ops, "loop_ops": dict(loop_ops(ir, module)), **remat_summary(ir, module)}
    return ProgramSummary.from_wire(decode_summary(wire))


def _solution(problem: str, path: str, name: str) -> Callable[..., Any]:
    file = ROOT / "problems" / problem / "solutions" / path
    spec = importlib.util.spec_from_file_location(f"solution_{file.stem}", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------- require_remat


def _gradient_program(fn: Callable[..., Any]) -> ProgramSummary:
    """The program the judge runs for a ``[gradient]`` problem: the value, then the vjp's cotangents."""
    import jax
    import jax.numpy as jnp

    def value_and_vjp(ws: Any, x: Any) -> Any:
        out, vjp = jax.vjp(fn, ws, x)
        return out, vjp(jnp.ones_like(out))

    return _summary_of(value_and_vjp, jnp.ones((3, 4, 4)) * 0.3, jnp.ones((2, 4)))


def _remat_verdict(fn: Callable[..., Any]) -> str | None:
    return remat_message(REMAT, _gradient_program(fn), leaves=1)


@pytest.mark.parametrize(
    "path",
    [
        "accepted/checkpoint_whole_stack.py",
        "accepted/scan_checkpointed_step.py",
        "accepted/checkpoint_dots_policy.py",
        "accepted/checkpoint_around_scan.py",
    ],
)
def test_checkpointed_gradients_keep_the_rule(path: str) -> None:
    assert _remat_verdict(_solution("remat-tanh-stack", path, "tanh_stack")) is None


def test_the_reference_keeps_the_rule_and_recomputes_each_layer() -> None:
    from reference.tanh_stack import tanh_stack

    summary = _gradient_program(tanh_stack)
    # Three layers: three tanh in the forward pass, three again from the barriers.
    assert summary.ops["stablehlo.tanh"] == 6 and summary.recomputed_ops["stablehlo.tanh"] == 3
    assert summary.barrier_outputs == (False, True, True)  # the value is not read from a barrier
    assert remat_message(REMAT, summary, leaves=1) is None


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("wrong_answer/no_checkpoint.py", "recomputes nothing"),
        ("wrong_answer/barrier_beside_stored_activation.py", "a barrier beside stored activations saves"),
        ("wrong_answer/checkpoint_saves_everything.py", "does not compute a layer's tanh again"),
        ("wrong_answer/barrier_in_forward_pass.py", "own output is computed from an optimization barrier"),
    ],
)
def test_programs_that_store_activations_break_the_rule(path: str, words: str) -> None:
    message = _remat_verdict(_solution("remat-tanh-stack", path, "tanh_stack"))
    assert message is not None and words in message, message
    assert message.startswith("this problem asks you to recompute the layers' activations")


def test_a_dead_recomputation_behind_a_barrier_does_not_count() -> None:
    import jax
    import jax.numpy as jnp

    def dead(ws: Any, x: Any) -> Any:
        h = x
        for i in range(ws.shape[0]):
            h = jnp.tanh(h @ ws[i])
            jnp.tanh(jax.lax.optimization_barrier(h) @ ws[i])  # type: ignore[no-untyped-call]  # computed again, never used
        return h

    summary = _gradient_program(dead)
    assert summary.ops["stablehlo.optimization_barrier"] == 3 and summary.ops["stablehlo.tanh"] == 6
    assert "stablehlo.tanh" not in summary.recomputed_ops
    assert "does not compute a layer's tanh again" in (remat_message(REMAT, summary, leaves=1) or "")


def test_a_barrier_inside_a_jitted_helper_is_followed_through_calls() -> None:
    import jax
    import jax.numpy as jnp

    @jax.jit
    def layer(h: Any, w: Any) -> Any:
        return jax.nn.softplus(jnp.tanh(h @ w))  # softplus lowers to a private function of its own

    def stack(ws: Any, x: Any) -> Any:
        step = jax.checkpoint(layer)
        for i in range(ws.shape[0]):
            x = step(x, ws[i])
        return x

    summary = _gradient_program(stack)
    # The jitted layer is one private function called from each checkpoint: its ops count once.
    assert summary.recomputed_ops.get("stablehlo.tanh") == 1
    assert remat_message(REMAT, summary, leaves=1) is None


def test_a_program_without_barriers_pays_nothing_for_the_walk() -> None:
    import jax.numpy as jnp

    summary = _summary_of(lambda x: jnp.tanh(x), jnp.ones(3))
    assert summary.recomputed_ops == {} and summary.barrier_outputs == ()
    assert remat_message(POWER, summary, leaves=1) is None  # a problem without the rule


def test_the_monitor_bounds_what_the_executor_reports() -> None:
    copied = decode_summary({"ops": {}, "recomputed_ops": {"x": "many"}, "barrier_outputs": [True, 1, "yes"]})
    assert copied.recomputed_ops == {} and copied.barrier_outputs == (True, False, False)
    assert decode_summary({"barrier_outputs": "not a list"}).barrier_outputs == ()


def test_the_statement_states_the_remat_rule() -> None:
    text = render_rules(REMAT.spec)
    assert "recompute the layers' activations" in text and "prevent_cse=True" in text


def test_the_spec_allows_one_remat_rule() -> None:
    raw = REMAT.spec.model_dump(mode="json", exclude_none=True)
    raw["rules"] = raw["rules"] * 2
    with pytest.raises(ValidationError, match="at most one 'require_remat' rule"):
        ProblemSpec.model_validate(raw)


# ----------------------------------------------------------------------- require_loop's bound on steps


def _power_program(path: str | None, k: int) -> ProgramSummary:
    import jax.numpy as jnp

    if path is None:
        from reference.matrix_power import matrix_power as fn
    else:
        fn = _solution("matrix-power-loop", path, "matrix_power")
    return _summary_of(fn, jnp.eye(3) * 0.5, k, static=(1,))


def _steps_verdict(path: str | None, ks: tuple[int, ...]) -> str | None:
    rule = next(r for r in POWER.spec.rules if isinstance(r, LoopRule))
    peers: list[StepPeer] = []
    for k in ks:
        summary = _power_program(path, k)
        outside = outside_loops(summary.ops, summary.loop_ops)
        broken = unrolled_broken(rule, k, outside, peers)
        if broken is not None:
            return broken
        peers.append(StepPeer(k, outside, f"k_{k}"))
    return None


@pytest.mark.parametrize(
    "path",
    [
        None,
        "accepted/scan_left_multiply.py",
        "accepted/while_loop_counter.py",
        "accepted/fori_loop_einsum.py",
    ],
)
def test_loops_are_the_same_size_whatever_the_number_of_steps(path: str | None) -> None:
    assert _steps_verdict(path, (2, 9, 64, 1)) is None


def test_steps_unrolled_beside_a_loop_break_the_bound() -> None:
    message = _steps_verdict("wrong_answer/one_step_in_loop_rest_unrolled.py", (2, 9))
    assert message is not None, "a fori_loop doing one product beside 8 unrolled ones passed"
    assert "your program for 9 steps has" in message and "the one for 2 steps (case k_2)" in message
    assert "unrolled" in message and message.startswith("this problem asks you to multiply by a once")


def test_the_bound_wants_steps_at_least_two_apart_and_one_op_per_step() -> None:
    rule = next(r for r in POWER.spec.rules if isinstance(r, LoopRule))
    assert unrolled_broken(rule, 3, 20, [StepPeer(2, 10, "a")]) is None  # one step apart: a shape may do it
    assert (
        unrolled_broken(rule, 12, 19, [StepPeer(2, 10, "a")]) is None
    )  # 9 ops over 10 steps: not a copy each
    assert unrolled_broken(rule, 12, 20, [StepPeer(2, 10, "a")]) is not None
    assert unrolled_broken(rule, 2, 10, [StepPeer(12, 20, "a")]) is not None  # either order
    assert unrolled_broken(rule, 12, 10, [StepPeer(2, 20, "a")]) is None  # shrinking is not unrolling


def test_loop_steps_reads_an_int_or_an_axis() -> None:
    rule = next(r for r in POWER.spec.rules if isinstance(r, LoopRule))
    assert loop_steps(rule, POWER.spec, [[[1.0]], 7]) == 7
    ema = PROBLEMS.get("ema-scan")
    ema_rule = next(r for r in ema.spec.rules if isinstance(r, LoopRule))
    assert loop_steps(ema_rule, ema.spec, [[[1.0, 2.0]] * 5, [0.0, 0.0], 0.5]) is None  # no steps declared
    with_steps = LoopRule.model_validate({**ema_rule.model_dump(), "steps": {"arg": "xs", "axis": 0}})
    # Case inputs reach the grader converted: an array argument is one array.
    assert loop_steps(with_steps, ema.spec, [np.ones((5, 2)), np.zeros(2), 0.5]) == 5


def test_the_spec_checks_the_steps_argument() -> None:
    raw = POWER.spec.model_dump(mode="json", exclude_none=True)
    raw["rules"][0]["steps"] = {"arg": "kk"}
    with pytest.raises(ValidationError, match="steps names 'kk', which is not an argument"):
        ProblemSpec.model_validate(raw)


def test_the_statement_states_the_bound() -> None:
    assert "must not grow with the number of steps" in render_rules(POWER.spec)
    assert "must not grow with the number of steps" not in render_rules(PROBLEMS.get("ema-scan").spec)


def test_an_empty_output_cannot_show_an_idle_loop() -> None:
    """A while_loop over an empty array changes no output bit when perturbed: nothing to change, not a
    loop beside the answer (integer-sqrt-newton's hidden case ``empty``)."""
    from judge.grading.compiled_rules import idle_loops_message
    from judge.grading.outputs import empty_leaves_matter, leaf_sizes

    problem = PROBLEMS.get("integer-sqrt-newton")
    expected = (np.zeros(0, np.int32), np.zeros(0, np.int32))
    matter = empty_leaves_matter([False, False], leaf_sizes(expected))
    assert idle_loops_message(problem, matter, 2) is None
    # One non-empty leaf that the loop does not reach still breaks the rule.
    expected = (np.zeros(3, np.int32), np.zeros(0, np.int32))
    assert idle_loops_message(problem, empty_leaves_matter([False, False], leaf_sizes(expected)), 2)
    assert empty_leaves_matter(None, [0]) is None


# ------------------------------------------------- a logarithmic bound: forbid_ops with per_doubling

RECURRENCE = PROBLEMS.get("linear-recurrence-scan")


def _recurrence_verdict(path: str | None, lengths: tuple[int, ...]) -> str | None:
    import jax.numpy as jnp

    from judge.core.spec import ForbidOpsRule

    if path is None:
        from reference.linear_recurrence import linear_recurrence as fn
    else:
        fn = _solution("linear-recurrence-scan", path, "linear_recurrence")
    rule = next(r for r in RECURRENCE.spec.rules if isinstance(r, ForbidOpsRule))
    peers: list[StepPeer] = []
    for length in lengths:
        summary = _summary_of(fn, jnp.full((length, 3), 0.5), jnp.ones((length, 3)))
        outside = outside_loops(summary.ops, summary.loop_ops)
        broken = unrolled_broken(rule, length, outside, peers)
        if broken is not None:
            return broken
        peers.append(StepPeer(length, outside, f"t_{length}"))
    return None


@pytest.mark.parametrize(
    "path",
    [None, "accepted/stacked_pairs.py", "accepted/dict_elements.py"],
)
def test_associative_scans_grow_by_a_level_per_doubling(path: str | None) -> None:
    assert _recurrence_verdict(path, (3, 1, 2, 8, 128, 1024)) is None


def test_an_unrolled_python_loop_breaks_the_logarithmic_bound() -> None:
    message = _recurrence_verdict("wrong_answer/python_loop.py", (3, 1, 128))
    assert message is not None and "for 128 steps" in message
    assert "64 operations each time the number of steps doubles" in message


def test_the_statement_states_the_logarithmic_bound() -> None:
    assert "at most 64 operations each time the number of steps doubles" in render_rules(RECURRENCE.spec)
