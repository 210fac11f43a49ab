# jax.lax.cond on the traced step picks the branch; only one branch runs.
import jax
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = step.astype(jnp.float32)

    def warm(s):
        return peak_lr * s / warmup_steps

    def decay(s):
        p = jnp.minimum((s - warmup_steps) / (total_steps - warmup_steps), 1.0)
        return final_lr + (peak_lr - final_lr) * (1.0 + jnp.cos(jnp.pi * p)) / 2.0

    return jax.lax.cond(step < warmup_steps, warm, decay, s)
