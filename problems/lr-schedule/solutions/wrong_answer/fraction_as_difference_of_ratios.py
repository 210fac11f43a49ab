"""Mistake: Computes the decay fraction as s / (T - W) - W / (T - W)

The two ratios are equal to (s - W) / (T - W) in exact arithmetic, but each rounds at its own size: late in
a long schedule with a short decay (W near 10^7, T - W = 10) both are near 10^6, where float32 keeps
steps of 1/16, and their difference loses the fraction. Subtract first, exactly in float32 for steps below
2^24: (s - W) / (T - W).
"""
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = step.astype(jnp.float32)
    span = total_steps - warmup_steps
    progress = jnp.clip(s / span - warmup_steps / span, 0.0, 1.0)
    decay = final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + jnp.cos(jnp.pi * progress))
    return jnp.where(s < warmup_steps, peak_lr * s / warmup_steps, decay)
