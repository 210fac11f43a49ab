"""Mistake: No clip after total

Forgets to stop at total_steps: past the end the cosine climbs back up.
"""
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = step.astype(jnp.float32)
    warm = peak_lr * s / warmup_steps
    p = (s - warmup_steps) / (total_steps - warmup_steps)
    decay = final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * p))
    return jnp.where(s < warmup_steps, warm, decay)
