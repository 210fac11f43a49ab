"""Part of the ``margins`` check: the share of the case time limit an accepted solution spends compiling.

The judge compiles every program with the fast XLA pipeline or, for shapes that pipeline handles badly,
the standard one (``sandbox.inside.compiling``), and reports each signature's compile time on its first
case in charged time: the machine's load does not count, so the share measured on a busy CI runner is the
share a quiet grading machine would see. An accepted solution that compiles for more than
``COMPILE_SHARE_WARN`` of the case limit is one a slightly larger input, or a learner writing the same
idea, turns into a time limit while compiling; the warning names the case and the share.
"""

from __future__ import annotations

from judge.core.results import GradeResult

#: Share of the case time limit one case may spend compiling (tracing included for shown cases) before
#: ``judge check`` warns.
COMPILE_SHARE_WARN = 0.25


def compile_warning(result: GradeResult, case_time_s: float) -> str:
    """A warning if the slowest compile of ``result`` passes ``COMPILE_SHARE_WARN`` of the limit, else ""."""
    timed = [c for c in result.cases if c.compile_ms]
    if not timed:
        return ""
    worst = max(timed, key=lambda c: c.compile_ms or 0.0)
    share = (worst.compile_ms or 0.0) / (case_time_s * 1000)
    if share <= COMPILE_SHARE_WARN:
        return ""
    return (
        f"accepted, but compiling its program for case {worst.name} takes {share:.0%} of the "
        f"{case_time_s:g} s case limit ({worst.compile_ms:.0f} ms of charged time; warned above "
        f"{COMPILE_SHARE_WARN:.0%}): a larger input or a similar submission may time out while compiling; "
        "shrink the program (a loop over many items: jax.lax.fori_loop or jax.lax.scan) or raise "
        "limits.case_time_s"
    )
