import jax.numpy as jnp


def rotary_embedding(x, positions):
    """Rotate each pair (x[..., i], x[..., i + D/2]) of every head by the angle positions[t] * theta_i.

    x: (T, H, D), float32 or bfloat16; positions: a traced int32 array of shape (T,).
    theta_i = 10000 ** (-2 i / D) for i = 0 .. D/2 - 1. Return an array like x.
    """
    # TODO: compute the float32 angles, their cos and sin, and rotate the two halves of x.
    return jnp.asarray(x)
