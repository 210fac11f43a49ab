"""Build raw grading sessions for ``f(x, s)`` without a problem package (sandbox-level tests)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from sandbox.backends.base import Backend, GradingProcesses
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.driver import run_session
from sandbox.session.monitor import CasePlan, RawRun, SessionJob, SigPlan
from sandbox.shared.tree import split_input

ARGS = [{"name": "x", "kind": "pytree", "traced": True}, {"name": "s", "kind": "number", "traced": True}]


def session(
    code: str,
    *inputs: Any,
    scale: float = 2.0,
    secret: tuple[bool, ...] | None = None,
    retrace: bool = True,
    max_output_bytes: int = 1 << 24,
    check_inputs_unchanged: bool = False,
) -> SessionJob:
    """A job for ``f(x, s)``: one case per input tree, ``s`` the number ``scale``; public by default."""
    flags = secret or (False,) * len(inputs)
    keys: dict[str, int] = {}
    sigs: dict[int, SigPlan] = {}
    cases = []
    order = sorted(range(len(inputs)), key=lambda i: flags[i])  # public signatures first
    prepared = {}
    for i in order:
        node, leaves = split_input(inputs[i])
        leaves.append(np.asarray(scale, np.float32))
        args = [{"tree": node}, {"number": True}]
        key = json.dumps(args, sort_keys=True)
        if key not in keys:
            keys[key] = len(keys)
            sigs[keys[key]] = SigPlan(
                keys[key], args, [{"dtype": x.dtype.name, "shape": list(x.shape)} for x in leaves], flags[i]
            )
        prepared[i] = (keys[key], leaves)
    for i in range(len(inputs)):
        sig, leaves = prepared[i]
        cases.append(CasePlan(i, sig, leaves, flags[i], f"case{i}"))
    return SessionJob(
        code=code,
        function="f",
        args=ARGS,
        sigs=[sigs[k] for k in sorted(sigs)],
        cases=cases,
        check_inputs_unchanged=check_inputs_unchanged,
        max_output_bytes=max_output_bytes,
        retrace_case=len(cases) - 1 if retrace and cases else None,
    )


def run(
    backend: Backend, job: SessionJob, limits: SandboxLimits, *, forked: bool = False, slot: int = 0
) -> RawRun:
    """Run a job on a fresh pair (a forked tracer with ``forked``); both are closed afterwards."""
    tracer = backend.fork_tracer(limits, slot) if forked else backend.start_tracer(limits, slot)
    try:
        executor = backend.start_executor(limits, slot)
    except BaseException:
        tracer.close()
        raise
    pair = GradingProcesses(tracer, executor)
    try:
        return run_session(pair, job, limits)
    finally:
        pair.close()


def outputs(raw: RawRun, index: int) -> list[np.ndarray[Any, Any]]:
    report = raw.runs[index]
    assert report.outputs is not None, (report, raw.stop, raw.programs)
    return report.outputs
