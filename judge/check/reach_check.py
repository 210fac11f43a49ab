"""Check ``reach``: the hidden cases come close to every bound the constraints state.

The validator's helpers (``judge.constraints``) note each bound they check and the extreme a value
reaches while ``recording_bounds()`` is active; this check runs the validator on every hidden case under
one recorder and compares, per bound, the extreme the cases reach with the bound (``approached``). A
stated bound that no hidden case approaches warns, so ``--werror`` fails: a solution that goes wrong only
near it (a float32 step counter at 10^7, an int32 id above 2^24, a distance of 1e-9) would pass. Every
bound and how close the cases come are reported as notes. The factor is ``[reach]`` in ``problem.toml``.
"""

from __future__ import annotations

from judge.check.context import CheckContext
from judge.constraints import Bound, recording_bounds
from judge.core.spec import ReachSpec

NAME = "reach"


def approached(bound: Bound, factor: float, zero_band: float) -> bool:
    """Whether the extreme the cases reached is close enough to the bound (``judge.core.spec.ReachSpec``)."""
    value, limit = bound.reached, bound.limit
    if value is None:
        return False
    # A value past the bound reaches it: the violation is the cases check's finding, not a second one.
    if bound.side == "count_max":
        return value >= limit
    if bound.side == "count_min":
        return value <= limit
    if limit == 0:
        return value >= -zero_band if bound.side == "upper" else value <= zero_band
    if bound.side == "upper":
        return value >= (limit / factor if limit > 0 else limit * factor)
    return value <= (limit * factor if limit > 0 else limit / factor)


def factor_for(reach: ReachSpec, key: str) -> float:
    """The factor of one bound: its own from ``factors``, else the problem's."""
    return reach.factors.get(key, reach.factor)


def describe(bound: Bound, factor: float, zero_band: float) -> str:
    """``step: at most 1e+07: hidden cases reach 9.99e+05 (wanted 1e+06 or more)``."""
    shown = "none" if bound.reached is None else f"{bound.reached:.4g}"
    if bound.side in ("count_max", "count_min"):
        wanted = f"exactly {bound.limit:g}"
    elif bound.limit == 0:
        wanted = f"within {zero_band:g} of 0"
    elif bound.side == "upper":
        target = bound.limit / factor if bound.limit > 0 else bound.limit * factor
        wanted = f"{target:.4g} or more"
    else:
        target = bound.limit * factor if bound.limit > 0 else bound.limit / factor
        wanted = f"{target:.4g} or less"
    limit = f"{bound.limit:g}" + (" (the case's own limit, the closest case)" if bound.varies else "")
    return f"{bound.key} {limit}: hidden cases reach {shown} (wanted {wanted})"


def check(ctx: CheckContext) -> None:
    problem = ctx.loaded
    diag = ctx.diag
    validator = problem.validator
    if validator is None:
        return  # the cases check asks for a validator
    reach = problem.spec.reach
    named_args = [arg.name for arg in problem.spec.args]
    with recording_bounds() as recorder:
        for case in problem.hidden_cases:
            try:
                validator(dict(zip(named_args, case.inputs, strict=True)), case.dtype)
            except Exception:  # the cases check reports a crashing validator
                continue
    file = problem.root / "validator.py"
    reached = []
    unknown = sorted(key for key in reach.factors if key not in recorder.bounds)
    for key in unknown:
        diag.error(
            f"reach.factors names {key!r}, which is no bound the validator checks (known: "
            f"{', '.join(sorted(recorder.bounds)) or 'none'})",
            file=problem.root / "problem.toml",
            at=f"reach.factors.{key}",
        )
    for bound in recorder.bounds.values():
        factor = factor_for(reach, bound.key)
        text = describe(bound, factor, reach.zero_band)
        reached.append(text)
        if not approached(bound, factor, reach.zero_band):
            diag.warning(
                f"no hidden case approaches a stated bound: {text}; add hidden cases near it (a solution "
                "that goes wrong only there would pass), or set a factor for it under [reach] in "
                "problem.toml",
                file=file,
                at=f"bound {bound.key}",
            )
    if reached:
        diag.note("bounds reached: " + "; ".join(reached))
