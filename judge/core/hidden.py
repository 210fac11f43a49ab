"""What a hidden case may say: the leaf, the kind of mismatch, a coarse distance; one known mistake per
submission; and no time of its own (the hidden phase ends on a rung of a fixed ladder).

An exact error ratio would reveal values: with ``got = 0`` the ratio ``|got - expected| / tol`` is a
function of ``|expected|``, and a learner who returns ``expected + c`` learns ``|expected|`` from the ratio
of an ACCEPTED case too. So hidden cases show only which bucket the worst error falls in, and no element
count or index (which would tell how many elements sit near a probe value).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from judge.core.compare import CompareResult
from judge.core.results import CaseResult, MistakeMatch
from judge.core.verdicts import Verdict, WrongAnswerReason


def ratio_bucket(ratio: float) -> str:
    """A coarse description of ``max_error_ratio`` (in tolerances)."""
    if math.isnan(ratio) or math.isinf(ratio):
        return "NaN, an infinity or an exact mismatch"
    if ratio <= 1.0:
        return "within the tolerance"
    if ratio <= 10.0:
        return "up to 10x the tolerance"
    if ratio <= 1000.0:
        return "more than 10x the tolerance"
    return "more than 1000x the tolerance"


def hidden_message(result: CompareResult) -> str:
    """The message of a failed comparison for a hidden case.

    Structure, type, shape and dtype messages describe shapes and types only and are kept; a value mismatch
    names the first failing leaf and the bucket of the worst error, nothing more.
    """
    if result.reason is not WrongAnswerReason.VALUE:
        return result.message
    where = result.path or "output"
    return f"{where}: wrong values, the worst error is {ratio_bucket(result.max_error_ratio)}"


#: The rungs the hidden phase of a grading is padded to (``hidden_phase_bound``): the first, in seconds, and
#: the ratio of one to the next. 2 ** (1 / 16): a hidden phase ends at most 4.4% (about 2.2% on average) later
#: than it would have, and the padded durations between 0.05 s and any limit T are 16 * log2(T / 0.05) rungs
#: (fewer than 260 up to an hour): about 8 bits per submission, whatever the number of hidden cases. (Rungs
#: of 2 ** (1 / 4) slept 8% of a Submit's wall time, measured; 2 ** (1 / 8) half that, for 7 bits.)
PHASE_FIRST_RUNG_S = 0.05
PHASE_RUNG_RATIO = 2**0.0625


def hidden_phase_bound(elapsed_s: float) -> float:
    """The rung a hidden phase that took ``elapsed_s`` seconds is padded to: the smallest
    ``PHASE_FIRST_RUNG_S * PHASE_RUNG_RATIO ** k`` (k >= 0) not below it."""
    if not math.isfinite(elapsed_s) or elapsed_s <= PHASE_FIRST_RUNG_S:
        return PHASE_FIRST_RUNG_S
    k = math.ceil(math.log(elapsed_s / PHASE_FIRST_RUNG_S, PHASE_RUNG_RATIO) - 1e-9)
    rung = PHASE_FIRST_RUNG_S * PHASE_RUNG_RATIO**k
    return rung if rung >= elapsed_s else PHASE_FIRST_RUNG_S * PHASE_RUNG_RATIO ** (k + 1)


def one_hidden_mistake(cases: Sequence[CaseResult]) -> list[CaseResult]:
    """``cases`` with the known mistakes of hidden cases told once per submission: when every hidden case
    that failed (any verdict but accepted and not run) matched the same known mistake, each of them keeps
    that name and note (and no count of other matches); otherwise no hidden case names one. Which mistake a
    hidden case's output matches is chosen by the submission, so per-case names could carry bits of the
    hidden inputs; one name for all of them depends only on whether they all fail alike. Public and custom
    cases keep their own."""
    failing = {
        i
        for i, c in enumerate(cases)
        if c.visibility == "hidden" and c.verdict not in (Verdict.ACCEPTED, Verdict.NOT_RUN)
    }
    names = {(m.name, m.note) if (m := cases[i].mistake) is not None else None for i in failing}
    only = next(iter(names)) if len(names) == 1 else None
    shared = MistakeMatch(name=only[0], note=only[1], others=0) if only is not None else None
    return [
        c.model_copy(update={"mistake": shared if i in failing else None}) if c.visibility == "hidden" else c
        for i, c in enumerate(cases)
    ]
