"""Under load the judge answers later, with the same verdicts (the start-up side: ``sandbox.session.starts``).

What made a loaded host fail (measured, see ``bench/bench_load.py``): a worker's start needs a fixed amount
of CPU (~0.7 s here) but gets a share of it that shrinks with every other start and every busy process, so
its WALL time grows with the load and with the number of starts at once, while a fixed 30 s wall limit
killed it and began it again: N starts that each need more than 30 s at 1/N of the share never finish.
These tests pin the fix: a start is judged by the CPU time it got (with a stall limit and a wall cap),
starts are admitted a bounded number at once host-wide, and a lost worker ends in a retry, never a hang.

The ``load`` tests run under ``tests.load.machine_load`` (JAX imports and compiles in loops, busy loops,
page-cache eviction, fsync-heavy I/O; killed at exit).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from judge.core.engine import Engine
from judge.core.problems import load_problem
from judge.core.verdicts import Verdict
from judge.service.app import create_app
from judge.service.state import Services
from sandbox.backends import get_backend
from sandbox.backends.base import Backend, PopenProcess, SandboxedProcess
from sandbox.errors import ProcessStartError
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import ProcessPool
from sandbox.session.starts import StartClock, StartGate
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT
from tests.load import LoadSpec, machine_load
from tests.service_support import make_settings

#: A program that burns ``CPU`` seconds of CPU (its own thread time), then reports ready and waits.
_START = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, {root!r})
    from sandbox.shared.wire import encode_frame
    fd = int(sys.argv[sys.argv.index("--result-fd") + 1])
    mode, amount = sys.argv[1], float(sys.argv[2])
    if mode == "sleep":
        time.sleep(amount)
    else:
        until = time.thread_time() + amount
        while time.thread_time() < until:
            pass
    os.write(fd, encode_frame({{"type": "ready"}}))
    sys.stdin.read()
    """
).format(root=str(ROOT))


def _program(mode: str, amount: float, *, prefix: tuple[str, ...] = ()) -> PopenProcess:
    argv = [*prefix, sys.executable, "-c", _START, mode, str(amount)]
    return PopenProcess("test", argv, {"PATH": "/usr/bin:/bin"}, role="executor")


class _Backend(Backend):
    """Starts ``_START`` programs (for pools): ``mode``/``amount`` as given; counts starts."""

    name = "test"

    def __init__(self, mode: str, amount: float, prefix: tuple[str, ...] = ()) -> None:
        self.mode, self.amount, self.prefix = mode, amount, prefix
        self.starts = 0
        self.lock = threading.Lock()

    def available(self) -> str | None:
        return None

    def protections(self) -> list:  # type: ignore[type-arg]
        return []

    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        return self.start_executor(limits, slot)

    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        with self.lock:
            self.starts += 1
        return _program(self.mode, self.amount, prefix=self.prefix)


@pytest.fixture
def gate(tmp_path: Path) -> StartGate:
    return StartGate(tmp_path / "gate", limit=1)


# ------------------------------------------------------------------------------------------ the clock


class _Cpu:
    def __init__(self) -> None:
        self.value: float | None = 0.0

    def __call__(self) -> float | None:
        return self.value


def test_a_start_that_progresses_slowly_is_waited_for_past_its_budget_in_wall_time() -> None:
    cpu = _Cpu()
    clock = StartClock(1.0, cpu, started_at=time.monotonic() - 5.0, stall_s=2.0)
    for step in range(4):  # 5 s of wall time and more, 0.1 s of CPU now and then: progressing
        cpu.value = 0.1 * (step + 1)
        assert clock.overdue() is None
    assert clock.progress().cpu_s == pytest.approx(0.4)


def test_a_start_that_used_its_cpu_budget_has_had_its_chance() -> None:
    cpu = _Cpu()
    clock = StartClock(1.0, cpu)
    cpu.value = 1.05
    why = clock.overdue()
    assert why is not None and "1.1 s of CPU" in why


