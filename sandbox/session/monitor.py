"""A session's plan, and its record re-exported.

The plan (``SessionJob``: signatures, cases, rules) is what the judge asks for; the record (``RawRun``: each
program's and case's report, and why the run stopped, ``Stop``) is everything the tracer and the executor
said and did, before any interpretation (verdicts are the judge's job, ``judge.grading``), each message
decoded once into typed, bounded fields (``sandbox.session.reports``). The session that fills the record is
driven by ``sandbox.session.driver.run_session``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# The record (each program's and case's report, and why the run stopped) and the decoding of every message
# that becomes part of it live in ``sandbox.session.reports``; re-exported here beside the plan.
from sandbox.session.reports import MAX_TEXT as MAX_TEXT
from sandbox.session.reports import CaseReport as CaseReport
from sandbox.session.reports import Party as Party
from sandbox.session.reports import ProgramReport as ProgramReport
from sandbox.session.reports import RawRun as RawRun
from sandbox.session.reports import Stop as Stop
from sandbox.session.reports import TimeoutKind as TimeoutKind

#: Time limits count charged time (``sandbox.shared.schedclock``: wall time minus the time the machine kept
#: the worker waiting on a run queue), so load changes how long an answer takes, never what it is. A request
#: (or the whole job) still short of its limit in charged time after this many times the limit in wall time is
#: stopped as the judge's own failure (``overload``): every wait has a deadline.
OVERLOAD_FACTOR = 30.0


# ------------------------------------------------------------------------------------------ the plan


@dataclass(frozen=True)
class SigPlan:
    """One distinct signature: its abstract arguments (what the tracer sees) and its flat input types."""

    id: int
    args: list[Any]
    inputs: list[dict[str, Any]]
    secret: bool
    #: Flat input indices the executor donates to the program (a problem's in-place rule), usually none.
    donate: tuple[int, ...] = ()


@dataclass(frozen=True)
class CasePlan:
    index: int
    sig: int
    #: The concrete flat inputs (signature order); only the executor receives them for secret cases.
    leaves: list[np.ndarray[Any, Any]]
    secret: bool
    name: str = ""


@dataclass(frozen=True)
class SessionJob:
    code: str
    function: str
    #: ``[{"name", "kind", "traced"}]`` in signature order.
    args: list[dict[str, Any]]
    #: Distinct signatures: every public one before any secret one.
    sigs: list[SigPlan]
    #: Cases in order.
    cases: list[CasePlan]
    check_inputs_unchanged: bool = False
    max_output_bytes: int = 16 * 1024 * 1024
    #: The case whose signature is traced a second time at the end (None: no re-trace).
    retrace_case: int | None = None
    #: Op rules the executor applies before compiling (``{"require_loop_any": [...], "forbid_ops": [...]}``):
    #: a program that breaks one is refused (kind ``rule``) without paying for its compile, so the verdict
    #: does not depend on how long an unrolled program takes to compile. The judge still decides the rule
    #: itself from the summary (``judge.grading.compiled_rules``).
    precheck: dict[str, list[str]] = field(default_factory=dict)
    #: A gradient the program returns beside the output (``sandbox.shared.transforms``):
    #: ``{"wrt": [arg index], "names": [arg name], "cotangent": kind}``, or None.
    gradient: dict[str, Any] | None = None
    #: ``{"sigs": {id: {"scale": factor, "scaled_first": bool}}}``: each signature's program returns the
    #: output and the output again with every autodiff seed scaled (``sandbox.inside.autodiff``, the
    #: ``require_autodiff`` rule), or None.
    autodiff: dict[str, Any] | None = None
    #: The source of the problem's menu module (problem code) for ``function`` arguments, or None.
    functions: str | None = None
    #: CPU host devices the programs are lowered for (the executor's own count is fixed at its start).
    devices: int = 1
    #: The matrix-product precision the programs are traced at (a problem's ``[compare] matmul_precision``;
    #: None: JAX's default).
    matmul_precision: str | None = None

    def sig(self, sig_id: int) -> SigPlan:
        return next(s for s in self.sigs if s.id == sig_id)

    def first_case(self, sig_id: int) -> int | None:
        return next((c.index for c in self.cases if c.sig == sig_id), None)


# ------------------------------------------------------------------------------------------ the record

#: Called with the record whenever a process answered (``judge.core.progress`` reads the phase from it).
Progress = Callable[[RawRun], None]
