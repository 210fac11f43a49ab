"""Program rules a problem declares (``[[rules]]``): the spec, the executor's loop histogram, the rule
objects, the statement, and end to end in the sandbox with the submissions the rule exists for."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from judge.authoring.statement import render_rules
from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.spec import ForbidOpsRule, LoopRule, ProblemSpec
from judge.core.verdicts import Verdict, WrongAnswerReason
from judge.grading.compiled_rules import ProgramSummary, RequireLoop, declared_rule, precheck_for, rules_for
from tests.conftest import FIXTURE_SLUG, FIXTURES, PROGRAM_SLUG
from tests.program_pool import pooled_grader

#: The sandbox gradings of the three program-feature modules run in one xdist worker, one pool at a time
#: (on a loaded 2-core host, several pools starting executors at once can exhaust a pool's start timeout).
pytestmark = pytest.mark.xdist_group("program_features")

#: Tracer slots of this module's pool.
SLOT_BASE = 420


@pytest.fixture(scope="module")
def graded() -> Iterator[Callable[[Problem, str], GradeResult]]:
    with pooled_grader(SLOT_BASE) as grader:
        yield grader


#: The fixture problem with a ``require_loop`` rule (sum each row inside the loop).
SCAN_PROBLEM = PROGRAM_SLUG
PROBLEMS = ProblemSet(FIXTURES)
NEEDS_LOOP = RequireLoop(
    "accumulate with jax.lax.scan", frozenset({"stablehlo.reduce", "stablehlo.dot_general"}), "a reduction"
)


# ------------------------------------------------------------------------------------- the loop walk


def _summary_of(fn: Callable[..., Any], *shapes: tuple[int, ...]) -> ProgramSummary:
    """Lower ``fn`` as the tracer does and summarize it as the executor does (in this process)."""
    import jax
    import jax.numpy as jnp
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]

    from sandbox.inside.lowering import Lowerer, parse
    from sandbox.inside.program_checks import loop_ops

    struct: Any = jax.ShapeDtypeStruct
    specs = [struct(shape, jnp.float32) for shape in shapes]
    data = Lowerer()(jax.jit(fn).trace(*specs).jaxpr)
    with mlir.make_ir_context():
        module = parse(ir, data)
        ops: dict[str, int] = {}

        def visit(op: Any) -> Any:
            ops[op.name] = ops.get(op.name, 0) + 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        return ProgramSummary(ops=ops, loop_ops=dict(loop_ops(ir, module)))


def _scan_sum(x: Any) -> Any:
    import jax
    import jax.numpy as jnp

    return jax.lax.scan(lambda c, row: (c + jnp.sum(row * row), None), jnp.float32(0.0), x)[0]


def test_a_scan_inside_a_jit_inside_a_cond_counts_with_its_body() -> None:
    import jax
    import jax.numpy as jnp

    def nested(x: Any) -> Any:
        return jax.lax.cond(jnp.sum(x) > 0, jax.jit(_scan_sum), lambda y: jnp.sum(y), x)

    summary = _summary_of(nested, (4, 3))
    # The body is a private function called from the while, itself in a function called from a case branch.
    assert summary.ops["stablehlo.while"] == 1 and summary.ops["func.call"] >= 2
    assert summary.loop_ops.get("stablehlo.reduce") and summary.loop_ops.get("stablehlo.multiply")
    assert NEEDS_LOOP.check(summary) is None


def test_a_python_loop_unrolls_and_has_no_loop() -> None:
    import jax.numpy as jnp

    def unrolled(x: Any) -> Any:
        total = jnp.float32(0.0)
        for i in range(x.shape[0]):
            total = total + jnp.sum(x[i] * x[i])
        return total

    summary = _summary_of(unrolled, (4, 3))
    assert "stablehlo.while" not in summary.ops and summary.loop_ops == {}
    assert summary.ops["stablehlo.reduce"] == 4  # one copy of the body per step
    message = NEEDS_LOOP.check(summary)
    assert message is not None
    assert message.startswith(
        "this problem asks you to accumulate with jax.lax.scan; your program has no loop"
    )
    assert "unrolled" in message


def test_fori_loop_with_static_bounds_is_a_loop_too() -> None:
    import jax
    import jax.numpy as jnp

    def fori(x: Any) -> Any:
        return jax.lax.fori_loop(0, x.shape[0], lambda i, c: c + jnp.sum(x[i]), jnp.float32(0.0))

    summary = _summary_of(fori, (4, 3))
    assert summary.ops["stablehlo.while"] == 1 and summary.loop_ops.get("stablehlo.reduce")
    assert NEEDS_LOOP.check(summary) is None


def test_an_empty_scan_beside_an_unrolled_loop_does_not_count() -> None:
    import jax
    import jax.numpy as jnp

    def cheat(x: Any) -> Any:
        count, _ = jax.lax.scan(lambda c, _: (c + 1.0, None), jnp.float32(0.0), None, length=x.shape[0])
        return sum(jnp.sum(x[i]) for i in range(x.shape[0])) / count

    summary = _summary_of(cheat, (4, 3))
    assert summary.ops["stablehlo.while"] == 1
    assert "stablehlo.reduce" not in summary.loop_ops and summary.ops["stablehlo.reduce"] == 4
    message = NEEDS_LOOP.check(summary)
    assert message is not None and "your program has a loop, but no a reduction happens inside it" in message


def test_vmap_has_no_loop() -> None:
    import jax
    import jax.numpy as jnp

    summary = _summary_of(lambda x: jnp.mean(jax.vmap(lambda r: jnp.sum(r * r))(x)), (4, 3))
    assert NEEDS_LOOP.check(summary) is not None


# ------------------------------------------------------------------------------------- spec and rules


def test_declared_rules_become_rule_objects() -> None:
    loop = LoopRule(
        kind="require_loop", asks="use scan", body_has_any=["stablehlo.dot_general"], body_work="a dot"
    )
    assert declared_rule(loop) == RequireLoop("use scan", frozenset({"stablehlo.dot_general"}), "a dot")
    forbid = ForbidOpsRule(kind="forbid_ops", asks="sort by hand", ops=["stablehlo.sort"], what="a sort")
    rule = declared_rule(forbid)
    assert rule.check(ProgramSummary(ops={"stablehlo.add": 1})) is None
    assert rule.check(ProgramSummary(ops={"stablehlo.sort": 1})) == (
        "the program uses stablehlo.sort: this problem asks you to sort by hand, without a sort"
    )


def test_the_scan_problem_declares_its_loop_rule() -> None:
    problem = PROBLEMS.get(SCAN_PROBLEM)
    rules = rules_for(problem)
    assert len(rules) == 2 and isinstance(rules[1], RequireLoop)
    assert rules[1].body_has_any == {"stablehlo.reduce"}
    # Problems without [[rules]] keep only the host-callback rule.
    assert len(rules_for(PROBLEMS.get(FIXTURE_SLUG))) == 1


def test_the_statement_states_the_rule() -> None:
    spec = PROBLEMS.get(SCAN_PROBLEM).spec
    text = render_rules(spec)
    assert "This problem asks you to sum each row inside jax.lax.scan" in text
    assert "A Python `for` loop is unrolled" in text and "(`rule`)" in text
    # ... and only there.
    assert "asks you to" not in render_rules(PROBLEMS.get(FIXTURE_SLUG).spec)


@pytest.mark.parametrize(
    "rule",
    [
        {"kind": "require_loop", "asks": "x", "body_has_any": [], "body_work": "y"},
        {"kind": "require_loop", "asks": "x", "body_has_any": ["while"], "body_work": "y"},
        {"kind": "require_loop", "asks": "x", "body_has_any": ["llvm.call"], "body_work": "y"},
        {"kind": "forbid_ops", "asks": "x", "ops": ["stablehlo.sort"]},
        {"kind": "requires_scan", "asks": "x"},
    ],
)
def test_malformed_rules_are_refused_at_load(rule: dict[str, Any]) -> None:
    base = PROBLEMS.get(SCAN_PROBLEM).spec.model_dump()
    ProblemSpec.model_validate(base)  # the real spec round-trips
    with pytest.raises(ValidationError):
        ProblemSpec.model_validate({**base, "rules": [rule]})


def test_the_executor_refuses_before_compiling_what_a_rule_rejects() -> None:
    from sandbox.inside.program_checks import _precheck

    problem = PROBLEMS.get(SCAN_PROBLEM)
    precheck = precheck_for(problem)
    assert precheck == {"require_loop_any": ["stablehlo.reduce"], "loops_matter": []}
    assert precheck_for(PROBLEMS.get(FIXTURE_SLUG)) == {}
    no_loop = {"ops": {"stablehlo.reduce": 4}, "loop_ops": {}}
    idle_loop = {"ops": {"stablehlo.while": 1, "stablehlo.reduce": 4}, "loop_ops": {"stablehlo.add": 1}}
    working = {"ops": {"stablehlo.while": 1}, "loop_ops": {"stablehlo.reduce": 1}}
    assert _precheck(no_loop, precheck) == "the program has no loop"
    assert _precheck(idle_loop, precheck) is not None
    assert _precheck(working, precheck) is None
    assert _precheck(no_loop, {}) is None and _precheck(no_loop, "junk") is None
    assert _precheck({"ops": {"stablehlo.sort": 1}, "loop_ops": {}}, {"forbid_ops": ["stablehlo.sort"]})


# ------------------------------------------------------------------------------------- end to end


def _solution(name: str) -> str:
    return (FIXTURES / SCAN_PROBLEM / "solutions" / name).read_text()


@pytest.mark.slow
def test_a_python_loop_is_a_rule_violation_on_every_case(
    graded: Callable[[Problem, str], GradeResult],
) -> None:
    problem = PROBLEMS.get(SCAN_PROBLEM)
    result = graded(problem, _solution("wrong_answer/python_loop.py"))
    assert result.verdict is Verdict.WRONG_ANSWER
    assert {c.reason for c in result.cases} == {WrongAnswerReason.RULE}
    assert "sum each row inside jax.lax.scan; your program has no loop" in result.message
    hidden = next(c for c in result.cases if c.visibility == "hidden")
    assert "your program has no loop" in hidden.message and hidden.output is None


@pytest.mark.slow
def test_a_cheat_with_an_empty_scan_is_told_where_the_work_must_go(
    graded: Callable[[Problem, str], GradeResult],
) -> None:
    problem = PROBLEMS.get(SCAN_PROBLEM)
    result = graded(problem, _solution("wrong_answer/empty_scan_beside_python_loop.py"))
    assert result.verdict is Verdict.WRONG_ANSWER and result.cases[0].reason is WrongAnswerReason.RULE
    assert "your program has a loop, but no a sum over a row" in result.message


@pytest.mark.slow
def test_fori_loop_passes_the_rule(graded: Callable[[Problem, str], GradeResult]) -> None:
    problem = PROBLEMS.get(SCAN_PROBLEM)
    result = graded(problem, _solution("accepted/fori_loop_indexing.py"))
    assert result.verdict is Verdict.ACCEPTED, result.message


# ------------------------------------------------------------------------------------- verdicts (pure)


def _interpret(problem: Problem, programs: dict[str, Any]) -> GradeResult:
    """Verdicts for a fabricated run in which every signature's program got ``programs`` (refused or
    compiled with a summary) and every compiled case returned zeros of the right structure."""
    import numpy as np

    from judge.core.grader import build_session, interpret
    from sandbox.host.resource_limits import SandboxLimits
    from sandbox.session.reports import (
        CaseReport,
        ProgramReport,
        RawRun,
        decode_compiled,
        decode_load,
        decode_refused,
    )
    from tests.fabricate import skeletonize

    cases = list(problem.cases)
    job = build_session(problem, "def f(): pass\n", cases, [c.hidden for c in cases], 1 << 24)
    raw = RawRun(load=decode_load({"type": "loaded"}), executor_healthy=True)
    out = (np.zeros((), np.float32), {"w": np.zeros(2, np.float32)})
    skeleton, leaves = skeletonize(out)
    for i, plan in enumerate(job.cases):
        compiled, refused = programs.get("compiled"), programs.get("refused")
        raw.programs.setdefault(
            plan.sig,
            ProgramReport(
                plan.sig,
                skeleton=skeleton,
                compiled=None if compiled is None else decode_compiled(compiled),
                refused=None if refused is None else decode_refused(refused),
            ),
        )
        raw.runs[i] = CaseReport(i, outputs=leaves, run_ms=1.0)
    expected = [out] * len(cases)
    visibility: Any = [c.visibility for c in cases]
    return interpret(
        problem, cases, visibility, expected, raw, SandboxLimits(), job, backend="fake", elapsed_ms=1.0
    )


UNROLLED = {"ops": {"stablehlo.reduce": 4, "stablehlo.add": 9}, "loop_ops": {}}


def test_a_program_refused_by_the_precheck_gets_the_rule_message() -> None:
    problem = PROBLEMS.get(SCAN_PROBLEM)
    refused = {"kind": "rule", "message": "the program has no loop", "summary": UNROLLED}
    result = _interpret(problem, {"refused": refused})
    assert result.verdict is Verdict.WRONG_ANSWER
    assert all(c.reason is WrongAnswerReason.RULE for c in result.cases)
    assert all("your program has no loop" in c.message for c in result.cases)


def test_a_compiled_program_that_breaks_the_rule_is_still_rejected() -> None:
    # An executor without the precheck (or a rule only the judge knows) compiles it: the judge decides.
    problem = PROBLEMS.get(SCAN_PROBLEM)
    compiled = {"summary": UNROLLED, "compile_ms": 1.0, "cached": False, "key": "k"}
    result = _interpret(problem, {"compiled": compiled})
    assert {c.reason for c in result.cases} == {WrongAnswerReason.RULE}
    working = {"ops": {"stablehlo.while": 1}, "loop_ops": {"stablehlo.reduce": 2}}
    passing = _interpret(problem, {"compiled": {**compiled, "summary": working}})
    assert WrongAnswerReason.RULE not in {c.reason for c in passing.cases}
