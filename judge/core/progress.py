"""Where a grading is: the phase a learner is shown while a Run works (``RunProgress``).

``progress_of`` reads the monitor's record so far (``sandbox.session.reports.RawRun``, handed to the grader's
progress callback whenever the tracer or an executor answers): the tracer loads the code, traces each
signature and the executor compiles each program as it arrives, then runs the cases. Counts are of what
is done; ``phase`` names the step under way. ``waiting`` (before any of it: the judge is still warming its
sandbox workers, or every one is busy) is reported by the engine, with why in ``detail`` (the operator's
words, as ``/readyz`` says it) and in ``warmup`` (the same as fields, ``warmup_of``: what the page words
for a learner, so rewording the operator's status changes nothing the learner reads).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.session.monitor import RawRun, SessionJob
from sandbox.session.starts import StartState

Phase = Literal["waiting", "loading", "tracing", "compiling", "running"]


class WarmupProgress(BaseModel):
    """Where the judge's warm-up stands while a Run waits for it (phase ``waiting``), summed over its pools
    of sandbox workers."""

    model_config = ConfigDict(frozen=True)

    starting: int = Field(default=0, ge=0, description="Sandbox workers starting now.")
    queued: int = Field(
        default=0,
        ge=0,
        description="Sandbox workers waiting their turn to start (the host starts a bounded number at once).",
    )
    failed_starts: int = Field(
        default=0, ge=0, description="Consecutive failed starts that a start is about to retry."
    )
    retry_in_s: int | None = Field(
        default=None,
        ge=1,
        description="Whole seconds (rounded up) until the soonest retry of a failed start; null when no "
        "retry is scheduled.",
    )
    start_failed: bool = Field(
        default=False,
        description="The last start failed and no start is under way, waiting or scheduled yet: the judge "
        "is about to try again.",
    )
    waited_s: int = Field(
        default=0, ge=0, description="Whole seconds this Run had waited for the warm-up when this was sent."
    )
    ahead: int = Field(
        default=0,
        ge=0,
        description="Starts of other judges on this host queued ahead of this judge's at the host's start "
        "gate (served in order).",
    )
    estimate_s: int | None = Field(
        default=None,
        ge=1,
        description="Rough whole seconds until a sandbox worker is ready for this Run, from how long recent "
        "starts took and the queue ahead; null when no start has finished yet to estimate from.",
    )


def warmup_of(states: Iterable[StartState | None], last_error: str | None) -> WarmupProgress:
    """The warm-up of pools whose start states are ``states`` (None: a full pool), ``last_error`` the last
    start error of any of them (only whether there is one is kept)."""
    live = [s for s in states if s is not None]
    retries = [s.retry_in_s for s in live if s.retry_in_s is not None]
    starting = sum(s.starting for s in live)
    queued = sum(s.gated for s in live)
    estimates = [estimate_s(s) for s in live]
    known = [e for e in estimates if e is not None]
    return WarmupProgress(
        starting=starting,
        queued=queued,
        failed_starts=sum(s.failures for s in live if s.retry_in_s is not None),
        retry_in_s=max(1, math.ceil(min(retries))) if retries else None,
        start_failed=not (starting or queued or retries) and bool(last_error),
        ahead=max((s.queue_ahead for s in live), default=0),
        estimate_s=max(1, math.ceil(max(known))) if known and len(known) == len(estimates) else None,
    )


def estimate_s(state: StartState) -> float | None:
    """Rough seconds until a pool in ``state`` has a worker ready: what is left of its oldest start, then
    one start per round of the host's start gate for the starts queued ahead of its own, after any backoff;
    None when none of its starts has finished yet (nothing to estimate from)."""
    typical = state.typical_s
    if typical is None:
        return None
    left = max(0.0, state.retry_in_s or 0.0)
    if state.starting and state.oldest is not None:
        left += max(1.0, typical - state.oldest.wall_s)
    elif state.gated or state.retry_in_s is not None:
        rounds = math.ceil((state.queue_ahead + 1) / max(1, state.gate_limit))
        left += rounds * typical
    return max(1.0, left)


class RunProgress(BaseModel):
    model_config = ConfigDict(frozen=True)

    phase: Phase
    #: Programs the tracer has sent (or failed to trace), of ``programs``.
    traced: int = 0
    #: Programs the executor has compiled (or refused), of ``programs``.
    compiled: int = 0
    programs: int = 0
    #: Cases whose run came back, of ``cases``.
    ran: int = 0
    cases: int = 0
    #: ``waiting``: why (the pools' start status, as an operator reads it); otherwise empty.
    detail: str = ""
    warmup: WarmupProgress | None = Field(
        default=None,
        description="With phase `waiting`: the warm-up as fields (what the page words for a learner; "
        "`detail` is the operator's wording and may change); otherwise null.",
    )


def progress_of(raw: RawRun, job: SessionJob) -> RunProgress:
    """The phase of a session from its record so far (the first step not yet done)."""
    programs = len(job.sigs)
    traced = len(raw.programs)
    compiled = sum(
        1 for p in raw.programs.values() if p.compiled is not None or p.refused is not None or p.failure
    )
    ran = len(raw.runs)
    phase: Phase
    if raw.load is None:
        phase = "loading"
    elif compiled < traced or (traced == programs and compiled < programs):
        phase = "compiling"
    elif traced < programs:
        phase = "tracing"
    else:
        phase = "running"
    return RunProgress(
        phase=phase,
        traced=traced,
        compiled=compiled,
        programs=programs,
        ran=ran,
        cases=len(job.cases),
    )
