"""Verdict rules of judge.core.grader.interpret, on fabricated raw runs: no sandbox, no JAX."""

from __future__ import annotations

import dataclasses
import signal
from typing import Any

import numpy as np
import pytest

from judge.core.errors import ReferenceFailure
from judge.core.grader import build_session, interpret
from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict, WrongAnswerReason
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.monitor import SessionJob
from sandbox.session.reports import (
    CaseReport,
    ProgramReport,
    RawRun,
    Stop,
    decode_compiled,
    decode_failure,
    decode_load,
    decode_refused,
    decode_run_error,
    decode_summary,
)
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fabricate import skeletonize

LIMITS = SandboxLimits(case_time_s=2.0)
SUMMARY = {"ops": {"stablehlo.multiply": 2}, "custom_calls": [], "host_callbacks": [], "loops": 0}


@pytest.fixture(scope="module")
def problem() -> Problem:
    """The test fixture package (its cases; the expected outputs below are stand-ins)."""
    return ProblemSet(FIXTURES).get(FIXTURE_SLUG)


def _expected(problem: Problem) -> list[Any]:
    # A stand-in expected output per case with the right structure (values need not be the reference's).
    return [{"clipped": case.inputs[0], "global_norm": np.array(1.0, np.float32)} for case in problem.cases]


def _job(problem: Problem) -> SessionJob:
    cases = list(problem.cases)
    return build_session(problem, "def f(): pass\n", cases, [c.hidden for c in cases], 1 << 24)


def _all_ok(problem: Problem, outputs: list[Any] | None = None) -> RawRun:
    """A run where every program compiled and every case returned ``outputs`` (default: the expected)."""
    job = _job(problem)
    raw = RawRun(load=decode_load({"type": "loaded"}), executor_healthy=True)
    for i, out in enumerate(outputs or _expected(problem)):
        sig = job.cases[i].sig
        skeleton, leaves = skeletonize(out)
        if sig not in raw.programs:
            raw.programs[sig] = ProgramReport(
                sig,
                skeleton=skeleton,
                compiled=decode_compiled(
                    {"summary": SUMMARY, "compile_ms": 5.0, "cached": False, "key": "k"}
                ),
            )
        raw.runs[i] = CaseReport(i, outputs=leaves, run_ms=1.0)
    last = len(problem.cases) - 1
    raw.retrace = ProgramReport(job.cases[last].sig, skeleton=raw.programs[job.cases[last].sig].skeleton)
    raw.retrace_run = CaseReport(last, same_program=True)
    return raw


def _grade(
    problem: Problem, raw: RawRun, expected: list[Any] | None = None, author: bool = False
) -> GradeResult:
    cases = list(problem.cases)
    return interpret(
        problem,
        cases,
        [c.visibility for c in cases],  # type: ignore[misc]
        expected or _expected(problem),
        raw,
        LIMITS,
        _job(problem),
        backend="fake",
        elapsed_ms=1.0,
        author=author,
    )


def _hidden_index(problem: Problem) -> int:
    return next(i for i, c in enumerate(problem.cases) if c.hidden)


def _sig(problem: Problem, index: int) -> int:
    return _job(problem).cases[index].sig


# ------------------------------------------------------------------------------------------ ordinary runs


def test_all_cases_match_is_accepted(problem: Problem) -> None:
    result = _grade(problem, _all_ok(problem))
    assert result.verdict is Verdict.ACCEPTED
    assert result.passed == result.total == len(problem.cases)


def test_timeout_stops_the_run_and_later_cases_are_not_run(problem: Problem) -> None:
    raw = _all_ok(problem)
    for i in range(2, len(problem.cases)):
        raw.runs.pop(i)
    raw.stop = Stop("executor", "run", 2, timeout="case", returncode=-9)
    result = _grade(problem, raw)
    assert result.verdict is Verdict.TIME_LIMIT_EXCEEDED
    verdicts = [c.verdict for c in result.cases]
    assert verdicts[:2] == [Verdict.ACCEPTED, Verdict.ACCEPTED]
    assert verdicts[2] is Verdict.TIME_LIMIT_EXCEEDED
    assert set(verdicts[3:]) == {Verdict.NOT_RUN}
    assert "2 s" in result.cases[2].message and "running" in result.cases[2].message


