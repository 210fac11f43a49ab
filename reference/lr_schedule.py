"""Reference for ``problems/lr-schedule``: linear warmup, then cosine decay, at a traced step."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp


def lr_schedule(step: Any, peak_lr: Any, final_lr: Any, warmup_steps: int, total_steps: int) -> Any:
    """The learning rate at ``step`` (a traced int32 0-d array) as a float32 0-d array.

    ``peak_lr * step / warmup_steps`` while ``step < warmup_steps``; then a half cosine from ``peak_lr``
    down to ``final_lr`` over ``total_steps - warmup_steps`` steps; ``final_lr`` from ``total_steps`` on.
    ``warmup_steps`` and ``total_steps`` are static Python ints; ``peak_lr`` and ``final_lr`` arrive as
    Python floats (weakly typed), so the result is float32, the dtype of the float step.
    """
    s = step.astype(jnp.float32)
    warm = peak_lr * s / warmup_steps
    progress = jnp.clip((s - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
    return jnp.where(s < warmup_steps, warm, decay)
