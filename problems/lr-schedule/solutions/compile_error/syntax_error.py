# A missing closing parenthesis: the file does not parse.
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    s = step.astype(jnp.float32
    return peak_lr * s / warmup_steps