def test_load_error_marks_every_case_not_run(problem: Problem) -> None:
    raw = RawRun(
        load=decode_load(
            {"type": "load_error", "verdict": "compile_error", "message": "line 3: `def f(`\nSyntaxError: x"}
        )
    )
    result = _grade(problem, raw)
    assert result.verdict is Verdict.COMPILE_ERROR
    assert "line 3" in result.message
    assert {c.verdict for c in result.cases} == {Verdict.NOT_RUN}
    assert result.passed == 0


def test_exit_while_tracing_is_a_runtime_error_that_says_so(problem: Problem) -> None:
    raw = RawRun(load=decode_load({"type": "loaded"}), stop=Stop("tracer", "trace", 0, returncode=0))
    result = _grade(problem, raw)
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "exited" in result.cases[0].message and "os._exit" in result.cases[0].message


def test_exit_while_loading(problem: Problem) -> None:
    result = _grade(problem, RawRun(stop=Stop("tracer", "load", None, returncode=3)))
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "while loading" in result.message


def test_oom_kill_is_memory_limit_exceeded(problem: Problem) -> None:
    raw = RawRun(
        load=decode_load({"type": "loaded"}), stop=Stop("executor", "run", 0, returncode=-9, oom_killed=True)
    )
    result = _grade(problem, raw)
    assert result.verdict is Verdict.MEMORY_LIMIT_EXCEEDED
    assert result.cases[1].verdict is Verdict.NOT_RUN


def test_cpu_limit_signal_is_time_limit_exceeded(problem: Problem) -> None:
    raw = RawRun(
        load=decode_load({"type": "loaded"}), stop=Stop("tracer", "trace", 0, returncode=-int(signal.SIGXCPU))
    )
    assert _grade(problem, raw).verdict is Verdict.TIME_LIMIT_EXCEEDED


def test_crash_signal_names_the_signal(problem: Problem) -> None:
    raw = RawRun(
        load=decode_load({"type": "loaded"}),
        stop=Stop("tracer", "trace", 0, returncode=128 + int(signal.SIGSEGV)),
    )
    result = _grade(problem, raw)
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "SIGSEGV" in result.cases[0].message


def test_executor_crash_is_the_programs_runtime_error(problem: Problem) -> None:
    raw = RawRun(
        load=decode_load({"type": "loaded"}),
        stop=Stop("executor", "compile", 0, returncode=-int(signal.SIGSEGV)),
    )
    result = _grade(problem, raw)
    assert result.verdict is Verdict.RUNTIME_ERROR
    # It died while compiling, without a reason or a known size: XLA failed, and no cause is guessed.
    assert (
        "XLA failed to compile the program: its compiler crashed (signal SIGSEGV)" in result.cases[0].message
    )
    assert "jax.lax.fori_loop" not in result.cases[0].message


def test_an_executor_killed_from_outside_is_the_judges_failure(problem: Problem) -> None:
    """An executor's CPU limit is SIGXCPU (its soft limit); a SIGKILL the judge did not send (an operator, a
    host's OOM killer without a cgroup) is never the learner's time limit."""
    raw = RawRun(
        load=decode_load({"type": "loaded"}), stop=Stop("executor", "run", 0, returncode=-int(signal.SIGKILL))
    )
    result = _grade(problem, raw)
    assert result.verdict is Verdict.INTERNAL_ERROR
    assert "killed from outside the judge" in result.cases[0].message
    xcpu = RawRun(
        load=decode_load({"type": "loaded"}), stop=Stop("executor", "run", 0, returncode=-int(signal.SIGXCPU))
    )
    assert _grade(problem, xcpu).verdict is Verdict.TIME_LIMIT_EXCEEDED


def test_protocol_error_is_a_runtime_error_not_a_time_limit(problem: Problem) -> None:
    # The judge kills a process that sends junk (SIGKILL): that must not read as the CPU time limit.
    raw = RawRun(
        load=decode_load({"type": "loaded"}),
        stop=Stop("tracer", "trace", 0, protocol_error="frame of 9 bytes is not JSON", returncode=-9),
    )
    result = _grade(problem, raw)
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "malformed data" in result.cases[0].message


