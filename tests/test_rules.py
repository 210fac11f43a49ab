"""Rules decided from the executor's program summary (judge.grading.compiled_rules)."""

from __future__ import annotations

from judge.grading.compiled_rules import ForbidOps, NoHostCallbacks, ProgramSummary, RequireOps, broken_rule
from sandbox.session.reports import decode_summary

LOOP = ProgramSummary(ops={"stablehlo.while": 1, "stablehlo.add": 3}, loops=1)
PLAIN = ProgramSummary(ops={"stablehlo.add": 3})
CALLBACK = ProgramSummary(
    custom_calls=("xla_ffi_python_cpu_callback",), host_callbacks=("xla_ffi_python_cpu_callback",)
)


def test_host_callbacks_break_the_default_rule() -> None:
    message = NoHostCallbacks().check(CALLBACK)
    assert message is not None and "pure JAX" in message and "xla_ffi_python_cpu_callback" in message
    assert NoHostCallbacks().check(PLAIN) is None


def test_op_rules_for_problems_to_declare() -> None:
    needs_loop = RequireOps(frozenset({"stablehlo.while"}), "use jax.lax.scan or fori_loop")
    no_sort = ForbidOps(frozenset({"stablehlo.sort"}), "implement it without sorting")
    assert needs_loop.check(LOOP) is None
    assert needs_loop.check(PLAIN) == "the program has no stablehlo.while: use jax.lax.scan or fori_loop"
    assert no_sort.check(ProgramSummary(ops={"stablehlo.sort": 1})) == (
        "the program uses stablehlo.sort: implement it without sorting"
    )
    assert broken_rule([NoHostCallbacks(), needs_loop], PLAIN) is not None
    assert broken_rule([NoHostCallbacks(), needs_loop], LOOP) is None


def test_a_summary_from_the_wire() -> None:
    summary = ProgramSummary.from_wire(
        decode_summary(
            {"ops": {"stablehlo.while": 2}, "custom_calls": ["a"], "host_callbacks": [], "loops": 2}
        )
    )
    assert summary.loops == 2 and summary.custom_calls == ("a",)
    assert ProgramSummary.from_wire(None) == ProgramSummary()
