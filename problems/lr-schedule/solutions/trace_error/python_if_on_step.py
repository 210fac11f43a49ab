# A Python `if` on the traced step: under jax.jit its value is unknown.
import math


def lr_schedule(step, peak_lr, final_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return peak_lr * step / warmup_steps
    p = min((step - warmup_steps) / (total_steps - warmup_steps), 1.0)
    return final_lr + (peak_lr - final_lr) * 0.5 * (1.0 + math.cos(math.pi * p))
