"""Each pair as a complex number a + ib, multiplied by exp(i * angle) (complex64), frequencies by exp/log."""
import jax
import jax.numpy as jnp


def rotary_embedding(x, positions):
    half = x.shape[-1] // 2
    theta = jnp.exp(jnp.arange(half, dtype=jnp.float32) * (-2.0 * jnp.log(10000.0) / x.shape[-1]))
    angles = positions.astype(jnp.float32)[:, None, None] * theta
    z = jax.lax.complex(x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32))
    turned = z * jnp.exp(1j * angles.astype(jnp.complex64))
    return jnp.concatenate([turned.real, turned.imag], axis=-1).astype(x.dtype)
