"""Sandbox diagnosis: which backend is active, what it protects, and a self-test submission through it.

Shared by ``judge doctor`` and, once the service exists, its readiness check.
"""

from __future__ import annotations

import time

import numpy as np
from pydantic import BaseModel, ConfigDict

from judge.core.output_tree import assemble
from sandbox.backends import BACKENDS, get_backend
from sandbox.backends.base import Backend, GradingProcesses
from sandbox.backends.slots import SELF_TEST_SLOTS, SLOTS
from sandbox.errors import SandboxError
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.driver import run_session
from sandbox.session.monitor import CasePlan, SessionJob, SigPlan
from sandbox.shared.tree import split_input
from sandbox.shared.wire import ProtocolError

SELF_TEST_CODE = """
import jax
import jax.numpy as jnp


def self_test(tree, scale):
    return jax.tree.map(lambda leaf: (leaf.astype(jnp.float32) * scale).astype(leaf.dtype), tree)
"""
_SELF_TEST_LIMITS = SandboxLimits(case_time_s=30.0, wall_time_s=60.0, startup_time_s=60.0)
#: A slot in the top range kept for self-tests (the backend moves on if another process holds it).
_SELF_TEST_SLOT = SLOTS - 2 * SELF_TEST_SLOTS


class ProtectionStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    active: bool
    detail: str


class SelfTest(BaseModel):
    model_config = ConfigDict(frozen=True)

    ok: bool
    message: str
    elapsed_ms: float


class BackendStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    insecure: bool
    unavailable_reason: str | None


class DoctorReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    backend: str
    insecure: bool
    protections: list[ProtectionStatus]
    self_test: SelfTest
    backends: list[BackendStatus]

    @property
    def ok(self) -> bool:
        return self.self_test.ok


def self_test(backend: Backend) -> SelfTest:
    """Grade a tiny known submission through the backend (a tracer and an executor) and check its result
    on this side. The backend stays open: a service's warm pool forks its tracers from the same zygote
    (closing it would kill them); whoever owns the backend closes it."""
    started = time.monotonic()
    tree = {"w": np.array([1.5, -2.0], np.float32), "b": np.array(0.25, np.float32)}
    node, leaves = split_input(tree)
    leaves.append(np.asarray(2.0, np.float32))
    sig = SigPlan(
        0,
        [{"tree": node}, {"number": True}],
        [{"dtype": x.dtype.name, "shape": list(x.shape)} for x in leaves],
        secret=False,
    )
    job = SessionJob(
        code=SELF_TEST_CODE,
        function="self_test",
        args=[
            {"name": "tree", "kind": "pytree", "traced": True},
            {"name": "scale", "kind": "number", "traced": True},
        ],
        sigs=[sig],
        cases=[CasePlan(0, 0, leaves, secret=True, name="self-test")],
        check_inputs_unchanged=True,
        max_output_bytes=1 << 20,
        retrace_case=0,
    )
    try:
        # The warm pool's path: a tracer forked from the backend's zygote, and an executor.
        tracer = backend.fork_tracer(_SELF_TEST_LIMITS, _SELF_TEST_SLOT)
        pair = GradingProcesses(tracer, backend.start_executor(_SELF_TEST_LIMITS, _SELF_TEST_SLOT))
    except SandboxError as exc:
        return SelfTest(ok=False, message=f"the workers did not start: {exc}", elapsed_ms=_since(started))
    try:
        raw = run_session(pair, job, _SELF_TEST_LIMITS)
    except SandboxError as exc:
        return SelfTest(ok=False, message=f"the workers did not start: {exc}", elapsed_ms=_since(started))
    finally:
        pair.close()
    run = raw.runs.get(0)
    program = raw.programs.get(0)
    if run is None or run.outputs is None or program is None:
        why = raw.stop or (program.failure if program else None) or (run.error if run else None)
        output = raw.output.decode(errors="replace")[-500:]
        return SelfTest(
            ok=False, message=f"self-test failed: {why} {output}".strip(), elapsed_ms=_since(started)
        )
    try:
        got = assemble(program.skeleton, run.outputs, 1 << 20)
    except ProtocolError as exc:
        return SelfTest(ok=False, message=f"self-test output is malformed: {exc}", elapsed_ms=_since(started))
    want = {k: v * 2 for k, v in tree.items()}
    if not (
        isinstance(got, dict)
        and got.keys() == want.keys()
        and all(np.array_equal(got[k], want[k]) for k in want)
    ):
        return SelfTest(ok=False, message=f"self-test returned {got!r}", elapsed_ms=_since(started))
    if raw.retrace_run is None or not raw.executor_healthy:
        return SelfTest(
            ok=False,
            message="self-test: the re-trace or the executor's end of job is missing",
            elapsed_ms=_since(started),
        )
    return SelfTest(
        ok=True,
        message="a known submission was traced, compiled, run and graded correctly",
        elapsed_ms=_since(started),
    )


def _since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def diagnose(backend: Backend) -> DoctorReport:
    """The report for ``backend``: its protections and a self-test through it. Closes the backend (its
    zygote) when done."""
    try:
        test = self_test(backend)
    finally:
        backend.close()
    return DoctorReport(
        backend=backend.name,
        insecure=backend.insecure,
        protections=[
            ProtectionStatus(name=p.name, active=p.active, detail=p.detail) for p in backend.protections()
        ],
        self_test=test,
        backends=[
            BackendStatus(name=name, insecure=cls.insecure, unavailable_reason=get_backend(name).available())
            for name, cls in BACKENDS.items()
        ],
    )


def text_report(report: DoctorReport) -> str:
    lines = [
        f"active sandbox backend: {report.backend}"
        + ("  (INSECURE: development only)" if report.insecure else "")
    ]
    lines.append("protections:")
    for p in report.protections:
        lines.append(f"  [{'on ' if p.active else 'OFF'}] {p.name:<18} {p.detail}")
    test = report.self_test
    lines.append(
        f"self-test: {'passed' if test.ok else 'FAILED'} in {test.elapsed_ms:.0f} ms: {test.message}"
    )
    lines.append("backends on this host:")
    for b in report.backends:
        state = "available" if b.unavailable_reason is None else f"unavailable: {b.unavailable_reason}"
        lines.append(f"  {b.name:<8} {state}{'  (insecure)' if b.insecure else ''}")
    return "\n".join(lines)
