"""The monitor survives any bytes: fake tracers and executors (tests/fake_worker.py, no JAX) that send
frames 100,000 levels deep, 400-digit timings, NaN, leaves of shape [0, 10**30], floods, garbage without
pause, forged progress, or nothing at all. Every run ends with a clean record in bounded time and memory."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from judge.grader import build_session, interpret
from judge.problems import ProblemSet
from judge.verdicts import Verdict
from sandbox import monitor
from sandbox.base import Pair, PopenWorker
from sandbox.limits import SandboxLimits
from sandbox.monitor import MARK_WAIT_S, RawRun, SessionJob, run_session
from sandbox.output_mark import MarkScanner, new_mark
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT
from tests.sessions import session

FAKE = str(ROOT / "tests" / "fake_worker.py")
LIMITS = SandboxLimits(case_time_s=2.0, wall_time_s=20.0, startup_time_s=20.0)


def fake(role: str, scenario: str) -> PopenWorker:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return PopenWorker("fake", [sys.executable, FAKE, role, scenario], env, role=role)  # type: ignore[arg-type]


def drive(
    tracer: str = "good", executor: str = "good", limits: SandboxLimits = LIMITS, **job: object
) -> RawRun:
    pair = Pair(fake("tracer", tracer), fake("executor", executor))
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
    send_program = monitor._Session._send_program

    def spy(self: monitor._Session, lane: monitor._Lane, kind: str, program_id: int, *rest: object) -> None:
        asked.append(program_id)
        send_program(self, lane, kind, program_id, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(monitor._Session, "_send_program", spy)
    raw = drive(tracer="stateless")
    assert raw.stop is None and raw.executor_healthy and sorted(raw.runs) == [0, 1]
    assert raw.retrace_run is not None and raw.retrace_run.same_program
    assert monitor.RETRACE_ID not in asked and raw.retrace is not None and raw.retrace.compiled is None
    asked.clear()
    raw = drive()
    assert monitor.RETRACE_ID in asked and raw.retrace_run is not None and not raw.retrace_run.same_program


HIDDEN_VALUES = np.arange(4, dtype=np.float32) + 1000  # planted in the hidden case: a canary


def _shown_values(raw: RawRun, job: SessionJob) -> np.ndarray:
    shown = [raw.runs[c.index].outputs for c in job.cases if not c.secret and c.index in raw.runs]
    return np.concatenate([np.ravel(x) for outputs in shown for x in outputs or []])


def test_a_secret_executor_computes_the_hidden_cases_and_nothing_shown() -> None:
    """With a secret executor in the pair, hidden values never reach the shown one: even an executor that
    returns every value it ever held, whose public program compiles last, shows only public values."""
    pair = Pair(
        fake("tracer", "good"), fake("executor", "leaky_slow_first"), secret=fake("executor", "leaky")
    )
    try:
        job = session("unused", np.arange(3, dtype=np.float32), HIDDEN_VALUES, secret=(False, True))
        raw = run_session(pair, job, LIMITS)
    finally:
        pair.close()
    assert raw.stop is None and raw.executor_healthy
    assert raw.lanes_healthy == {"shown": True, "secret": True}
    assert not np.isin(HIDDEN_VALUES, _shown_values(raw, job)).any()
    assert np.isin(HIDDEN_VALUES, raw.runs[1].outputs[0]).all()  # type: ignore[index]


def _shared_signature_run(
    shown: str, secret: str, display: monitor.Display | None
) -> tuple[RawRun, SessionJob]:
    """A public case and a hidden one of the same signature, through a pair with a secret executor."""
    limits = replace(LIMITS, case_time_s=0.5)
    pair = Pair(fake("tracer", "good"), fake("executor", shown), secret=fake("executor", secret))
    try:
        job = session("unused", np.arange(4, dtype=np.float32), HIDDEN_VALUES, secret=(False, True))
        raw = run_session(pair, job, limits, display=display)
    finally:
        pair.close()
    return raw, job


def test_a_signature_with_a_hidden_case_compiles_once_in_the_secret_executor() -> None:
    """Every case of a signature a hidden case has runs in the secret executor (one compile, not one per
    executor); a public case there counts for its verdict only, and nothing of it is shown by default."""
    raw, _ = _shared_signature_run("hang", "leaky", None)  # the shown executor would hang if it were asked
    assert raw.stop is None and raw.executor_healthy
    assert raw.runs[0].lane == "secret" and raw.runs[1].lane == "secret"
    assert raw.display == {} and raw.lanes_healthy == {"shown": True, "secret": True}


def test_a_public_case_the_secret_executor_graded_is_shown_from_the_shown_executor() -> None:
    """When the judge wants a public case shown (it failed), the shown executor compiles and runs it again:
    what the learner sees never comes from the process that held the hidden values."""
    asked: list[int] = []

    def display(index: int, raw: RawRun) -> bool:
        asked.append(index)
        return True

    raw, _ = _shared_signature_run("leaky", "leaky", display)
    assert raw.stop is None and raw.executor_healthy and asked == [0]
    shown = raw.display[0]
    assert shown.lane == "shown" and shown.error is None and raw.display_pending == set()
    np.testing.assert_array_equal(shown.outputs[0], np.append(np.arange(4, dtype=np.float32), 2.0))  # type: ignore[index]
    assert not np.isin(HIDDEN_VALUES, np.ravel(shown.outputs[0])).any()  # type: ignore[index]
    assert np.isin(HIDDEN_VALUES, raw.runs[1].outputs[0]).all()  # type: ignore[index]


def test_showing_a_public_case_that_fails_leaves_its_verdict_alone() -> None:
    """A shown executor that hangs while showing a case is stopped and retired; the verdicts stand (the
    secret executor's runs), and the case is shown as a hidden one is."""
    raw, _ = _shared_signature_run("hang", "good", lambda index, raw: True)
    assert raw.stop is None
    assert sorted(raw.runs) == [0, 1] and raw.retrace_run is not None
    assert raw.display[0].error is not None and raw.display[0].error["kind"] == "display"
    assert raw.lanes_healthy == {"shown": False, "secret": True}


def test_cases_run_in_case_order_across_the_two_executors() -> None:
    """A public case over its time limit stops the run there, as with one executor: the hidden case after it
    is never run in the secret executor meanwhile (its verdict would otherwise decide the submission)."""
    limits = replace(LIMITS, case_time_s=0.5)
    pair = Pair(fake("tracer", "good"), fake("executor", "spin"), secret=fake("executor", "good"))
    try:
        job = session("unused", np.arange(3, dtype=np.float32), HIDDEN_VALUES, secret=(False, True))
        raw = run_session(pair, job, limits)
    finally:
        pair.close()
    assert raw.stop is not None and raw.stop.timeout == "case" and raw.stop.case == 0
    assert 1 not in raw.runs


def test_one_executor_runs_hidden_cases_only_after_every_shown_result() -> None:
    """Without a secret executor, the public program compiling last does not let a hidden case run first,
    and the executor is then reported unfit for shown work (its pool retires it)."""
    pair = Pair(fake("tracer", "good"), fake("executor", "leaky_slow_first"))
    try:
        job = session("unused", np.arange(3, dtype=np.float32), HIDDEN_VALUES, secret=(False, True))
        raw = run_session(pair, job, LIMITS)
    finally:
        pair.close()
    assert raw.stop is None and raw.executor_healthy
    assert raw.lanes_healthy == {"shown": False}
    assert not np.isin(HIDDEN_VALUES, _shown_values(raw, job)).any()


def test_no_hidden_value_of_an_earlier_job_reaches_a_later_jobs_shown_output() -> None:
    """Executors are reused across jobs: the shown one of job 2 never held job 1's hidden values."""
    shown, secret = fake("executor", "leaky"), fake("executor", "leaky")
    tracers = [fake("tracer", "good"), fake("tracer", "good")]
    try:
        first = session("unused", np.arange(3, dtype=np.float32), HIDDEN_VALUES, secret=(False, True))
        raw = run_session(Pair(tracers[0], shown, secret=secret), first, LIMITS)
        assert raw.lanes_healthy == {"shown": True, "secret": True}
        second = session(
            "unused", np.arange(3, dtype=np.float32) + 7, np.ones(4, np.float32), secret=(False, False)
        )
        raw = run_session(Pair(tracers[1], shown, secret=secret), second, LIMITS)
    finally:
        for worker in (shown, secret, *tracers):
            worker.close()
    assert raw.stop is None
    assert not np.isin(HIDDEN_VALUES, _shown_values(raw, second)).any()


@contextlib.contextmanager
def crowded_cpu(*workers: PopenWorker, hogs: int = 3) -> Iterator[None]:
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
    pair = Pair(fake("tracer", "good"), executor)
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
    request_run = monitor._Session._request_run

    def spy(self: monitor._Session, lane: monitor._Lane, program_id: int, case: monitor.CasePlan) -> None:
        seen.append((case.index, case.secret, self.tracer_open, self.pair.tracer.wait(0.5)))
        request_run(self, lane, program_id, case)

    monkeypatch.setattr(monitor._Session, "_request_run", spy)
    pair = Pair(fake("tracer", "linger"), fake("executor", "good"))
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
        pair = Pair(fake("tracer", tracer), fake("executor", executor))
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
