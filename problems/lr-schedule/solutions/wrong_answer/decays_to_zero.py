"""Mistake: Decays to zero

Ignores final_lr: the cosine always ends at 0.
"""
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = step.astype(jnp.float32)
    warm = peak_lr * s / warmup_steps
    p = jnp.clip((s - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    return jnp.where(s < warmup_steps, warm, peak_lr * 0.5 * (1.0 + jnp.cos(jnp.pi * p)))
