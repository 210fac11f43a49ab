"""Mistake: Returns shape one

Returns the rate with a shape of (1,) instead of a 0-d array.
"""
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = jnp.reshape(step, (1,)).astype(jnp.float32)
    warm = peak_lr * s / warmup_steps
    p = jnp.clip((s - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * p))
    return jnp.where(s < warmup_steps, warm, decay)
