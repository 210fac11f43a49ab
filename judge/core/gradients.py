"""Comparing a program that returns its output AND a gradient (``[gradient]``, ``sandbox.shared.transforms``).

Pure functions on decoded trees. The user's program returns ``(output, {arg: gradient})``; the judge has
the reference's output and gradient separately (``judge.core.expected``). The output is compared first with
the problem's checker, exactly as without a gradient; then the gradient with the same tolerances, its paths
named after the arguments (``x["w"]``) and prefixed ``gradient of the output w.r.t.``, so a message reads
``gradient of the output w.r.t. x["w"]: wrong values, ...``. ``max_error_ratio`` is the worse of the two.

Magnitudes (``[compare] magnitude``, ``judge.core.compare``): on a ``[gradient]`` problem the magnitude
function returns the pair a program returns, ``(output magnitudes, gradient magnitudes)``; each half scales
the bound of its own half (``split_scale``), so the gradient is graded with the same order-proof bound as the
output, here and wherever outputs are matched against known mistakes (``judge.feedback.mistakes``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from judge.core.compare import Checker, CompareResult
from judge.core.verdicts import WrongAnswerReason

PREFIX = "gradient of the output w.r.t. "


def gradient_checker(checker: Checker) -> Checker:
    """The checker for gradients: the problem's tolerances, no tuple names (the root is a dict of args)."""
    return Checker(tolerance=checker.tolerance, root_names=(), tuple_as_list=False)


def split(got: Any) -> tuple[Any, Any] | None:
    """``(output, gradients)`` from a program's result, or None when it is not such a pair (a program that
    was not built by the judge's wrapper: only a forged tracer gets here)."""
    if isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict):
        return got[0], got[1]
    return None


def split_scale(scale: Any) -> tuple[Any, Any]:
    """``(output magnitudes, gradient magnitudes)`` from a ``[gradient]`` problem's magnitude tree; a tree
    that is not such a pair (or None) scales nothing."""
    if isinstance(scale, tuple | list) and len(scale) == 2:
        return scale[0], scale[1]
    return None, None


def accepts_with_gradient(
    checker: Checker, expected: Any, expected_gradient: Any, got: Any, scale: Any = None
) -> bool:
    """``compare_with_gradient(...)[0].ok``, without messages (``Checker.accepts``)."""
    parts = split(got)
    if parts is None:
        return False
    output, gradient = parts
    output_scale, gradient_scale = split_scale(scale)
    return checker.accepts(expected, output, output_scale) and gradient_checker(checker).accepts(
        expected_gradient, gradient, gradient_scale
    )


def compare_with_gradient(
    checker: Checker,
    expected: Any,
    expected_gradient: Any,
    got: Any,
    *,
    scale: Any = None,
) -> tuple[CompareResult, Any]:
    """Compare the output, then the gradient; returns the result and the user's output alone (for display).
    ``scale``: the pair ``(output magnitudes, gradient magnitudes)`` (``split_scale``), or None."""
    parts = split(got)
    if parts is None:
        return (
            CompareResult(
                False,
                WrongAnswerReason.STRUCTURE,
                None,
                "the program did not return its output together with its gradient",
                math.inf,
            ),
            None,
        )
    output, gradient = parts
    output_scale, gradient_scale = split_scale(scale)
    first = checker(expected, output, scale=output_scale)
    if not first.ok:
        return first, output
    second = gradient_checker(checker)(expected_gradient, gradient, scale=gradient_scale)
    ratio = max(first.max_error_ratio, second.max_error_ratio)
    if second.ok:
        return dataclasses.replace(first, max_error_ratio=ratio), output
    return (
        dataclasses.replace(
            second,
            path=PREFIX + (second.path or "the arguments"),
            message=PREFIX + second.message,
            max_error_ratio=ratio,
        ),
        output,
    )
