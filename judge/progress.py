"""Where a grading is: the phase a learner is shown while a Run works (``RunProgress``).

``progress_of`` reads the monitor's record so far (``sandbox.monitor.RawRun``, handed to the grader's
progress callback whenever the tracer or an executor answers): the tracer loads the code, traces each
signature and the executor compiles each program as it arrives, then runs the cases. Counts are of what
is done; ``phase`` names the step under way. ``waiting`` (before any of it: the judge is still warming its
sandbox workers, or every one is busy) is reported by the engine, with why in ``detail``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from sandbox.monitor import RawRun, SessionJob

Phase = Literal["waiting", "loading", "tracing", "compiling", "running"]


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
    #: ``waiting``: why (the pool's start status); otherwise empty.
    detail: str = ""


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
