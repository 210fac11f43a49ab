"""Mistake: Integer division

Integer division in the warmup: step // warmup_steps is 0 for every warmup step.
"""
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    warm = peak_lr * (step // warmup_steps)
    s = step.astype(jnp.float32)
    p = jnp.clip((s - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    decay = final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * p))
    return jnp.where(step < warmup_steps, warm, decay).astype(jnp.float32)
