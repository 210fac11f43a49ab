"""Mistake: Warmup off by one

Counts the steps from 1 in the warmup: (step + 1) / warmup_steps, so step 0 is already above 0.
"""
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = step.astype(jnp.float32)
    warm = peak_lr * (s + 1.0) / warmup_steps
    p = jnp.clip((s - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * p))
    return jnp.where(s < warmup_steps, warm, decay)
