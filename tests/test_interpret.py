"""Verdict rules of judge.grader.interpret, on fabricated raw runs: no sandbox, no JAX."""

from __future__ import annotations

import signal
from typing import Any

import numpy as np
import pytest

from judge.errors import ReferenceFailure
from judge.grader import interpret
from judge.problems import Problem, ProblemSet
from judge.results import GradeResult
from judge.verdicts import Verdict, WrongAnswerReason
from sandbox.limits import SandboxLimits
from sandbox.monitor import RawRun
from sandbox.protocol import encode_tree
from tests.conftest import ROOT

LIMITS = SandboxLimits(case_time_s=2.0)


@pytest.fixture(scope="module")
def problem() -> Problem:
    return ProblemSet(ROOT / "problems").get("global-norm-clipping")


def _expected(problem: Problem) -> list[Any]:
    # A stand-in expected output per case with the right structure (values need not be the reference's).
    return [{"clipped": case.inputs[0], "global_norm": np.array(1.0, np.float32)} for case in problem.cases]


def _ok(index: int, output: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "case_result",
        "index": index,
        "status": "ok",
        "output": encode_tree(output),
        "compile_ms": 5.0,
        "run_ms": 1.0,
        "mutation": None,
        **extra,
    }


def _run(
    problem: Problem, messages: list[dict[str, Any]], expected: list[Any] | None = None, **raw: Any
) -> GradeResult:
    cases = list(problem.cases)
    return interpret(
        problem,
        cases,
        [c.visibility for c in cases],
        expected or _expected(problem),
        RawRun(messages=messages, **raw),
        LIMITS,
        backend="fake",
        elapsed_ms=1.0,
    )


def _all_ok(problem: Problem) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"type": "loaded"}]
    for i, out in enumerate(_expected(problem)):
        msgs += [{"type": "case_start", "index": i}, _ok(i, out)]
    return [*msgs, {"type": "done"}]


def test_all_cases_match_is_accepted(problem: Problem) -> None:
    result = _run(problem, _all_ok(problem), returncode=0)
    assert result.verdict is Verdict.ACCEPTED
    assert result.passed == result.total == len(problem.cases)


def test_time_limit_stops_the_run_and_later_cases_are_not_run(problem: Problem) -> None:
    msgs = [*_all_ok(problem)[: 1 + 2 * 2], {"type": "case_start", "index": 2}]
    result = _run(problem, msgs, timeout="case", running_case=2, returncode=-9)
    assert result.verdict is Verdict.TIME_LIMIT_EXCEEDED
    verdicts = [c.verdict for c in result.cases]
    assert verdicts[:2] == [Verdict.ACCEPTED, Verdict.ACCEPTED]
    assert verdicts[2] is Verdict.TIME_LIMIT_EXCEEDED
    assert set(verdicts[3:]) == {Verdict.NOT_RUN}
    assert "2 s" in result.cases[2].message


def test_load_error_marks_every_case_not_run(problem: Problem) -> None:
    msgs = [{"type": "load_error", "verdict": "compile_error", "message": "line 3: `def f(`\nSyntaxError: x"}]
    result = _run(problem, msgs, returncode=0)
    assert result.verdict is Verdict.COMPILE_ERROR
    assert "line 3" in result.message
    assert {c.verdict for c in result.cases} == {Verdict.NOT_RUN}
    assert result.passed == 0


def test_exit_before_result_is_a_runtime_error_that_says_so(problem: Problem) -> None:
    msgs = [{"type": "loaded"}, {"type": "case_start", "index": 0}]
    result = _run(problem, msgs, returncode=0)
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "exited" in result.cases[0].message and "os._exit" in result.cases[0].message


def test_exit_while_loading(problem: Problem) -> None:
    result = _run(problem, [], returncode=3)
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "while loading" in result.message


def test_oom_kill_is_memory_limit_exceeded(problem: Problem) -> None:
    msgs = [{"type": "loaded"}, {"type": "case_start", "index": 0}]
    result = _run(problem, msgs, returncode=-9, oom_killed=True)
    assert result.verdict is Verdict.MEMORY_LIMIT_EXCEEDED
    assert result.cases[1].verdict is Verdict.NOT_RUN


def test_cpu_limit_signal_is_time_limit_exceeded(problem: Problem) -> None:
    msgs = [{"type": "loaded"}, {"type": "case_start", "index": 0}]
    result = _run(problem, msgs, returncode=-int(signal.SIGXCPU))
    assert result.verdict is Verdict.TIME_LIMIT_EXCEEDED


def test_crash_signal_names_the_signal(problem: Problem) -> None:
    msgs = [{"type": "loaded"}, {"type": "case_start", "index": 0}]
    result = _run(problem, msgs, returncode=128 + int(signal.SIGSEGV))
    assert result.verdict is Verdict.RUNTIME_ERROR
    assert "SIGSEGV" in result.cases[0].message