# ------------------------------------------------------------------------------------------ claims and rules


def test_forged_accepted_verdict_from_the_tracer_is_not_trusted(problem: Problem) -> None:
    raw = _all_ok(problem)
    raw.programs[_sig(problem, 0)] = ProgramReport(
        _sig(problem, 0), failure=decode_failure({"verdict": "accepted", "message": "ok!"})
    )
    result = _grade(problem, raw)
    assert result.cases[0].verdict is Verdict.RUNTIME_ERROR


def test_a_trace_error_claim_shows_the_users_message_on_public_cases(problem: Problem) -> None:
    raw = _all_ok(problem)
    raw.programs[_sig(problem, 0)] = ProgramReport(
        _sig(problem, 0),
        failure=decode_failure(
            {"verdict": "trace_error", "message": "line 3: `if x:`\nadvice", "advice": "bool"}
        ),
    )
    case = _grade(problem, raw).cases[0]
    assert case.verdict is Verdict.TRACE_ERROR and case.message == "line 3: `if x:`\nadvice"


def test_hidden_claims_show_only_what_the_judge_composes(problem: Problem) -> None:
    index = _hidden_index(problem)
    raw = _all_ok(problem)
    code = "import jax\n\ndef scale_tree(tree, factor):\n    raise ValueError(repr(tree))\n"
    job = _job(problem)
    job = SessionJob(**{**job.__dict__, "code": code})
    raw.programs[job.cases[index].sig] = ProgramReport(
        job.cases[index].sig,
        failure=decode_failure(
            {"verdict": "runtime_error", "message": "SECRET 1.2345", "line": 4, "error": "ValueError"}
        ),
    )
    cases = list(problem.cases)
    result = interpret(
        problem, cases, [c.visibility for c in cases], _expected(problem), raw, LIMITS, job,  # type: ignore[misc]
        backend="fake", elapsed_ms=1.0,
    )  # fmt: skip
    message = result.cases[index].message
    assert result.cases[index].verdict is Verdict.RUNTIME_ERROR
    assert "SECRET" not in message and "1.2345" not in message
    assert "line 4: `raise ValueError(repr(tree))`" in message and "ValueError" in message


def test_a_host_callback_in_the_program_summary_breaks_the_rule(problem: Problem) -> None:
    raw = _all_ok(problem)
    summary = {
        **SUMMARY,
        "custom_calls": ["xla_ffi_python_cpu_callback"],
        "host_callbacks": ["xla_ffi_python_cpu_callback"],
    }
    program = raw.programs[_sig(problem, 0)]
    assert program.compiled is not None
    program.compiled = dataclasses.replace(program.compiled, summary=decode_summary(summary))
    case = _grade(problem, raw).cases[0]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.RULE
    assert "host" in case.message and "pure JAX" in case.message


@pytest.mark.parametrize(
    ("kind", "verdict"),
    [
        ("host_callback", Verdict.WRONG_ANSWER),
        ("custom_call", Verdict.WRONG_ANSWER),
        ("extra_inputs", Verdict.TRACE_ERROR),
        ("output_limit", Verdict.OUTPUT_LIMIT_EXCEEDED),
        ("unreadable", Verdict.RUNTIME_ERROR),
    ],
)
def test_programs_the_executor_refuses(problem: Problem, kind: str, verdict: Verdict) -> None:
    raw = _all_ok(problem)
    sig = _sig(problem, 0)
    summary = (
        {**SUMMARY, "host_callbacks": ["xla_python_cpu_callback"]} if kind == "host_callback" else SUMMARY
    )
    raw.programs[sig] = ProgramReport(
        sig, skeleton={}, refused=decode_refused({"kind": kind, "message": "why", "summary": summary})
    )
    case = _grade(problem, raw).cases[0]
    assert case.verdict is verdict, case.message
    if kind == "extra_inputs":
        assert "escaped the function" in case.message
    if verdict is Verdict.WRONG_ANSWER:
        assert case.reason is WrongAnswerReason.RULE


