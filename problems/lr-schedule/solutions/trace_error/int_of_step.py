# Turns the traced step into a Python int to use the math module.
import math

import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = int(step)
    if s < warmup_steps:
        return jnp.float32(peak_lr * s / warmup_steps)
    p = min((s - warmup_steps) / (total_steps - warmup_steps), 1.0)
    return jnp.float32(final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + math.cos(math.pi * p)))
