# Like optax: clip the integer count into the decay window first, then a cosine of the fraction done.
import jax.numpy as jnp


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    decay_steps = total_steps - warmup_steps
    count = jnp.clip(step - warmup_steps, 0, decay_steps).astype(jnp.float32)
    cosine = 0.5 * (1.0 + jnp.cos(jnp.pi * count / decay_steps))
    decayed = (peak_lr - final_lr) * cosine + final_lr
    warm = peak_lr * (step.astype(jnp.float32) / warmup_steps)
    return jnp.where(step < warmup_steps, warm, decayed)
