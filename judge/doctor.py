"""Sandbox diagnosis: which backend is active, what it protects, and a self-test submission through it.

Shared by ``judge doctor`` and, once the service exists, its readiness check.
"""

from __future__ import annotations

import time

import numpy as np
from pydantic import BaseModel, ConfigDict

from sandbox.backends import BACKENDS, get_backend
from sandbox.base import Backend
from sandbox.errors import SandboxError
from sandbox.limits import SandboxLimits
from sandbox.monitor import run_job
from sandbox.protocol import ProtocolError, decode_tree, encode_tree

SELF_TEST_CODE = """
import jax
import jax.numpy as jnp


def self_test(tree, scale):
    return jax.tree.map(lambda leaf: (leaf.astype(jnp.float32) * scale).astype(leaf.dtype), tree)
"""
_SELF_TEST_LIMITS = SandboxLimits(case_time_s=30.0, wall_time_s=60.0, startup_time_s=60.0)


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
    """Grade a tiny known submission through the backend and check its result on this side."""
    started = time.monotonic()
    tree = {"w": np.array([1.5, -2.0], np.float32), "b": np.array(0.25, np.float32)}
    job = {
        "type": "job",
        "code": SELF_TEST_CODE,
        "function": "self_test",
        "args": [{"name": "tree", "kind": "pytree", "traced": True}, {"name": "scale", "kind": "number"}],
        "cases": [{"args": [encode_tree(tree), {"number": 2.0}]}],
        "check_inputs_unchanged": True,
        "forbid_host_callbacks": True,
        "max_output_bytes": 1 << 20,
    }
    try:
        raw = run_job(backend.start(_SELF_TEST_LIMITS), job, _SELF_TEST_LIMITS)
    except SandboxError as exc:
        return SelfTest(ok=False, message=f"the worker did not start: {exc}", elapsed_ms=_since(started))
    results = [m for m in raw.messages if m.get("type") == "case_result"]
    if not results or results[0].get("status") != "ok":
        detail = results[0].get("message") if results else f"no result (exit code {raw.returncode})"
        output = raw.output.decode(errors="replace")[-500:]
        return SelfTest(
            ok=False, message=f"self-test failed: {detail} {output}".strip(), elapsed_ms=_since(started)
        )
    try:
        got = decode_tree(results[0]["output"])
    except ProtocolError as exc:
        return SelfTest(ok=False, message=f"self-test output is malformed: {exc}", elapsed_ms=_since(started))
    want = {k: v * 2 for k, v in tree.items()}
    if not (
        isinstance(got, dict)
        and got.keys() == want.keys()
        and all(np.array_equal(got[k], want[k]) for k in want)
    ):
        return SelfTest(ok=False, message=f"self-test returned {got!r}", elapsed_ms=_since(started))
    return SelfTest(ok=True, message="a known submission was graded correctly", elapsed_ms=_since(started))


def _since(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def diagnose(backend: Backend) -> DoctorReport:
    return DoctorReport(
        backend=backend.name,
        insecure=backend.insecure,
        protections=[
            ProtectionStatus(name=p.name, active=p.active, detail=p.detail) for p in backend.protections()
        ],
        self_test=self_test(backend),
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