# ------------------------------------------------------------------------------------------ outputs


def test_malformed_output_skeleton_is_a_runtime_error(problem: Problem) -> None:
    raw = _all_ok(problem)
    raw.programs[_sig(problem, 0)].skeleton = {"dict": [["clipped", {"out": 0}], ["global_norm", {"out": 0}]]}
    case = _grade(problem, raw).cases[0]
    assert case.verdict is Verdict.RUNTIME_ERROR
    assert "could not be read" in case.message


@pytest.mark.parametrize(
    "skeleton",
    [
        {"dict": [[{"int": "1"}, {"out": 0}], [{"key": {"repr": "<x>", "type": "int"}}, {"out": 1}]]},
        {"dict": [[{"int": "not a number"}, {"out": 0}]]},
        {"dict": [["a", {"out": 0}], ["a", {"out": 1}]]},
        {"list": [{"out": 10**30}]},
        {"tuple": [{"out": True}]},
        {"out": 0, "extra": 1},
        {"node": {"type": "X", "children": "nope"}},
    ],
)
def test_hostile_skeletons_give_a_clean_verdict(problem: Problem, skeleton: Any) -> None:
    raw = _all_ok(problem)
    raw.programs[_sig(problem, 0)].skeleton = skeleton
    case = _grade(problem, raw).cases[0]
    assert case.verdict in {Verdict.RUNTIME_ERROR, Verdict.WRONG_ANSWER}


def test_an_output_nested_326_dicts_deep_gives_a_clean_verdict(problem: Problem) -> None:
    raw = _all_ok(problem)
    node: Any = {"out": 0}
    for _ in range(326):
        node = {"dict": [["k", node]]}
    raw.programs[_sig(problem, 0)].skeleton = node
    raw.runs[0] = CaseReport(0, outputs=[np.zeros(1, np.float32)], run_ms=1.0)
    case = _grade(problem, raw).cases[0]
    assert case.verdict is Verdict.RUNTIME_ERROR and "deeper" in case.message


def test_a_non_array_leaf_is_a_type_mismatch(problem: Problem) -> None:
    raw = _all_ok(problem)
    raw.programs[_sig(problem, 0)].skeleton = {
        "dict": [["clipped", {"bad": "str"}], ["global_norm", {"out": 0}]]
    }
    raw.runs[0] = CaseReport(0, outputs=[np.array(1.0, np.float32)], run_ms=1.0)
    case = _grade(problem, raw).cases[0]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.TYPE
    assert "str" in case.message


def test_reference_failure_is_internal_error_never_the_users(problem: Problem) -> None:
    expected: list[Any] = _expected(problem)
    expected[0] = ReferenceFailure("boom")
    result = _grade(problem, _all_ok(problem), expected=expected)
    assert result.cases[0].verdict is Verdict.INTERNAL_ERROR
    assert result.verdict is Verdict.INTERNAL_ERROR


def test_mutation_reported_after_values_match(problem: Problem) -> None:
    raw = _all_ok(problem)
    raw.programs[_sig(problem, 0)].mutation = 'tree["w"] was replaced inside the input dict'
    case = _grade(problem, raw).cases[0]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.MUTATION
    assert 'tree["w"]' in case.message


def test_a_run_error_is_the_programs_runtime_error(problem: Problem) -> None:
    raw = _all_ok(problem)
    raw.runs[0] = CaseReport(0, error=decode_run_error({"kind": "runtime", "message": "INTERNAL: boom"}))
    raw.runs[1] = CaseReport(1, error=decode_run_error({"kind": "memory", "message": "RESOURCE_EXHAUSTED"}))
    result = _grade(problem, raw)
    assert result.cases[0].verdict is Verdict.RUNTIME_ERROR and "boom" in result.cases[0].message
    assert result.cases[1].verdict is Verdict.MEMORY_LIMIT_EXCEEDED
    assert {c.verdict for c in result.cases[2:]} == {Verdict.NOT_RUN}


# ------------------------------------------------------------------------------------------ state


