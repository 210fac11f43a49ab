"""Constraints of lr-schedule (statement.md, "Constraints"), checked on every case by `judge check`."""

from __future__ import annotations

from typing import Any

from judge.constraints import check_int, check_int_range, check_number

#: Largest step and schedule length: every step is exact in float32 (below 2**24).
MAX_STEP = 10_000_000


def validate(args: dict[str, Any], dtype: str) -> list[str]:
    errors = check_int_range(args["step"], "step", ge=0, le=MAX_STEP)
    errors += check_number(args["peak_lr"], "peak_lr", gt=0.0, le=1.0)
    errors += check_number(args["final_lr"], "final_lr", ge=0.0, le=1.0)
    if not errors and args["final_lr"] > args["peak_lr"]:
        errors.append(f"final_lr: {args['final_lr']!r}, must be at most peak_lr = {args['peak_lr']!r}")
    errors += check_int(args["warmup_steps"], "warmup_steps", ge=1, le=MAX_STEP - 1)
    errors += check_int(args["total_steps"], "total_steps", ge=2, le=MAX_STEP)
    if not errors and args["total_steps"] <= args["warmup_steps"]:
        errors.append(
            f"total_steps: {args['total_steps']}, must be larger than warmup_steps = {args['warmup_steps']}"
        )
    return errors


# ------------------------------------------------ promises of the statement ([[promises]] in problem.toml)


def short_late_decay(args: dict[str, Any], dtype: str) -> bool:
    """A step inside a decay of at most 64 steps that starts after step 1,000,000."""
    warmup, total, step = args["warmup_steps"], args["total_steps"], int(args["step"])
    return total - warmup <= 64 and warmup >= 1_000_000 and warmup < step < total


def _phase(args: dict[str, Any]) -> str:
    step, warmup, total = int(args["step"]), args["warmup_steps"], args["total_steps"]
    if step == 0:
        return "zero"
    if step < warmup:
        return "warmup"
    if step == warmup:
        return "peak"
    return "decay" if step < total else ("end" if step == total else "past")


def step_zero(args: dict[str, Any], dtype: str) -> bool:
    return _phase(args) == "zero"


def step_at_warmup(args: dict[str, Any], dtype: str) -> bool:
    return _phase(args) == "peak"


def step_at_total(args: dict[str, Any], dtype: str) -> bool:
    return _phase(args) == "end"


def step_past_total(args: dict[str, Any], dtype: str) -> bool:
    return _phase(args) == "past"


_OK = {"step": 3, "peak_lr": 0.1, "final_lr": 0.0, "warmup_steps": 10, "total_steps": 100}

#: Inputs that break the constraints; the converter or validate() must reject each one.
JUNK: list[dict[str, Any]] = [
    {"why": "fractional step", "args": {**_OK, "step": 1.5}},
    {"why": "negative step", "args": {**_OK, "step": -1}},
    {"why": "step past the bound", "args": {**_OK, "step": 20_000_000}},
    {"why": "step given as a list", "args": {**_OK, "step": [3]}},
    {"why": "boolean step", "args": {**_OK, "step": True}},
    {"why": "zero warmup", "args": {**_OK, "warmup_steps": 0}},
    {"why": "warmup as long as the schedule", "args": {**_OK, "warmup_steps": 100}},
    {"why": "fractional warmup", "args": {**_OK, "warmup_steps": 2.5}},
    {"why": "warmup given as a list", "args": {**_OK, "warmup_steps": [10]}},
    {"why": "zero peak", "args": {**_OK, "peak_lr": 0.0}},
    {"why": "peak above 1", "args": {**_OK, "peak_lr": 2.0}},
    {"why": "final above peak", "args": {**_OK, "final_lr": 0.5}},
    {"why": "negative final", "args": {**_OK, "final_lr": -0.01}},
]

#: Inputs at the limits of the constraints; they must validate, and the reference must give finite outputs.
EDGE: list[dict[str, Any]] = [
    {"why": "largest step", "args": {**_OK, "step": MAX_STEP}},
    {
        "why": "longest schedule, last warmup step",
        "args": {**_OK, "step": MAX_STEP - 2, "warmup_steps": MAX_STEP - 1, "total_steps": MAX_STEP},
    },
    {"why": "shortest schedule", "args": {**_OK, "step": 1, "warmup_steps": 1, "total_steps": 2}},
    {"why": "final equals peak", "args": {**_OK, "step": 50, "peak_lr": 1.0, "final_lr": 1.0}},
]
