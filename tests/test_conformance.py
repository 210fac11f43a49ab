"""The sandbox contract, one battery for every backend (optax style: same tests, parametrized by backend).

Each test drives a raw session through ``sandbox.session.driver.run_session`` on a tracer and an executor and
checks what any backend must deliver: ready on the private channels, programs and results as data, prints
captured apart from results and capped, limits turned into the right stop, large jobs, an executor that serves
job after job, forked tracers that behave like started ones, and nothing left behind.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from judge.core.output_tree import assemble
from sandbox.backends import get_backend
from sandbox.backends.base import Backend, GradingProcesses
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.driver import run_session
from sandbox.session.monitor import RawRun, SessionJob
from tests.conftest import available_backends
from tests.sessions import outputs, run, session

pytestmark = pytest.mark.slow

LIMITS = SandboxLimits(case_time_s=8.0, wall_time_s=60.0, memory_mb=1536, startup_time_s=90.0)
DOUBLE = "import jax\n\ndef f(x, s):\n    return jax.tree.map(lambda v: v * s, x)\n"
#: Tracer slots of this module (another module's workers use others; a busy one is skipped).
SLOT = 600


@pytest.fixture(params=available_backends())
def backend(request: pytest.FixtureRequest) -> Any:
    backend = get_backend(str(request.param))
    yield backend
    backend.close()


def tree_of(raw: RawRun, job: SessionJob, index: int) -> Any:
    """Case ``index``'s output as the judge assembles it (skeleton + the executor's leaves)."""
    return assemble(raw.programs[job.cases[index].sig].skeleton, outputs(raw, index), 1 << 26)


def go(backend: Backend, job: SessionJob, limits: SandboxLimits = LIMITS, **kw: Any) -> RawRun:
    return run(backend, job, limits, slot=SLOT, **kw)


def test_results_come_back_as_data_in_order(backend: Backend) -> None:
    tree: dict[str, Any] = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": [{"c": np.float32(1.5)}]}
    bf16 = np.array([1.0, 0.5], ml_dtypes.bfloat16)
    job = session(DOUBLE, tree, bf16, tree)
    raw = go(backend, job)
    assert raw.stop is None and raw.executor_healthy, raw.stop
    assert sorted(raw.runs) == [0, 1, 2]
    first = tree_of(raw, job, 0)
    np.testing.assert_array_equal(first["w"], tree["w"] * 2)
    assert first["b"][0]["c"].shape == () and first["b"][0]["c"] == 3.0
    second = tree_of(raw, job, 1)
    assert second.dtype == ml_dtypes.bfloat16, "a Python-float scale must keep bfloat16 leaves bfloat16"
    assert len(raw.programs) == 2, "cases with one signature share one program"
    assert raw.retrace_run is not None and raw.retrace_run.same_program, (
        "a stateless re-trace is the same program"
    )


def test_forked_tracers_give_the_same_results(backend: Backend) -> None:
    tree = {"a": np.linspace(-1, 1, 5, dtype=np.float32), "b": [np.ones((2, 2), np.float32)]}
    started = go(backend, session(DOUBLE, tree))
    forked = go(backend, session(DOUBLE, tree), forked=True)
    assert forked.stop is None, forked.stop
    for a, b in zip(outputs(started, 0), outputs(forked, 0), strict=True):
        np.testing.assert_array_equal(a, b)


def test_prints_are_captured_apart_from_results(backend: Backend) -> None:
    code = "print('hello from the module')\n" + DOUBLE.replace(
        "    return", "    print('tracing')\n    jax.debug.print('debug {}', s)\n    return"
    )
    raw = go(backend, session(code, np.ones(2, np.float32)))
    assert raw.runs[0].outputs is not None
    text = raw.output.decode()
    assert "hello from the module" in text and "tracing" in text
    assert "debug 2.0" in text, "jax.debug.print runs on public values for the learner's output"
    assert raw.programs[0].debug


def test_output_is_capped_and_the_run_still_finishes(backend: Backend) -> None:
    code = "import sys\nsys.stdout.write('x' * (8 * 1024 * 1024))\n" + DOUBLE
    limits = replace(LIMITS, output_bytes=4096)
    raw = go(backend, session(code, np.ones(2, np.float32)), limits)
    assert raw.runs[0].outputs is not None
    assert len(raw.output) == 4096 and raw.output_total >= 8 * 1024 * 1024 and raw.output_truncated


def test_a_job_larger_than_a_pipe_buffer_arrives_whole(backend: Backend) -> None:
    big = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)  # 256 KiB of leaves
    raw = go(backend, session(DOUBLE, big))
    np.testing.assert_array_equal(outputs(raw, 0)[0], big * 2)


def test_case_time_limit_stops_at_the_case_being_traced(backend: Backend) -> None:
    code = "def f(x, s):\n    if x.shape[0] == 3:\n        while True:\n            pass\n    return x\n"
    limits = replace(LIMITS, case_time_s=2.0)
    raw = go(
        backend, session(code, np.ones(2, np.float32), np.ones(3, np.float32), np.ones(2, np.float32)), limits
    )
    assert raw.stop is not None and raw.stop.timeout == "case" and raw.stop.case == 1
    assert raw.stop.party == "tracer" and raw.stop.phase == "trace"
    assert 0 in raw.runs and 1 not in raw.runs
    assert raw.elapsed_s < 2.0 + 15


def test_wall_time_limit(backend: Backend) -> None:
    code = "import time\n\ndef f(x, s):\n    time.sleep(0.8)\n    return x\n"
    inputs = [np.ones(n, np.float32) for n in range(1, 9)]  # each case is quick; together they are not
    limits = replace(LIMITS, case_time_s=5.0, wall_time_s=3.0)
    raw = go(backend, session(code, *inputs), limits)
    assert raw.stop is not None and raw.stop.timeout == "wall"
    assert 0 < len(raw.runs) < len(inputs)


def test_memory_limit_is_reported(backend: Backend) -> None:
    code = "import numpy as np\n\ndef f(x, s):\n    hog = np.ones((6 * 1024**3) // 8)\n    return x\n"
    raw = go(backend, session(code, np.ones(2, np.float32)), replace(LIMITS, memory_mb=1024))
    failure = raw.programs.get(0) and raw.programs[0].failure
    oom = raw.stop is not None and raw.stop.oom_killed
    assert oom or (failure and failure.verdict == "memory_limit_exceeded"), (raw.stop, failure)


def test_load_errors_are_reported_not_raised(backend: Backend) -> None:
    raw = go(backend, session("def f(x, s):\n    return x +\n", np.ones(1, np.float32)))
    assert raw.load is not None and raw.load.type == "load_error"
    assert raw.load.verdict == "compile_error" and "line 2" in raw.load.message
    assert raw.executor_healthy, "the executor did nothing and closed the job cleanly"


def test_early_exit_while_tracing_stops_at_that_case(backend: Backend) -> None:
    raw = go(backend, session("import os\n\ndef f(x, s):\n    os._exit(7)\n", np.ones(1, np.float32)))
    assert raw.runs == {}
    assert raw.stop is not None and raw.stop.case == 0 and raw.stop.timeout is None
    assert raw.stop.returncode not in (None, 0)


def test_an_output_over_the_cap_is_refused_before_it_runs(backend: Backend) -> None:
    code = (
        "import jax.numpy as jnp\n\ndef f(x, s):\n    return jnp.zeros((64, 1024, 1024), jnp.float32) + s\n"
    )
    raw = go(backend, session(code, np.ones(1, np.float32), max_output_bytes=32 << 20))
    refused = raw.programs[0].refused
    assert refused is not None and refused.kind == "output_limit", raw.programs[0]
    assert raw.executor_healthy


def test_an_executor_serves_job_after_job(backend: Backend) -> None:
    tracer = backend.start_tracer(LIMITS, SLOT)
    executor = backend.start_executor(LIMITS, SLOT)
    first = run_session(GradingProcesses(tracer, executor), session(DOUBLE, np.ones(2, np.float32)), LIMITS)
    tracer.close()
    assert first.executor_healthy
    tracer = backend.fork_tracer(LIMITS, SLOT)
    try:
        second = run_session(
            GradingProcesses(tracer, executor),
            session(DOUBLE, np.full(3, 2.0, np.float32), scale=3.0),
            LIMITS,
        )
        assert second.executor_healthy
        np.testing.assert_array_equal(outputs(second, 0)[0], np.full(3, 6.0, np.float32))
    finally:
        tracer.close()
        executor.close()


def test_killed_workers_are_reaped_and_closing_twice_is_harmless(backend: Backend) -> None:
    for worker in (backend.start_tracer(LIMITS, SLOT), backend.fork_tracer(LIMITS, SLOT + 1)):
        worker.wait_ready(LIMITS.startup_time_s)
        assert worker.alive()
        worker.kill()
        assert worker.wait(10) is not None
        worker.close()
        worker.close()


#: A child that leaves the worker's session and outlives it unless the sandbox contains it.
DETACHED_CHILD = "import os\nif os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(600)\n"


def test_nothing_is_left_behind(backend: Backend) -> None:
    """After runs: every uid whose slot lock is free has no process, and no cgroup of ours remains.

    The detached child runs only on backends that contain it: the insecure ``process`` backend isolates
    nothing by design (no cgroup, no PID namespace), so the child would live on as an orphaned copy of the
    tracer (tests/test_hostile.py keeps such attacks to the secure backends for the same reason).
    """
    code = ("" if backend.insecure else DETACHED_CHILD) + DOUBLE
    before = set(_our_cgroups())  # another backend of this process (a session fixture's) may hold some
    go(backend, session(code, np.ones(1, np.float32)))
    go(backend, session(code, np.ones(1, np.float32)), forked=True)
    backend.close()
    lock_dir = Path("/run/jax-judge/slots")
    for lock in lock_dir.iterdir() if lock_dir.is_dir() else ():
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # held by a live worker (maybe another test process): its processes may run
        try:
            assert not _processes_of_uid(int(lock.name)), f"uid {lock.name} has processes but no worker"
        finally:
            os.close(fd)
    ours = [p for p in _our_cgroups() if p not in before]
    assert ours == []


def _our_cgroups() -> list[Path]:
    """The cgroups this process's backends made (their names carry its pid)."""
    return [p for p in Path("/sys/fs/cgroup").glob(f"*/**/jax-judge/*-{os.getpid()}-*") if p.is_dir()]


def _processes_of_uid(uid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:") and int(line.split()[1]) == uid:
                found.append(int(entry.name))
    return found