def test_a_second_trace_with_another_result_is_state_across_calls(problem: Problem) -> None:
    raw = _all_ok(problem)
    last = len(problem.cases) - 1
    skeleton, leaves = skeletonize({**_expected(problem)[last], "global_norm": np.array(2.0, np.float32)})
    raw.retrace = ProgramReport(
        _sig(problem, last), skeleton=skeleton, compiled=decode_compiled({"summary": SUMMARY, "key": "other"})
    )
    raw.retrace_run = CaseReport(last, outputs=leaves, run_ms=1.0)
    case = _grade(problem, raw).cases[last]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.STATE
    assert "state across calls" in case.message and "2" not in case.message.split("(")[-1]


def test_a_second_trace_with_the_same_result_is_fine(problem: Problem) -> None:
    raw = _all_ok(problem)
    last = len(problem.cases) - 1
    skeleton, leaves = skeletonize(_expected(problem)[last])
    raw.retrace = ProgramReport(
        _sig(problem, last), skeleton=skeleton, compiled=decode_compiled({"summary": SUMMARY, "key": "other"})
    )
    raw.retrace_run = CaseReport(last, outputs=leaves, run_ms=1.0)
    assert _grade(problem, raw).verdict is Verdict.ACCEPTED


def test_a_leak_found_only_at_the_second_trace_is_a_trace_error(problem: Problem) -> None:
    raw = _all_ok(problem)
    last = len(problem.cases) - 1
    raw.retrace = ProgramReport(
        _sig(problem, last),
        failure=decode_failure({"verdict": "trace_error", "message": "leak", "advice": "leak", "line": 1}),
    )
    raw.retrace_run = None
    case = _grade(problem, raw).cases[last]
    assert case.verdict is Verdict.TRACE_ERROR and "second time" in case.message


# ------------------------------------------------------------------------------------------ hidden cases


def test_public_cases_show_values_and_hidden_cases_do_not(problem: Problem) -> None:
    result = _grade(problem, _all_ok(problem))
    public = [c for c in result.cases if c.visibility == "public"]
    hidden = [c for c in result.cases if c.visibility == "hidden"]
    assert public and hidden
    assert all(c.input is not None and c.output is not None and c.expected is not None for c in public)
    assert all(c.input is None and c.output is None and c.expected is None for c in hidden)
    assert all(c.run_ms is not None and c.error_ratio is not None for c in public)
    assert all(c.run_ms is None and c.error_ratio is None for c in hidden), (
        "hidden timing and ratios leak values"
    )


def test_authors_keep_hidden_ratios_and_times(problem: Problem) -> None:
    result = _grade(problem, _all_ok(problem), author=True)
    assert all(c.run_ms is not None and c.error_ratio is not None for c in result.cases)


def test_hidden_wrong_answer_reveals_no_values_nor_an_exact_ratio(problem: Problem) -> None:
    index = _hidden_index(problem)
    outputs = _expected(problem)
    outputs[index] = {
        **outputs[index],
        "global_norm": np.array(0.0, np.float32),
    }  # ratio would reveal |expected|
    case = _grade(problem, _all_ok(problem, outputs)).cases[index]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.VALUE
    assert "global_norm" in case.message
    assert "more than 10x the tolerance" in case.message or "1000x" in case.message
    assert not any(ch.isdigit() for ch in case.message.replace("10x", "").replace("1000x", ""))


def test_accepted_hidden_cases_show_no_ratio(problem: Problem) -> None:
    case = _grade(problem, _all_ok(problem)).cases[_hidden_index(problem)]
    assert (
        case.verdict is Verdict.ACCEPTED
        and case.message == "matches the expected output (within the tolerance)"
    )


def test_output_printed_after_the_hidden_phase_began_is_withheld(problem: Problem) -> None:
    raw = _all_ok(problem)
    raw.output = b"public print\nSECRET hidden structure\n"
    raw.output_total = len(raw.output)
    raw.output_cut = len(b"public print\n")
    result = _grade(problem, raw)
    assert "public print" in result.stdout
    assert "SECRET" not in result.stdout
    assert "hidden cases were traced is not shown" in result.stdout
