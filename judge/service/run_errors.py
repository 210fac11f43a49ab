"""What a Run that failed answers: the one mapping from the judge's exceptions to API errors, raised by
``POST .../run`` and sent as the ``error`` event of ``POST .../run/events``.

- contention, come back later: a client over its Run share (``ShareExceeded``, ``limit:
  runs_per_client``) or every Run slot busy (``RunBusy``): 429 ``run_busy`` with ``Retry-After``;
- the caller's input: a Run input the converter or the problem's constraints reject (``InputError``):
  422 ``invalid_input`` naming the argument and its path;
- the problem's own fault, the judge's side (problemtools' "judge error"): its validator crashed or its
  package is invalid (``ProblemError``), or its reference failed (``ReferenceFailure``): 500
  ``internal_error`` saying so; logged with its detail for the problem's authors (a file path or the
  validator's exception never reaches the client); trying again does not help until the problem is fixed;
- the sandbox failing (``SandboxError``, or any other ``JudgeError``): 503 ``sandbox_unavailable`` with
  ``Retry-After``.

Anything else is the judge's unexpected failure: the plain Run leaves it to the app's handler (a bare 500),
the streamed Run sends that same 500 as its ``error`` event.
"""

from __future__ import annotations

import logging

from judge.core.errors import InputError, JudgeError, ProblemError, ReferenceFailure
from judge.service.api_errors import ApiError, input_error
from judge.service.gate import RunBusy
from judge.service.shares import ShareExceeded
from sandbox.errors import SandboxError

log = logging.getLogger(__name__)

#: The exceptions ``run_error`` maps.
RUN_FAILURES = (ShareExceeded, RunBusy, JudgeError, SandboxError)
#: Retry-After of a Run the sandbox failed.
SANDBOX_RETRY_S = 5


def run_error(exc: ShareExceeded | RunBusy | JudgeError | SandboxError, slug: str) -> ApiError:
    """The API error of a Run of problem ``slug`` that failed with ``exc`` (``RUN_FAILURES``)."""
    if isinstance(exc, ShareExceeded | RunBusy):
        limit = "runs_per_client" if isinstance(exc, ShareExceeded) else None
        return ApiError(429, "run_busy", str(exc), limit=limit, headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, InputError):
        return input_error(exc)
    if isinstance(exc, ProblemError | ReferenceFailure):
        log.error("a Run of %s failed on the problem's side: %s: %s", slug, type(exc).__name__, exc)
        what = (
            "its reference solution failed"
            if isinstance(exc, ReferenceFailure)
            else ("its validator or its files failed")
        )
        return ApiError(
            500,
            "internal_error",
            f"the problem {slug!r} is broken on the judge's side ({what}), not by this code; it was logged "
            "for its authors, and trying again will not help until it is fixed",
        )
    return ApiError(
        503,
        "sandbox_unavailable",
        f"the sandbox could not run this now ({type(exc).__name__}); try again shortly",
        headers={"Retry-After": str(SANDBOX_RETRY_S)},
    )
