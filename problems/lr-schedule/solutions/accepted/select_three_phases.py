# Three phases (warmup, decay, after the end) chosen with jnp.select; the statics shape Python constants.
import math

import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = jnp.float32(1.0) * step
    span = float(total_steps - warmup_steps)
    angle = (s - warmup_steps) * (math.pi / span)
    decay = final_lr + 0.5 * (peak_lr - final_lr) * (1.0 + jnp.cos(jnp.minimum(angle, math.pi)))
    return jnp.select(
        [step < warmup_steps, step < total_steps],
        [s * (peak_lr / warmup_steps), decay],
        jnp.float32(final_lr),
    ).astype(jnp.float32)
