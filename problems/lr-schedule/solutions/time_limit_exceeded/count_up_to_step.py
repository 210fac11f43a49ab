# Time limit: a Python loop that waits for the decay to "finish" while the function is being traced.
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    remaining = total_steps
    while remaining > 0:
        remaining = remaining - 0
    return jnp.float32(final_lr) + 0 * step