def test_forged_accepted_verdict_from_the_sandbox_is_not_trusted(problem: Problem) -> None:
    msgs = [
        {"type": "loaded"},
        {"type": "case_start", "index": 0},
        {"type": "case_result", "index": 0, "status": "error", "verdict": "accepted", "message": "ok!"},
    ]
    result = _run(problem, msgs, returncode=0)
    assert result.cases[0].verdict is Verdict.RUNTIME_ERROR


def test_malformed_output_tree_is_a_runtime_error(problem: Problem) -> None:
    msgs = [
        {"type": "loaded"},
        {"type": "case_start", "index": 0},
        {"type": "case_result", "index": 0, "status": "ok", "output": {"leaf": {"dtype": "object"}}},
    ]
    result = _run(problem, msgs, returncode=0)
    assert result.cases[0].verdict is Verdict.RUNTIME_ERROR
    assert "decoded" in result.cases[0].message


def test_reference_failure_is_internal_error_never_the_users(problem: Problem) -> None:
    expected: list[Any] = _expected(problem)
    expected[0] = ReferenceFailure("boom")
    result = _run(problem, _all_ok(problem), expected=expected, returncode=0)
    assert result.cases[0].verdict is Verdict.INTERNAL_ERROR
    assert result.verdict is Verdict.INTERNAL_ERROR


def test_mutation_reported_after_values_match(problem: Problem) -> None:
    msgs = _all_ok(problem)
    msgs[2] = {**msgs[2], "mutation": 'grads["w"] was replaced inside the input dict'}
    result = _run(problem, msgs, returncode=0)
    assert result.cases[0].verdict is Verdict.WRONG_ANSWER
    assert result.cases[0].reason is WrongAnswerReason.MUTATION
    assert 'grads["w"]' in result.cases[0].message


def test_public_cases_show_values_and_hidden_cases_do_not(problem: Problem) -> None:
    result = _run(problem, _all_ok(problem), returncode=0)
    public = [c for c in result.cases if c.visibility == "public"]
    hidden = [c for c in result.cases if c.visibility == "hidden"]
    assert public and hidden
    assert all(c.input is not None and c.output is not None and c.expected is not None for c in public)
    assert all(c.input is None and c.output is None and c.expected is None for c in hidden)


def test_hidden_wrong_answer_reveals_no_values(problem: Problem) -> None:
    msgs = _all_ok(problem)
    hidden_index = next(i for i, c in enumerate(problem.cases) if c.hidden)
    bad = dict(_expected(problem)[hidden_index])
    bad["global_norm"] = np.array(123.456, np.float32)
    msgs[2 + 2 * hidden_index] = _ok(hidden_index, bad)
    result = _run(problem, msgs, returncode=0)
    case = result.cases[hidden_index]
    assert case.verdict is Verdict.WRONG_ANSWER and case.reason is WrongAnswerReason.VALUE
    assert "global_norm" in case.message
    assert "123" not in case.message and "expected 1" not in case.message


def test_output_printed_during_hidden_cases_is_withheld(problem: Problem) -> None:
    first_hidden = next(i for i, c in enumerate(problem.cases) if c.hidden)
    output = b"public print\n" + b"SECRET hidden input\n"
    marks = {i: (0 if i < first_hidden else len(b"public print\n")) for i in range(len(problem.cases))}
    result = _run(
        problem, _all_ok(problem), returncode=0, output=output, output_total=len(output), output_marks=marks
    )
    assert "public print" in result.stdout
    assert "SECRET" not in result.stdout
    assert "hidden cases is not shown" in result.stdout


def test_crash_while_tracing_ahead_is_charged_to_the_traced_case(problem: Problem) -> None:
    # The main thread reported case 0 and started case 1; the tracing thread had moved on to case 3
    # when the process exited: case 3 is at fault, cases 1-2 (still queued) were not run.
    msgs = [*_all_ok(problem)[:3], {"type": "case_start", "index": 1}, {"type": "trace_start", "index": 3}]
    result = _run(problem, msgs, returncode=0, tracing_case=3, running_case=1)
    verdicts = [c.verdict for c in result.cases]
    assert verdicts[0] is Verdict.ACCEPTED
    assert verdicts[1:3] == [Verdict.NOT_RUN, Verdict.NOT_RUN]
    assert verdicts[3] is Verdict.RUNTIME_ERROR
    assert result.message.startswith(f"case {problem.cases[3].name}:")


def test_timeout_is_charged_to_the_reported_case_even_while_tracing_ahead(problem: Problem) -> None:
    msgs = [*_all_ok(problem)[:3], {"type": "case_start", "index": 1}, {"type": "trace_start", "index": 2}]
    result = _run(problem, msgs, timeout="case", returncode=-9, tracing_case=2, running_case=1)
    assert result.cases[1].verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert result.cases[2].verdict is Verdict.NOT_RUN