def test_a_start_that_gets_no_cpu_at_all_is_stuck() -> None:
    cpu = _Cpu()
    cpu.value = 0.3
    clock = StartClock(5.0, cpu, stall_s=0.3)
    assert clock.overdue() is None
    time.sleep(0.4)
    why = clock.overdue()
    assert why is not None and "stuck" in why and "no CPU time" in why


def test_a_start_has_a_wall_cap_even_while_it_progresses() -> None:
    cpu = _Cpu()
    clock = StartClock(1.0, cpu, started_at=time.monotonic() - 11.0, stall_s=100.0)
    cpu.value = 0.5
    why = clock.overdue()
    assert why is not None and "overloaded" in why


def test_without_a_cpu_account_the_budget_is_wall_time() -> None:
    cpu = _Cpu()
    cpu.value = None
    assert StartClock(1.0, cpu, started_at=time.monotonic() - 0.5).overdue() is None
    assert StartClock(1.0, cpu, started_at=time.monotonic() - 1.5).overdue() is not None


# ------------------------------------------------------------------------------------------ real starts


def _starved() -> tuple[str, ...]:
    """A prefix that puts a program on CPU 0, which spinners keep busy (each in a session of its own, as
    the worker is: the scheduler shares a CPU between sessions, whatever their nice values)."""
    return ("/usr/bin/taskset", "-c", "0")


@pytest.fixture
def cpu0_spinners() -> Iterator[None]:
    code = "import os; os.sched_setaffinity(0, {0})\nwhile True: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", code], start_new_session=True) for _ in range(7)]
    try:
        time.sleep(0.3)
        yield
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()


def test_a_starved_start_is_ready_later_instead_of_killed(cpu0_spinners: None) -> None:
    """It needs 0.3 s of CPU and gets a few percent of one core: many seconds of wall time, within a 1 s
    CPU budget. A wall limit of 1 s would have killed it."""
    worker = _program("burn", 0.3, prefix=_starved())
    try:
        began = time.monotonic()
        worker.wait_ready(1.0)
        waited = time.monotonic() - began
        assert worker.ready_info == {"type": "ready"}
        assert waited > 1.0, f"not starved ({waited:.2f} s): the test proves nothing"
    finally:
        worker.close()


def test_a_spinning_start_fails_after_its_cpu_budget_with_the_reason() -> None:
    worker = _program("burn", 3600)
    try:
        began = time.monotonic()
        with pytest.raises(ProcessStartError, match=r"did not report ready after 1\.\d s of CPU"):
            worker.wait_ready(1.0)
        assert time.monotonic() - began < 10
    finally:
        worker.close()


def test_a_stuck_start_fails_within_its_stall_limit() -> None:
    worker = _program("sleep", 3600)
    try:
        began = time.monotonic()
        with pytest.raises(ProcessStartError, match="stuck"):
            worker.wait_ready(1.0)
        assert time.monotonic() - began < 10
    finally:
        worker.close()


# ------------------------------------------------------------------------------------------ admission


def test_the_gate_admits_a_bounded_number_of_starts_across_processes(tmp_path: Path) -> None:
    gate = StartGate(tmp_path / "gate", limit=2)
    first = gate.try_acquire()
    assert first is not None
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
         "from sandbox.session.starts import StartGate\nfrom pathlib import Path\n"
         f"t = StartGate(Path({str(tmp_path / 'gate')!r}), limit=2).try_acquire()\n"
         "print(t is not None, flush=True)\nimport sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
        assert gate.try_acquire() is None, "a third start was admitted while two places were taken"
        holder.kill()  # the kernel releases a dead holder's place
        holder.wait()
        second = gate.acquire(5.0)
        assert second is not None
        first.release()
        first.release()  # idempotent
        assert gate.held == 1
        second.release()
    finally:
        holder.kill()
        holder.wait()
        if holder.stdin is not None:
            holder.stdin.close()
        if holder.stdout is not None:
            holder.stdout.close()


