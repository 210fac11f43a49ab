"""What a hidden case may say about a comparison: the leaf, the kind of mismatch, a coarse distance.

An exact error ratio would reveal values: with ``got = 0`` the ratio ``|got - expected| / tol`` is a
function of ``|expected|``, and a learner who returns ``expected + c`` learns ``|expected|`` from the ratio
of an ACCEPTED case too. So hidden cases show only which bucket the worst error falls in, and no element
count or index (which would tell how many elements sit near a probe value).
"""

from __future__ import annotations

import math

from judge.compare import CompareResult
from judge.verdicts import WrongAnswerReason


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
