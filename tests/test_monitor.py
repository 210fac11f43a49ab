"""The monitor survives any bytes: fake tracers and executors (tests/fake_worker.py, no JAX) that send
frames 100,000 levels deep, 400-digit timings, NaN, leaves of shape [0, 10**30], floods, garbage without
pause, forged progress, or nothing at all. Every run ends with a clean record in bounded time and memory."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from judge.core.grader import build_session, interpret
from judge.core.problems import ProblemSet
from judge.core.verdicts import Verdict
from sandbox.backends.base import GradingProcesses, PopenProcess
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session import monitor
from sandbox.session.driver import run_session
from sandbox.session.lanes import RETRACE_ID, Lanes
from sandbox.session.monitor import RawRun, SessionJob
from sandbox.session.output import MARK_WAIT_S
from sandbox.shared.output_mark import MarkScanner, new_mark
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT
from tests.sessions import session

FAKE = str(ROOT / "tests" / "fake_worker.py")
LIMITS = SandboxLimits(case_time_s=2.0, wall_time_s=20.0, startup_time_s=20.0)


def fake(role: str, scenario: str) -> PopenProcess:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return PopenProcess("fake", [sys.executable, FAKE, role, scenario], env, role=role)  # type: ignore[arg-type]


def drive(
    tracer: str = "good", executor: str = "good", limits: SandboxLimits = LIMITS, **job: object
) -> RawRun:
    pair = GradingProcesses(fake("tracer", tracer), fake("executor", executor))
    try:
        inputs = [np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32)]
        return run_session(pair, session("unused", *inputs, secret=(False, True), **job), limits)  # type: ignore[arg-type]
    finally:
        pair.close()


def test_a_well_behaved_pair_completes() -> None:
    raw = drive()
    assert raw.stop is None and raw.executor_healthy
    assert sorted(raw.runs) == [0, 1] and raw.retrace_run is not None
    np.testing.assert_array_equal(raw.runs[1].outputs[0], np.arange(4, dtype=np.float32))  # type: ignore[index]


def test_a_retrace_of_the_same_bytes_is_the_same_program_without_the_executor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A re-trace whose program is byte for byte the first trace's is the same program: it is neither
    compiled nor run again; one of other bytes is (tests/fake_worker.py's default retrace)."""
    asked: list[int] = []
    request_program = Lanes.request_program

    def spy(self: Lanes, program_id: int, *rest: object) -> None:
        asked.append(program_id)
        request_program(self, program_id, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(Lanes, "request_program", spy)
    raw = drive(tracer="stateless")
    assert raw.stop is None and raw.executor_healthy and sorted(raw.runs) == [0, 1]
    assert raw.retrace_run is not None and raw.retrace_run.same_program
    assert RETRACE_ID not in asked and raw.retrace is not None and raw.retrace.compiled is None
    asked.clear()
    raw = drive()
    assert RETRACE_ID in asked and raw.retrace_run is not None and not raw.retrace_run.same_program


HIDDEN_VALUES = np.arange(4, dtype=np.float32) + 1000  # planted in the hidden case: a canary


def _shown_values(raw: RawRun, job: SessionJob) -> np.ndarray:
    shown = [raw.runs[c.index].outputs for c in job.cases if not c.secret and c.index in raw.runs]
    return np.concatenate([np.ravel(x) for outputs in shown for x in outputs or []])


def _leaky_run(public: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> tuple[RawRun, SessionJob, list[int]]:
    """A public case and a hidden one on an executor that returns every value it ever held with each result
    and whose first program (the public one) compiles last; also the cases in the order they were sent."""
    sent: list[int] = []
    request_run = Lanes.request_run

    def spy(self: Lanes, program_id: int, case: monitor.CasePlan) -> None:
        sent.append(case.index)
        request_run(self, program_id, case)

    monkeypatch.setattr(Lanes, "request_run", spy)
    pair = GradingProcesses(fake("tracer", "good"), fake("executor", "leaky_slow_first"))
    try:
        job = session("unused", public, HIDDEN_VALUES, secret=(False, True))
        raw = run_session(pair, job, LIMITS)
    finally:
        pair.close()
    return raw, job, sent


def test_hidden_cases_run_only_after_every_shown_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """The public program compiling last does not let the hidden case (whose program is ready first) run
    first: no hidden value is in any shown output, and the executor is then reported not reusable."""
    raw, job, sent = _leaky_run(np.arange(3, dtype=np.float32), monkeypatch)
    assert len(job.sigs) == 2 and raw.stop is None and raw.executor_healthy
    assert sent[:2] == [0, 1]  # then the re-trace, run on the hidden case
    assert not np.isin(HIDDEN_VALUES, _shown_values(raw, job)).any()
    assert np.isin(HIDDEN_VALUES, raw.runs[1].outputs[0]).all()  # type: ignore[index]
    assert not raw.executor_reusable


def test_a_signature_a_hidden_case_shares_compiles_once_and_its_public_case_runs_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A public case and a hidden one of the same signature: one program, compiled once; the public case's
    output (shown) is computed before the executor holds the hidden values."""
    asked: list[int] = []
    request_program = Lanes.request_program

    def spy(self: Lanes, program_id: int, *rest: object) -> None:
        asked.append(program_id)
        request_program(self, program_id, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(Lanes, "request_program", spy)
    raw, job, sent = _leaky_run(np.arange(4, dtype=np.float32), monkeypatch)
    assert len(job.sigs) == 1 and raw.stop is None and raw.executor_healthy
    assert asked.count(0) == 1 and sent[:2] == [0, 1]
    np.testing.assert_array_equal(raw.runs[0].outputs[0], np.append(np.arange(4, dtype=np.float32), 2.0))  # type: ignore[index]
    assert np.isin(HIDDEN_VALUES, raw.runs[1].outputs[0]).all()  # type: ignore[index]


def test_an_executor_that_held_a_hidden_value_is_not_given_back_for_shown_work() -> None:
    """``executor_reusable`` (what the grader releases the pair with): False once a hidden case ran in the
    executor, so a pool that reused executors could never lend it to compute shown output; True after a
    job with nothing hidden (a Run) that ended cleanly."""
    given_back: list[bool] = []
    for hidden in (True, False):
        pair = GradingProcesses(
            fake("tracer", "good"), fake("executor", "good"), lambda _, healthy: given_back.append(healthy)
        )
        try:
            job = session("unused", np.arange(3, dtype=np.float32), HIDDEN_VALUES, secret=(False, hidden))
            raw = run_session(pair, job, LIMITS)
            assert raw.stop is None and raw.executor_healthy and sorted(raw.runs) == [0, 1]
            pair.release(raw.executor_reusable)
        finally:
            pair.executor.close()
            pair.close()
    assert given_back == [False, True]


@contextlib.contextmanager
def crowded_cpu(*workers: PopenProcess, hogs: int = 3) -> Iterator[None]:
    """The workers share one CPU with ``hogs`` busy loops: each gets about 1/(hogs+1) of it."""
    cpu = min(os.sched_getaffinity(0))
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(hogs)
    ]
    try:
        for pid in [w.pid for w in workers] + [p.pid for p in loops]:
            os.sched_setaffinity(pid, {cpu})
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def _crowded_run(executor_scenario: str, limits: SandboxLimits) -> tuple[RawRun, float]:
    """One public case on a fake executor that shares its CPU with busy loops: the raw run, its wall time."""
    executor = fake("executor", executor_scenario)
    pair = GradingProcesses(fake("tracer", "good"), executor)
    try:
        with crowded_cpu(executor):
            started = time.monotonic()
            raw = run_session(pair, session("unused", np.arange(3, dtype=np.float32)), limits)
            return raw, time.monotonic() - started
    finally:
        pair.close()


def test_a_case_is_charged_only_the_time_its_executor_ran() -> None:
    """A run needing 0.6 s of CPU, on a CPU shared four ways, takes over 2 s of wall time: against a 1 s case
    limit it is not the learner's time limit (the machine kept it waiting), and it completes."""
    raw, took = _crowded_run("busy_600ms", replace(LIMITS, case_time_s=1.0))
    assert raw.stop is None, raw.stop
    assert took > 1.0  # the wall time alone would have been a time limit
    assert raw.runs[0].outputs is not None


def test_a_spinning_case_is_still_a_time_limit_under_load() -> None:
    """An endless run on a crowded CPU still stops as the case's time limit, after about its limit in
    charged time (a few times that in wall time), never as the judge's failure."""
    limits = replace(LIMITS, case_time_s=0.5, wall_time_s=30.0)
    raw, took = _crowded_run("spin", limits)
    assert raw.stop is not None and raw.stop.timeout == "case" and raw.stop.phase == "run"
    assert took < monitor.OVERLOAD_FACTOR * limits.case_time_s


def test_no_secret_case_runs_while_the_tracer_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hidden cases that share a public signature are not run while user code could time the executor:
    the tracer is closed and its processes dead (even one that lingers after ``done``) first."""
    seen: list[tuple[int, bool, bool, int | None]] = []
    request_run = Lanes.request_run

    def spy(self: Lanes, program_id: int, case: monitor.CasePlan) -> None:
        seen.append((case.index, case.secret, self.tracer.open, self.tracer.worker.wait(0.5)))
        request_run(self, program_id, case)

    monkeypatch.setattr(Lanes, "request_run", spy)
    pair = GradingProcesses(fake("tracer", "linger"), fake("executor", "good"))
    try:
        inputs = [np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float32) + 10]
        job = session("unused", *inputs, secret=(False, True))
        assert len(job.sigs) == 1  # the hidden case runs the public program
        raw = run_session(pair, job, LIMITS)
    finally:
        pair.close()
    assert raw.stop is None and sorted(raw.runs) == [0, 1] and raw.retrace_run is not None
    assert raw.elapsed_s < 10  # the lingering tracer was ended, not waited for
    secret = [s for s in seen if s[1]]
    assert len(secret) == 2  # case 1, and the re-trace run on it
    assert all(not tracer_open and returncode is not None for _, _, tracer_open, returncode in secret), seen


def test_the_tracer_is_stopped_aside_and_hidden_cases_wait_for_the_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tracer that is done is stopped on a thread of its own (a cgroup freezer takes milliseconds the
    executor's replies need not wait for), and no hidden case is sent before that stop is over."""
    events: list[tuple[str, float, bool]] = []
    request_run = Lanes.request_run

    def spy(self: Lanes, program_id: int, case: monitor.CasePlan) -> None:
        events.append(("run", time.monotonic(), case.secret))
        request_run(self, program_id, case)

    monkeypatch.setattr(Lanes, "request_run", spy)
    pair = GradingProcesses(fake("tracer", "good"), fake("executor", "good"))
    stop, session_thread = pair.tracer.stop, threading.current_thread()

    def slow_stop() -> None:
        assert threading.current_thread() is not session_thread, "the stop holds the session's thread"
        time.sleep(0.3)
        stop()
        events.append(("stopped", time.monotonic(), False))

    pair.tracer.stop = slow_stop  # type: ignore[method-assign]
    try:
        job = session("unused", np.arange(3, dtype=np.float32), HIDDEN_VALUES, secret=(False, True))
        raw = run_session(pair, job, LIMITS)
    finally:
        pair.close()
    assert raw.stop is None and sorted(raw.runs) == [0, 1], raw.stop
    stopped = next(at for what, at, _ in events if what == "stopped")
    secret_runs = [at for what, at, secret in events if what == "run" and secret]
    assert secret_runs and min(secret_runs) >= stopped, events


@pytest.mark.parametrize(
    ("scenario", "words"),
    [
        ("deep_frame", "nested deeper"),
        ("huge_int_timing", "digits"),
        ("nan_timing", "non-finite"),
        ("forged_progress", "expected"),
        ("flood", "expected"),
        ("spin_garbage", "JSON"),
    ],
)
def test_hostile_tracer_bytes_give_a_clean_protocol_error(scenario: str, words: str) -> None:
    raw = drive(tracer=scenario)
    assert raw.stop is not None and raw.stop.party == "tracer", raw.stop
    assert raw.stop.protocol_error is not None and words in raw.stop.protocol_error, raw.stop.protocol_error
    assert raw.elapsed_s < LIMITS.case_time_s + 5


def test_a_frame_flood_keeps_memory_bounded() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    raw = drive(tracer="flood")
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert raw.stop is not None and raw.stop.protocol_error
    assert grew_mb < 100, f"the judge grew by {grew_mb:.0f} MiB"


def test_a_writer_that_never_pauses_cannot_starve_the_deadline() -> None:
    raw = drive(tracer="spin_output")
    assert raw.stop is not None and raw.stop.timeout == "case" and raw.stop.case == 0
    assert raw.elapsed_s < LIMITS.case_time_s + 5
    assert len(raw.output) == LIMITS.output_bytes and raw.output_total > LIMITS.output_bytes


# ------------------------------------------------------------------------- where the public output ends


def shown(raw: RawRun) -> bytes:
    assert raw.output_cut is not None, "a session with hidden cases must cut its output"
    return raw.output[: raw.output_cut]


def test_the_output_is_cut_at_the_tracers_mark_and_the_mark_is_taken_out() -> None:
    raw = drive()
    assert raw.stop is None
    assert shown(raw) == b"public print\n"
    assert raw.output == b"public print\nhidden print\n"
    assert raw.output_total == len(raw.output)  # the mark is not counted as printed either


def test_prints_that_arrive_after_public_done_are_still_shown() -> None:
    """A container engine relays prints and frames separately, so a public print may arrive after the
    ``public_done`` frame written after it: the judge waits for the mark, not for a quiet moment."""
    raw = drive(tracer="late_output")
    assert raw.stop is None
    assert shown(raw) == b"public print\n"
    assert b"hidden print" in raw.output[raw.output_cut :]


def test_without_a_mark_the_output_is_cut_where_it_stands_after_the_wait() -> None:
    raw = drive(tracer="no_mark")
    assert raw.stop is None
    assert shown(raw) == b"public print\n"  # it was in the pipe before public_done
    assert b"hidden print" not in shown(raw)
    assert MARK_WAIT_S <= raw.elapsed_s < MARK_WAIT_S + 10


def test_waiting_for_the_mark_does_not_stop_serving_the_executor() -> None:
    """A compile that ends while the judge waits for the mark is read as it ends: the judge's own wait
    is never charged to the program as a time limit."""
    raw = drive(tracer="no_mark", executor="slow_compile")  # 1.2 s per compile; case time 2 s; wait 2 s
    assert raw.stop is None, raw.stop
    assert sorted(raw.runs) == [0, 1] and raw.retrace_run is not None
    assert raw.elapsed_s >= MARK_WAIT_S


def test_a_forged_early_mark_only_hides_the_forgers_own_prints() -> None:
    raw = drive(tracer="forged_mark")
    assert shown(raw) == b"public print\n"
    assert b"hidden print" not in shown(raw) and b"\x00" not in shown(raw)


def test_a_mark_past_the_output_cap_still_cuts_and_is_never_kept() -> None:
    limits = replace(LIMITS, output_bytes=10_000)
    raw = drive(limits=limits)
    assert raw.stop is None and shown(raw) == b"public print\n"
    raw = drive(tracer="big_output", limits=limits)
    assert raw.stop is None
    assert shown(raw) == b"p" * 10_000 and raw.output_cut == len(raw.output) == 10_000
    assert raw.output_total == 100_000 + len(b"hidden print\n")


def test_the_mark_is_found_however_the_stream_is_split() -> None:
    mark = new_mark()
    assert mark != new_mark() and b"\x00" in mark
    stream = b"x" * 37 + mark[:3] + b"y" + mark + b"z" * 5 + mark
    for size in (1, 2, 3, len(mark) - 1, len(mark), len(mark) + 1, 64, len(stream)):
        scanner = MarkScanner(mark)
        found = [scanner.feed(stream[i : i + size]) for i in range(0, len(stream), size)]
        assert found[-1] == stream.index(mark) == 41, size  # the first whole mark, not the partial one
    assert MarkScanner(mark).feed(b"nothing here") is None


def test_silence_while_loading_is_a_time_limit() -> None:
    raw = drive(tracer="silent")
    assert raw.stop is not None and raw.stop.phase == "load" and raw.stop.timeout == "case"


@pytest.mark.parametrize(
    ("scenario", "words"),
    [
        ("huge_shape", "digits"),
        ("big_dim", "dimension"),
        ("huge_int_timing", "digits"),
        ("junk_unasked", "out of range"),
    ],
)
def test_hostile_executor_bytes_give_a_clean_protocol_error(scenario: str, words: str) -> None:
    raw = drive(executor=scenario)
    assert raw.stop is not None and raw.stop.party == "executor", raw.stop
    assert raw.stop.protocol_error is not None and words in raw.stop.protocol_error, raw.stop.protocol_error
    assert not raw.executor_healthy


def test_a_hung_executor_is_a_time_limit_and_is_not_reused() -> None:
    raw = drive(executor="hang")
    assert raw.stop is not None and raw.stop.party == "executor" and raw.stop.timeout == "case"
    assert raw.stop.case == 0 and not raw.executor_healthy


def test_the_wall_limit_holds_whatever_the_pair_does() -> None:
    raw = drive(tracer="forged_progress", limits=replace(LIMITS, case_time_s=60.0, wall_time_s=2.0))
    assert raw.stop is not None
    assert raw.elapsed_s < 2.0 + 5


def test_every_record_interprets_to_a_verdict_from_the_closed_set() -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    cases = list(problem.cases[:2])
    for tracer, executor in [
        ("deep_frame", "good"),
        ("flood", "good"),
        ("good", "huge_shape"),
        ("silent", "good"),
    ]:
        pair = GradingProcesses(fake("tracer", tracer), fake("executor", executor))
        try:
            job = build_session(problem, "unused", cases, [False, True], 1 << 20)
            raw = run_session(pair, job, LIMITS)
        finally:
            pair.close()
        expected = [{"clipped": c.inputs[0], "global_norm": np.array(1.0, np.float32)} for c in cases]
        result = interpret(
            problem, cases, ["public", "hidden"], expected, raw, LIMITS, job, backend="fake", elapsed_ms=1.0
        )
        assert result.verdict in set(Verdict) - {Verdict.ACCEPTED, Verdict.NOT_RUN, Verdict.INTERNAL_ERROR}