def test_a_pool_starts_no_more_at_once_than_the_gate_admits(gate: StartGate) -> None:
    backend = _Backend("burn", 0.2)
    pool = ProcessPool(
        backend, SandboxLimits(startup_time_s=10.0), 3, start=backend.start_executor, gate=gate
    )
    most = 0
    statuses: set[str] = set()
    try:
        deadline = time.monotonic() + 60
        while len(pool.idle()) < 3 and time.monotonic() < deadline:
            most = max(most, int(pool.stats()["starting"] or 0))
            statuses.add(pool.start_status() or "")
            time.sleep(0.02)
        assert pool.wait_full(1), pool.stats()
    finally:
        pool.close()
    assert most == 1, f"{most} starts ran at once through a gate of 1"
    assert backend.starts == 3, "a start was killed and begun again"
    assert any("start gate" in s for s in statuses), statuses


def test_a_start_killed_mid_wait_is_retried_with_backoff_not_waited_for(gate: StartGate) -> None:
    backend = _Backend("sleep", 3.0)  # ready after 3 s
    pool = ProcessPool(
        backend, SandboxLimits(startup_time_s=20.0), 1, start=backend.start_executor, gate=gate
    )
    try:
        deadline = time.monotonic() + 10
        while not pool.stats()["starting"] and time.monotonic() < deadline:
            time.sleep(0.02)
        (victim,) = pool.state.pending  # the start under way
        victim.kill()
        assert pool.wait_full(30), pool.stats()
        stats = pool.stats()
        assert backend.starts == 2 and "exited before it was ready" in str(stats["last_error"])
        assert gate.held == 0, "a place of the gate is still held after every start settled"
    finally:
        pool.close()


def test_readiness_says_what_the_starts_are_doing(gate: StartGate) -> None:
    backend = _Backend("sleep", 2.0)
    pool = ProcessPool(
        backend, SandboxLimits(startup_time_s=20.0), 2, start=backend.start_executor, gate=gate
    )
    try:
        time.sleep(0.5)
        status = pool.start_status()
        assert status is not None and "1 starting (the oldest for" in status and "start gate" in status
        state = pool.start_state()  # the same, as fields
        assert state is not None and (state.starting, state.gated, state.gate_limit) == (1, 1, 1)
        assert state.oldest is not None and state.retry_in_s is None
        assert pool.wait_full(30)
        assert pool.start_status() is None and pool.start_state() is None
    finally:
        pool.close()


# ------------------------------------------------------------------------------------------ under load

LOAD = LoadSpec(jax=4, spinners=8, evict=True, io=2, duration_s=900)
SPIN = "def scale_tree(tree, factor):\n    while True:\n        pass\n"


@pytest.fixture(scope="module")
def loaded() -> Iterator[None]:
    with machine_load(LOAD, warm_s=10.0):
        yield


@pytest.fixture(scope="module")
def bwrap() -> Iterator[Backend]:
    backend = get_backend("bwrap")
    reason = backend.available()
    if reason is not None:
        pytest.skip(f"bwrap: {reason}")
    yield backend
    backend.close()


@dataclass
class Warm:
    engine: Engine
    ready_s: float
    reasons: set[str]
    stats: dict[str, int | str | None]


@pytest.fixture(scope="module")
def warm(loaded: None, bwrap: Backend) -> Iterator[Warm]:
    """An engine started on the loaded machine, waited for until ready (600 s at most)."""
    began = time.monotonic()
    reasons: set[str] = set()
    with Engine(bwrap, workers=2, slot_base=900) as engine:
        while (why := engine.readiness()) is not None and time.monotonic() - began < 600:
            reasons.add(why)
            time.sleep(0.5)
        yield Warm(engine, time.monotonic() - began, reasons, engine.stats())


@pytest.mark.slow
def test_under_load_the_engine_becomes_ready_without_killing_a_start(warm: Warm) -> None:
    assert warm.engine.readiness() is None, f"not ready after {warm.ready_s:.0f} s: {warm.reasons}"
    assert not any("did not report ready" in r for r in warm.reasons), warm.reasons
    assert warm.stats["discarded"] == 0 and not warm.stats["last_error"], warm.stats
    assert any("starting" in r for r in warm.reasons) or warm.ready_s < 1, warm.reasons


@pytest.mark.slow
def test_under_load_a_correct_solution_is_accepted(warm: Warm) -> None:
    problem = load_problem(FIXTURES / FIXTURE_SLUG)
    accepted = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "tree_util_map.py").read_text()
    result = warm.engine.grade(problem, accepted)
    assert result.verdict is Verdict.ACCEPTED, result.message


@pytest.mark.slow
def test_under_load_a_spinning_solution_is_time_limit_exceeded(warm: Warm) -> None:
    problem = load_problem(FIXTURES / FIXTURE_SLUG)
    began = time.monotonic()
    result = warm.engine.grade(problem, SPIN)
    assert result.verdict is Verdict.TIME_LIMIT_EXCEEDED, result.message
    assert time.monotonic() - began < 10 * problem.spec.limits.case_time_s + 60


@pytest.mark.slow
def test_under_load_an_executor_killed_mid_grading_ends_it_and_is_replaced(warm: Warm) -> None:
    """No hang: the grading ends (its own failure, said as such, or a verdict if the kill came too late)
    within a bounded time, and the pool starts a replacement."""
    problem = load_problem(FIXTURES / FIXTURE_SLUG)
    accepted = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "tree_util_map.py").read_text()
    executors = warm.engine.pool.executors._pool  # the one-device executors' pool
    started = executors.state.started
    outcome: list[object] = []

    def grade() -> None:
        try:
            outcome.append(warm.engine.grade(problem, accepted))
        except Exception as exc:  # the judge's own failure: a service retries it
            outcome.append(exc)

    thread = threading.Thread(target=grade, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not executors.state.handed and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    victims = list(executors.state.handed)
    for worker in victims:
        worker.kill()
    thread.join(300)
    assert not thread.is_alive(), "the grading hangs after its executor was killed"
    (result,) = outcome
    if isinstance(result, Exception):
        assert str(result), "the judge's failure carries no reason"
    else:
        assert result.verdict in (Verdict.INTERNAL_ERROR, Verdict.ACCEPTED), result  # type: ignore[attr-defined]
    assert victims, "no executor was handed out to kill"
    assert warm.engine.pool.wait_full(300), warm.engine.pool.stats()
    assert executors.state.started > started, "the killed executor was not replaced"


@pytest.mark.slow
def test_under_load_the_service_becomes_ready_and_readyz_says_why_until_then(
    loaded: None, bwrap: Backend, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path / "data", sandbox_slot_base=880)
    services = Services.build(settings, backend=bwrap)
    app = create_app(services=services, manage=True)
    reasons: list[str] = []
    with TestClient(app, raise_server_exceptions=False) as client:
        deadline = time.monotonic() + 600
        while (response := client.get("/readyz")).status_code != 200 and time.monotonic() < deadline:
            assert response.status_code == 503
            reasons.append(str(response.json()["reason"]))
            time.sleep(0.25)
        assert response.status_code == 200, reasons[-3:]
        code = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "tree_util_map.py").read_text()
        run = client.post(f"/api/problems/{FIXTURE_SLUG}/run", json={"code": code})
        assert run.status_code == 200, run.text
    assert reasons, "ready at once: the load did not slow the start, the test proves nothing"
    assert not any("did not report ready" in r or "failed" in r for r in reasons), reasons


@pytest.mark.slow
def test_under_load_judge_check_werror_stays_green_and_reports_progress(loaded: None, bwrap: Backend) -> None:
    env = {**os.environ, "JUDGE_SANDBOX": "bwrap"}
    proc = subprocess.run(
        [sys.executable, "-m", "judge", "check", FIXTURE_SLUG, "--problems", str(FIXTURES), "--werror"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    quiet = subprocess.run(
        [sys.executable, "-m", "judge", "check", FIXTURE_SLUG, "--problems", str(FIXTURES),
         "--skip-solutions", "--format", "json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert quiet.stderr.strip() == "", "progress lines with --format json"
    lines = [line for line in proc.stderr.splitlines() if re.search(r": solutions \d+/\d+ ", line)]
    graded = len(list((FIXTURES / FIXTURE_SLUG / "solutions").glob("*/*.py"))) + 1  # and the starter
    assert len(lines) == graded, proc.stderr[-3000:]
